//! Turning command-line messages, `@file` arguments and piped stdin into the prompts of a run,
//! as pi does: file text is inlined as `<file name="ABS">…</file>`, stdin is prepended to the
//! first prompt, and each remaining message becomes its own prompt.

use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("File not found: {0}")]
    NotFound(String),
    #[error("Cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{0} is not a text file (images in @file arguments are not supported yet)")]
    NotText(String),
}

/// Inline one `@file` argument.
fn inline_file(arg: &str, cwd: &Path) -> Result<String, InputError> {
    let path = crate::tools::path::resolve(cwd, arg);
    if !path.exists() {
        return Err(InputError::NotFound(arg.to_string()));
    }
    let bytes = std::fs::read(&path).map_err(|source| InputError::Read {
        path: path.display().to_string(),
        source,
    })?;
    let text =
        String::from_utf8(bytes).map_err(|_| InputError::NotText(path.display().to_string()))?;
    Ok(format!(
        "<file name=\"{}\">\n{}\n</file>\n",
        path.display(),
        text
    ))
}

/// The prompts of a run, in order.
pub fn build_prompts(
    messages: &[String],
    stdin: Option<String>,
    cwd: &Path,
) -> Result<Vec<String>, InputError> {
    let mut files = String::new();
    let mut texts = Vec::new();
    for m in messages {
        if m.starts_with('@') && m.len() > 1 {
            files.push_str(&inline_file(m, cwd)?);
        } else {
            texts.push(m.clone());
        }
    }
    let mut first = files;
    if let Some(first_text) = texts.first() {
        first.push_str(first_text);
    }
    if let Some(s) = stdin.filter(|s| !s.trim().is_empty()) {
        first = if first.is_empty() {
            s
        } else {
            format!("{}\n\n{}", s.trim_end(), first)
        };
    }
    let mut prompts = Vec::new();
    if !first.is_empty() {
        prompts.push(first);
    }
    prompts.extend(texts.into_iter().skip(1));
    Ok(prompts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_inlined_into_the_first_prompt() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "AAA").unwrap();
        let p = build_prompts(
            &["@a.txt".into(), "explain".into(), "then more".into()],
            None,
            dir.path(),
        )
        .unwrap();
        assert_eq!(p.len(), 2);
        assert!(p[0].starts_with("<file name=\""));
        assert!(p[0].contains("a.txt\">\nAAA\n</file>\nexplain"));
        assert_eq!(p[1], "then more");
    }

    #[test]
    fn stdin_is_prepended_to_the_first_prompt() {
        let p = build_prompts(
            &["summarise".into()],
            Some("log line\n".into()),
            Path::new("/"),
        )
        .unwrap();
        assert_eq!(p, vec!["log line\n\nsummarise".to_string()]);
        let only = build_prompts(&[], Some("just stdin".into()), Path::new("/")).unwrap();
        assert_eq!(only, vec!["just stdin".to_string()]);
    }

    #[test]
    fn missing_file_is_an_error() {
        let e = build_prompts(&["@nope.txt".into()], None, Path::new("/")).unwrap_err();
        assert_eq!(e.to_string(), "File not found: @nope.txt");
    }
}
