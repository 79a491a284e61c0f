//! Where session files live and how they are found.
//!
//! Layout (pi's): `<agent dir>/sessions/--<cwd>--/<ISO timestamp>_<session id>.jsonl`, where
//! `<cwd>` loses one leading separator and has `/`, `\` and `:` turned into `-`, and the
//! timestamp has `:` and `.` turned into `-`. `-c` takes the newest valid file (by mtime) in
//! the cwd's directory; `--session` accepts a path, an exact id or a unique id prefix.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::entry::Header;
use super::SessionError;

/// The sessions root: the override (`--session-dir`, settings) or `<agent dir>/sessions`.
pub fn sessions_dir(agent_dir: &Path, override_dir: Option<&Path>) -> PathBuf {
    match override_dir {
        Some(dir) => dir.to_path_buf(),
        None => agent_dir.join("sessions"),
    }
}

/// The directory name for a working directory: `/home/me/p` → `--home-me-p--`.
pub fn encode_cwd(cwd: &str) -> String {
    let trimmed = cwd
        .strip_prefix('/')
        .or_else(|| cwd.strip_prefix('\\'))
        .unwrap_or(cwd);
    let safe: String = trimmed
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    format!("--{safe}--")
}

/// The session directory of a working directory under a sessions root.
pub fn session_dir_for_cwd(sessions_dir: &Path, cwd: &str) -> PathBuf {
    sessions_dir.join(encode_cwd(cwd))
}

/// A session file name: `2025-01-02T03-04-05-678Z_<id>.jsonl`.
pub fn session_file_name(timestamp_iso: &str, id: &str) -> String {
    let ts: String = timestamp_iso
        .chars()
        .map(|c| if matches!(c, ':' | '.') { '-' } else { c })
        .collect();
    format!("{ts}_{id}.jsonl")
}

/// Reads just the header of a session file; `None` when the file's first line is not one.
/// The first line is read up to 1 MiB (pi reads 512 bytes, which misses long cwds).
pub fn read_header(path: &Path) -> Option<Header> {
    let file = File::open(path).ok()?;
    let mut line = Vec::new();
    BufReader::new(file.take(1 << 20))
        .read_until(b'\n', &mut line)
        .ok()?;
    let serde_json::Value::Object(map) = serde_json::from_slice(&line).ok()? else {
        return None;
    };
    Header::from_object(map)
}

/// A session file found in a directory.
#[derive(Debug, Clone)]
pub struct SessionFileInfo {
    pub path: PathBuf,
    pub header: Header,
    pub modified: SystemTime,
}

/// The valid session files (`*.jsonl` with a session header) in `dir`, newest first by
/// mtime. A missing directory lists nothing.
pub fn list_session_files(dir: &Path) -> Vec<SessionFileInfo> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<SessionFileInfo> = read
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
        .filter_map(|path| {
            let header = read_header(&path)?;
            let modified = std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            Some(SessionFileInfo {
                path,
                header,
                modified,
            })
        })
        .collect();
    out.sort_by(|a, b| b.modified.cmp(&a.modified).then(b.path.cmp(&a.path)));
    out
}

/// The newest valid session file in `dir` (what `-c` continues).
pub fn newest_session(dir: &Path) -> Option<PathBuf> {
    list_session_files(dir).into_iter().next().map(|i| i.path)
}

/// The session id in a file name `<timestamp>_<id>.jsonl` (timestamps contain no `_`).
fn id_from_file_name(path: &Path) -> Option<&str> {
    let name = path.file_name()?.to_str()?.strip_suffix(".jsonl")?;
    name.split_once('_').map(|(_, id)| id)
}

