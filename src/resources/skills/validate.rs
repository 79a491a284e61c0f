//! Turns one candidate file into a skill, with pi's lenient validation (seeds 3.5–3.6): rule
//! violations are warnings and the skill still loads, except that a skill needs a non-blank
//! string `description`, because the description is what the model routes on. A declared
//! `SKILL.md` that is unusable says why; a plain `.md` without a description (or with broken
//! YAML) is just not a skill and is skipped silently.

use std::path::Path;

use super::frontmatter;
use super::{Diagnostic, Skill, SkillOrigin};

const MAX_NAME_CHARS: usize = 64;
const MAX_DESCRIPTION_CHARS: usize = 1024;
const MAX_COMPATIBILITY_CHARS: usize = 500;

/// Reads and checks one file. The body is parsed only to reach the frontmatter and is dropped.
pub(super) fn load_skill_file(
    path: &Path,
    origin: &SkillOrigin,
) -> (Option<Skill>, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let declared = path.file_name().is_some_and(|n| n == "SKILL.md");
    let raw = match std::fs::read(path) {
        // pi reads as UTF-8 with replacement characters; a skill is not rejected for one byte.
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => {
            diags.push(Diagnostic::warning(path, e.to_string()));
            return (None, diags);
        }
    };
    let fm = match frontmatter::parse(&raw) {
        Ok(doc) => doc.frontmatter,
        Err(e) => {
            if declared {
                diags.push(Diagnostic::warning(path, e.to_string()));
            }
            return (None, diags);
        }
    };
    let description = fm.description.filter(|d| !d.trim().is_empty());
    if !declared && description.is_none() {
        return (None, diags);
    }

    let base_dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
    // An empty or non-string name falls back to the directory name; pi does not require the
    // two to match (unlike the Agent Skills spec).
    let name = fm.name.filter(|n| !n.is_empty()).unwrap_or_else(|| {
        base_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    });

    let mut messages = description_problems(description.as_deref());
    messages.extend(name_problems(&name));
    if let Some(c) = &fm.compatibility {
        let n = c.chars().count();
        if n > MAX_COMPATIBILITY_CHARS {
            messages.push(format!(
                "compatibility exceeds {MAX_COMPATIBILITY_CHARS} characters ({n})"
            ));
        }
    }
    diags.extend(messages.into_iter().map(|m| Diagnostic::warning(path, m)));

    let Some(description) = description else {
        return (None, diags);
    };
    let skill = Skill {
        name,
        description,
        file_path: path.to_path_buf(),
        base_dir,
        origin: origin.clone(),
        disable_model_invocation: fm.disable_model_invocation,
    };
    (Some(skill), diags)
}

fn description_problems(description: Option<&str>) -> Vec<String> {
    match description {
        None => vec!["description is required".to_string()],
        Some(d) => {
            let n = d.chars().count();
            if n > MAX_DESCRIPTION_CHARS {
                vec![format!(
                    "description exceeds {MAX_DESCRIPTION_CHARS} characters ({n})"
                )]
            } else {
                Vec::new()
            }
        }
    }
}

/// pi's messages, in pi's order; a name can break several rules at once.
pub(super) fn name_problems(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let n = name.chars().count();
    if n > MAX_NAME_CHARS {
        out.push(format!("name exceeds {MAX_NAME_CHARS} characters ({n})"));
    }
    let valid_chars = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !valid_chars {
        out.push(
            "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)"
                .to_string(),
        );
    }
    if name.starts_with('-') || name.ends_with('-') {
        out.push("name must not start or end with a hyphen".to_string());
    }
    if name.contains("--") {
        out.push("name must not contain consecutive hyphens".to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(dir: &Path, rel: &str, text: &str) -> (Option<Skill>, Vec<String>) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        let (skill, diags) = load_skill_file(&path, &SkillOrigin::User);
        (skill, diags.into_iter().map(|d| d.message).collect())
    }

    #[test]
    fn name_rules() {
        assert!(name_problems("good-name-2").is_empty());
        assert_eq!(
            name_problems("-Bad--"),
            vec![
                "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)",
                "name must not start or end with a hyphen",
                "name must not contain consecutive hyphens",
            ]
        );
        assert_eq!(
            name_problems(&"a".repeat(65)),
            vec!["name exceeds 64 characters (65)"]
        );
        assert!(name_problems(&"a".repeat(64)).is_empty());
    }

    #[test]
    fn name_defaults_to_the_directory_and_may_differ_from_it() {
        let t = tempfile::tempdir().unwrap();
        let (s, d) = load(t.path(), "my-dir/SKILL.md", "---\ndescription: d\n---\n");
        assert_eq!(s.unwrap().name, "my-dir");
        assert!(d.is_empty());
        let (s, d) = load(
            t.path(),
            "other/SKILL.md",
            "---\nname: chosen\ndescription: d\n---\n",
        );
        assert_eq!(s.unwrap().name, "chosen");
        assert!(d.is_empty());
    }

    #[test]
    fn declared_skill_without_description_warns_and_is_skipped() {
        let t = tempfile::tempdir().unwrap();
        let (s, d) = load(
            t.path(),
            "x/SKILL.md",
            "---\nname: x\ndescription: \"  \"\n---\n",
        );
        assert!(s.is_none());
        assert_eq!(d, vec!["description is required"]);
    }

    #[test]
    fn plain_markdown_without_description_or_with_bad_yaml_is_silently_not_a_skill() {
        let t = tempfile::tempdir().unwrap();
        assert_eq!(load(t.path(), "notes.md", "# just notes\n"), (None, vec![]));
        assert_eq!(
            load(t.path(), "bad.md", "---\na: [x\n---\n"),
            (None, vec![])
        );
    }

    #[test]
    fn broken_yaml_in_skill_md_warns() {
        let t = tempfile::tempdir().unwrap();
        let (s, d) = load(t.path(), "b/SKILL.md", "---\ndescription: [x\n---\n");
        assert!(s.is_none());
        assert_eq!(d.len(), 1);
        assert!(d[0].starts_with("invalid frontmatter YAML: "), "{d:?}");
    }

    #[test]
    fn length_limits_warn_but_still_load() {
        let t = tempfile::tempdir().unwrap();
        let text = format!(
            "---\ndescription: {}\ncompatibility: {}\n---\n",
            "d".repeat(1025),
            "c".repeat(501)
        );
        let (s, d) = load(t.path(), "long/SKILL.md", &text);
        assert!(s.is_some());
        assert_eq!(
            d,
            vec![
                "description exceeds 1024 characters (1025)",
                "compatibility exceeds 500 characters (501)",
            ]
        );
    }

    #[test]
    fn unreadable_file_warns() {
        let t = tempfile::tempdir().unwrap();
        let (s, d) = load_skill_file(&t.path().join("gone/SKILL.md"), &SkillOrigin::Cli);
        assert!(s.is_none());
        assert_eq!(d.len(), 1);
    }
}
