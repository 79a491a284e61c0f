//! Resolving tool path arguments as pi does: a leading `@` is stripped, `~` expands to the home
//! directory, and relative paths are relative to the working directory. The `path` argument
//! itself is read here too, once for the tools that search a directory (ls, find, grep) and
//! once for those that need a file (read, edit), so they read it and word its errors alike.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::ToolError;

/// The optional `path` argument of ls, find and grep, resolved: absent or empty is the
/// working directory.
pub fn dir_arg(args: &Value, cwd: &Path) -> PathBuf {
    let raw = args
        .get("path")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or(".");
    resolve(cwd, raw)
}

/// The required `path` argument of `tool`, as given (notices quote it as the model wrote it).
pub fn file_arg<'a>(args: &'a Value, tool: &str) -> Result<&'a str, ToolError> {
    args.get("path")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::Failed(format!("{tool} requires a string `path`")))
}

/// What is at a searched path, or `Path not found: …` as ls, find and grep say it.
pub fn metadata_of(path: &Path) -> Result<std::fs::Metadata, ToolError> {
    std::fs::metadata(path)
        .map_err(|_| ToolError::Failed(format!("Path not found: {}", path.display())))
}

pub fn resolve(cwd: &Path, raw: &str) -> PathBuf {
    let s = raw.strip_prefix('@').unwrap_or(raw);
    let expanded = if s == "~" {
        dirs::home_dir().unwrap_or_else(|| PathBuf::from("~"))
    } else if let Some(rest) = s.strip_prefix("~/") {
        match dirs::home_dir() {
            Some(h) => h.join(rest),
            None => PathBuf::from(s),
        }
    } else {
        PathBuf::from(s)
    };
    if expanded.is_absolute() {
        expanded
    } else {
        cwd.join(expanded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_at_and_joins_cwd() {
        assert_eq!(resolve(Path::new("/p"), "@a/b"), PathBuf::from("/p/a/b"));
        assert_eq!(resolve(Path::new("/p"), "/abs"), PathBuf::from("/abs"));
    }

    #[test]
    fn a_missing_or_empty_directory_argument_is_the_working_directory() {
        let cwd = Path::new("/p");
        assert_eq!(dir_arg(&serde_json::json!({}), cwd), PathBuf::from("/p/."));
        assert_eq!(
            dir_arg(&serde_json::json!({"path": ""}), cwd),
            PathBuf::from("/p/.")
        );
        assert_eq!(
            dir_arg(&serde_json::json!({"path": "s"}), cwd),
            PathBuf::from("/p/s")
        );
    }

    #[test]
    fn a_missing_file_argument_names_the_tool() {
        let e = file_arg(&serde_json::json!({"path": 3}), "read").unwrap_err();
        assert_eq!(e.to_string(), "read requires a string `path`");
    }
}