/// Resolves `--session <arg>`. A path-like argument (a separator or `.jsonl`) is returned as
/// given, existing or not: pi starts a new session at a path that does not exist yet.
/// Otherwise `arg` is a session id or id prefix, looked up in `preferred_dir` (this cwd's
/// directory) first, then in every directory under `sessions_dir`; an exact id wins over
/// prefixes, and several prefix matches are an error listing them.
pub fn find_session(
    sessions_dir: &Path,
    preferred_dir: Option<&Path>,
    arg: &str,
) -> Result<PathBuf, SessionError> {
    if arg.contains('/') || arg.contains(std::path::MAIN_SEPARATOR) || arg.ends_with(".jsonl") {
        return Ok(PathBuf::from(arg));
    }
    if arg.is_empty() {
        return Err(SessionError::NoMatch(arg.to_string()));
    }
    let mut dirs: Vec<PathBuf> = preferred_dir.map(Path::to_path_buf).into_iter().collect();
    if let Ok(read) = std::fs::read_dir(sessions_dir) {
        let mut others: Vec<PathBuf> = read
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir() && Some(p.as_path()) != preferred_dir)
            .collect();
        others.sort();
        dirs.extend(others);
    }
    let mut prefix_matches = Vec::new();
    for dir in &dirs {
        let Ok(read) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = read.filter_map(Result::ok).map(|e| e.path()).collect();
        files.sort();
        for path in files {
            let Some(id) = id_from_file_name(&path) else {
                continue;
            };
            if id == arg {
                return Ok(path);
            }
            if id.starts_with(arg) {
                prefix_matches.push(path);
            }
        }
    }
    match prefix_matches.len() {
        0 => Err(SessionError::NoMatch(arg.to_string())),
        1 => Ok(prefix_matches.remove(0)),
        _ => Err(SessionError::Ambiguous {
            query: arg.to_string(),
            matches: prefix_matches,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwd_encoding_matches_pi() {
        assert_eq!(encode_cwd("/home/me/proj"), "--home-me-proj--");
        assert_eq!(encode_cwd("C:\\Users\\me"), "--C--Users-me--");
        assert_eq!(encode_cwd("\\\\server\\share"), "---server-share--");
        assert_eq!(encode_cwd("/"), "----");
    }

    #[test]
    fn file_names_replace_colons_and_dots() {
        assert_eq!(
            session_file_name("2025-01-02T03:04:05.678Z", "0194-ab"),
            "2025-01-02T03-04-05-678Z_0194-ab.jsonl"
        );
    }

    #[test]
    fn sessions_dir_honours_the_override() {
        let a = Path::new("/a");
        assert_eq!(sessions_dir(a, None), Path::new("/a/sessions"));
        assert_eq!(sessions_dir(a, Some(Path::new("/o"))), Path::new("/o"));
    }

    fn write(dir: &Path, name: &str, id: &str) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let p = dir.join(name);
        std::fs::write(
            &p,
            format!("{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"t\",\"cwd\":\"/w\"}}\n"),
        )
        .unwrap();
        p
    }

    #[test]
    fn newest_session_skips_invalid_files_and_uses_mtime() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let old = write(d, "2025-01-01T00-00-00-000Z_a.jsonl", "a");
        let new = write(d, "2025-01-02T00-00-00-000Z_b.jsonl", "b");
        std::fs::write(d.join("2025-01-03T00-00-00-000Z_c.jsonl"), "garbage\n").unwrap();
        let t0 = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        let t1 = t0 + std::time::Duration::from_secs(10);
        File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(t1)
            .unwrap();
        File::options()
            .write(true)
            .open(&new)
            .unwrap()
            .set_modified(t0)
            .unwrap();
        assert_eq!(newest_session(d), Some(old));
        assert_eq!(list_session_files(d).len(), 2);
        assert_eq!(newest_session(&d.join("missing")), None);
    }

    #[test]
    fn find_by_path_exact_id_and_unique_prefix() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let here = root.join("--w--");
        let a = write(
            &here,
            "2025-01-01T00-00-00-000Z_0194aaaa-1.jsonl",
            "0194aaaa-1",
        );
        let b = write(
            &root.join("--x--"),
            "2025-01-01T00-00-00-000Z_0194bbbb-2.jsonl",
            "0194bbbb-2",
        );
        assert_eq!(find_session(root, Some(&here), "0194aaaa-1").unwrap(), a);
        assert_eq!(find_session(root, Some(&here), "0194bb").unwrap(), b);
        assert!(matches!(
            find_session(root, Some(&here), "0194"),
            Err(SessionError::Ambiguous { .. })
        ));
        assert!(matches!(
            find_session(root, Some(&here), "ffff"),
            Err(SessionError::NoMatch(_))
        ));
        assert_eq!(
            find_session(root, None, "x/y.jsonl").unwrap(),
            PathBuf::from("x/y.jsonl")
        );
    }
}
