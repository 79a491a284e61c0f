//! `~/.pi/agent/mcp.log`: what MCP servers and pi's client said — connections, failures,
//! servers' stderr and log notifications — in one place a user can `tail`, because none of it
//! belongs on the terminal pi is drawing on. The file is rotated at 5 MB (the old one kept as
//! `mcp.log.1`), so a chatty server cannot fill the disk. Writing never fails the caller: a log
//! that cannot be written is dropped, with one warning through `tracing`.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Where the file is rotated.
pub const ROTATE_AT: u64 = 5 * 1024 * 1024;

/// A shared, rotating log file.
#[derive(Clone)]
pub struct McpLog {
    inner: Arc<Mutex<Inner>>,
}

struct Inner {
    path: PathBuf,
    file: Option<File>,
    size: u64,
    limit: u64,
    warned: bool,
}

impl McpLog {
    pub fn open(path: impl Into<PathBuf>) -> McpLog {
        McpLog::with_limit(path, ROTATE_AT)
    }

    /// A log that keeps nothing (tests, and runs without an agent directory).
    pub fn disabled() -> McpLog {
        McpLog::with_limit(PathBuf::new(), 0)
    }

    fn with_limit(path: impl Into<PathBuf>, limit: u64) -> McpLog {
        McpLog {
            inner: Arc::new(Mutex::new(Inner {
                path: path.into(),
                file: None,
                size: 0,
                limit,
                warned: false,
            })),
        }
    }

    pub fn path(&self) -> PathBuf {
        self.lock().path.clone()
    }

    /// One line: time, server, message (newlines inside become `⏎` so a line stays a line).
    pub fn line(&self, server: &str, message: &str) {
        let stamp = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ");
        let flat = message.trim_end().replace('\n', " ⏎ ");
        let line = format!("{stamp} [{server}] {flat}\n");
        self.lock().write(line.as_bytes());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Inner {
    fn write(&mut self, bytes: &[u8]) {
        if self.limit == 0 {
            return;
        }
        if let Err(e) = self.try_write(bytes) {
            self.file = None;
            if !self.warned {
                self.warned = true;
                tracing::warn!(path = %self.path.display(), error = %e, "cannot write the MCP log");
            }
        }
    }

    fn try_write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if self.file.is_none() {
            if let Some(dir) = self.path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let f = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)?;
            self.size = f.metadata()?.len();
            self.file = Some(f);
        }
        if self.size + bytes.len() as u64 > self.limit && self.size > 0 {
            self.file = None;
            std::fs::rename(&self.path, rotated(&self.path))?;
            let f = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)?;
            self.size = 0;
            self.file = Some(f);
        }
        if let Some(f) = self.file.as_mut() {
            f.write_all(bytes)?;
            self.size += bytes.len() as u64;
        }
        Ok(())
    }
}

/// `mcp.log` → `mcp.log.1`.
pub fn rotated(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".1");
    PathBuf::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_once_the_limit_is_reached_and_keeps_one_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent/mcp.log");
        let log = McpLog::with_limit(&path, 200);
        for i in 0..10 {
            log.line("srv", &format!("message number {i} with some padding"));
        }
        let now = std::fs::read_to_string(&path).unwrap();
        let old = std::fs::read_to_string(rotated(&path)).unwrap();
        assert!(now.len() <= 200 && old.len() <= 200, "{now:?} {old:?}");
        assert!(now.contains("message number 9"), "{now}");
        assert!(!now.contains("message number 0") && !old.contains("message number 0"));
        assert!(now.lines().all(|l| l.contains("[srv] message number")));
    }

    #[test]
    fn a_multi_line_message_stays_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.log");
        McpLog::open(&path).line("s", "first\nsecond\n");
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains("first ⏎ second"));
    }

    #[test]
    fn an_unwritable_log_is_dropped_without_failing() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-dir");
        std::fs::write(&file, "x").unwrap();
        let log = McpLog::open(file.join("mcp.log"));
        log.line("s", "lost");
        log.line("s", "lost again");
    }
}
