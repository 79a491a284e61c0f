//! Resolving tool path arguments as pi does: a leading `@` is stripped, `~` expands to the home
//! directory, and relative paths are relative to the working directory.

use std::path::{Path, PathBuf};

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
}
