//! Tab completion of a path-like word against the file system, as a shell does it: the word
//! is extended to the longest prefix every match shares, and when that leaves a choice the
//! matches are listed. Directories get a trailing `/` so the next Tab goes inside. A word is
//! path-like when it has a `/` or starts with `.` or `~`; `~/` is the home directory for the
//! lookup but stays `~/` in the text.

use std::path::{Path, PathBuf};

/// Entries read from one directory at most (a directory of a million files must not stall a
/// keystroke).
const MAX_ENTRIES_READ: usize = 5_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathCompletion {
    /// What the word becomes: the single match, or the matches' common prefix.
    pub word: String,
    /// Every match as a whole word, sorted; one element when the match is unique.
    pub candidates: Vec<String>,
}

pub fn looks_like_path(word: &str) -> bool {
    word.contains('/') || word.starts_with('.') || word.starts_with('~')
}

/// Complete `word` relative to `cwd`. `None` when nothing matches or the directory cannot be
/// read.
pub fn complete(word: &str, cwd: &Path, home: Option<&Path>) -> Option<PathCompletion> {
    let (dir_part, base) = match word.rfind('/') {
        Some(i) => word.split_at(i + 1),
        None if word == "~" => ("~/", ""),
        None => ("", word),
    };
    let dir = resolve_dir(dir_part, cwd, home)?;
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .ok()?
        .take(MAX_ENTRIES_READ)
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            if !name.starts_with(base) || (name.starts_with('.') && !base.starts_with('.')) {
                return None;
            }
            // `metadata` follows symlinks: a link to a directory completes like one.
            let is_dir = std::fs::metadata(e.path()).is_ok_and(|m| m.is_dir());
            Some(if is_dir { format!("{name}/") } else { name })
        })
        .collect();
    names.sort();
    let first = names.first()?;
    let common = names
        .iter()
        .fold(first.as_str(), |acc, n| common_prefix(acc, n))
        .to_string();
    Some(PathCompletion {
        word: format!("{dir_part}{common}"),
        candidates: names.iter().map(|n| format!("{dir_part}{n}")).collect(),
    })
}

fn resolve_dir(dir_part: &str, cwd: &Path, home: Option<&Path>) -> Option<PathBuf> {
    if let Some(rest) = dir_part.strip_prefix("~/") {
        return Some(home?.join(rest));
    }
    if dir_part.is_empty() {
        return Some(cwd.to_path_buf());
    }
    Some(cwd.join(dir_part))
}

fn common_prefix<'a>(a: &'a str, b: &str) -> &'a str {
    let mut end = 0;
    for ((i, ca), cb) in a.char_indices().zip(b.chars()) {
        if ca != cb {
            break;
        }
        end = i + ca.len_utf8();
    }
    &a[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for d in ["src/modes", "src/models", "docs"] {
            fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        for f in ["src/main.rs", "README.md", ".env", "docs/é-notes.md"] {
            fs::write(dir.path().join(f), "").unwrap();
        }
        dir
    }

    #[test]
    fn a_unique_match_completes_fully_and_directories_get_a_slash() {
        let dir = tree();
        let c = complete("./RE", dir.path(), None).unwrap();
        assert_eq!(c.word, "./README.md");
        assert_eq!(c.candidates, ["./README.md"]);
        let c = complete("do", dir.path(), None).unwrap();
        assert_eq!(
            c.word, "docs/",
            "a bare name completes in the working directory"
        );
    }

    #[test]
    fn an_ambiguous_prefix_extends_to_the_common_part_and_lists_the_matches() {
        let dir = tree();
        let c = complete("src/mo", dir.path(), None).unwrap();
        assert_eq!(c.word, "src/mode");
        assert_eq!(c.candidates, ["src/models/", "src/modes/"]);
    }

    #[test]
    fn hidden_entries_need_a_leading_dot() {
        let dir = tree();
        let all = complete("./", dir.path(), None).unwrap();
        assert!(!all.candidates.contains(&"./.env".to_string()));
        assert_eq!(complete("./.e", dir.path(), None).unwrap().word, "./.env");
    }

    #[test]
    fn tilde_is_the_home_directory_but_stays_in_the_text() {
        let dir = tree();
        let c = complete("~/src/ma", Path::new("/nonexistent"), Some(dir.path())).unwrap();
        assert_eq!(c.word, "~/src/main.rs");
        assert_eq!(complete("~/x", dir.path(), None), None, "no home known");
    }

    #[test]
    fn absolute_paths_and_non_ascii_names() {
        let dir = tree();
        let word = format!("{}/docs/é", dir.path().display());
        let c = complete(&word, Path::new("/"), None).unwrap();
        assert!(c.word.ends_with("/docs/é-notes.md"), "{}", c.word);
    }

    #[test]
    fn nothing_matching_or_an_unreadable_directory_is_none() {
        let dir = tree();
        assert_eq!(complete("src/zz", dir.path(), None), None);
        assert_eq!(complete("nope/x", dir.path(), None), None);
    }

    #[test]
    fn path_like_words() {
        for w in ["./a", "src/", "~/x", "~", "../up", "/etc"] {
            assert!(looks_like_path(w), "{w}");
        }
        for w in ["hello", "@file", "a.b"] {
            assert!(!looks_like_path(w), "{w}");
        }
    }
}
