//! The prompt history file of one project: `<agent dir>/history/--<cwd>--.jsonl`, the working
//! directory encoded as session directories are, one `{"text": …}` object per line, newest
//! last. Several pi processes in one project share the file, so it is only ever appended to
//! (under an exclusive lock, on a fresh line even after a torn write); the one exception,
//! trimming a file grown past twice the bound back to the bound, happens under the same lock
//! and re-reads first, so no entry another process appended is lost. Reading never fails the
//! editor: problems come back as [`HistoryError`]s to show once.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::session::paths::encode_cwd;

/// Entries kept (in memory, and in the file after a trim).
pub const MAX_ENTRIES: usize = 1000;
/// The file is trimmed once it holds more than this many entries.
const TRIM_AT: usize = 2 * MAX_ENTRIES;
/// Only this much of the end of the file is read, whatever its size.
const MAX_READ_BYTES: u64 = 8 << 20;
/// Longer submissions (a huge paste) are kept for this session only, not written.
pub const MAX_PERSISTED_BYTES: usize = 64 << 10;

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("prompt history {}: cannot read it ({source}); starting with an empty history", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("prompt history {}: not a regular file; starting with an empty history", path.display())]
    NotAFile { path: PathBuf },
    #[error("prompt history {}: skipped {count} unreadable line(s), the first at line {first}", path.display())]
    Corrupt {
        path: PathBuf,
        count: usize,
        first: usize,
    },
    #[error("prompt history {}: cannot save to it ({source}); history is kept for this session only", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

#[derive(Serialize, Deserialize)]
struct Record {
    text: String,
}

/// Where the history of the project at `cwd` lives.
pub fn history_path(agent_dir: &Path, cwd: &str) -> PathBuf {
    agent_dir
        .join("history")
        .join(format!("{}.jsonl", encode_cwd(cwd)))
}

/// What loading found: the newest entries (oldest first) and what went wrong.
#[derive(Debug, Default)]
pub struct Loaded {
    pub entries: Vec<String>,
    pub problems: Vec<HistoryError>,
}

/// Read the history at `path`; a missing file is an empty history. Trims the file when it has
/// grown past twice the bound.
pub fn load(path: &Path) -> Loaded {
    let mut loaded = Loaded::default();
    let bytes = match read_tail(path) {
        Ok(Some(b)) => b,
        Ok(None) => return loaded,
        Err(problem) => {
            loaded.problems.push(problem);
            return loaded;
        }
    };
    let parsed = parse(&bytes.data);
    if parsed.corrupt > 0 {
        loaded.problems.push(HistoryError::Corrupt {
            path: path.to_path_buf(),
            count: parsed.corrupt,
            first: parsed.first_corrupt + bytes.skipped_lines,
        });
    }
    if parsed.entries.len() > TRIM_AT || bytes.skipped_lines > 0 {
        // Best effort: a file that cannot be trimmed still works, it is just read in part.
        let _ = trim(path);
    }
    let mut entries = parsed.entries;
    // Two processes may each have stored the same prompt one after the other.
    entries.dedup();
    let excess = entries.len().saturating_sub(MAX_ENTRIES);
    entries.drain(..excess);
    loaded.entries = entries;
    loaded
}

struct Tail {
    data: Vec<u8>,
    /// Lines before the part read (the first partial line included), for line numbers.
    skipped_lines: usize,
}

fn read_tail(path: &Path) -> Result<Option<Tail>, HistoryError> {
    let read_err = |source| HistoryError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut file = match open_regular(path, false) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
            return Err(HistoryError::NotAFile {
                path: path.to_path_buf(),
            })
        }
        Err(e) => return Err(read_err(e)),
    };
    let len = file.metadata().map_err(read_err)?.len();
    let from = len.saturating_sub(MAX_READ_BYTES);
    file.seek(SeekFrom::Start(from)).map_err(read_err)?;
    let mut data = Vec::new();
    file.take(MAX_READ_BYTES)
        .read_to_end(&mut data)
        .map_err(read_err)?;
    let mut skipped_lines = 0;
    if from > 0 {
        // Drop the line the cut fell into; its start is not here.
        let cut = data
            .iter()
            .position(|&b| b == b'\n')
            .map_or(data.len(), |i| i + 1);
        data.drain(..cut);
        skipped_lines = 1;
    }
    Ok(Some(Tail {
        data,
        skipped_lines,
    }))
}

/// Opens `path` if it is a regular file, without blocking on a FIFO swapped in. Anything
/// else is `InvalidInput`.
fn open_regular(path: &Path, write: bool) -> std::io::Result<File> {
    let meta = fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::ErrorKind::InvalidInput.into());
    }
    let file = OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::ErrorKind::InvalidInput.into());
    }
    Ok(file)
}

struct Parsed {
    entries: Vec<String>,
    corrupt: usize,
    first_corrupt: usize,
}

fn parse(data: &[u8]) -> Parsed {
    let mut p = Parsed {
        entries: Vec::new(),
        corrupt: 0,
        first_corrupt: 0,
    };
    for (i, line) in data.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Record>(line) {
            Ok(r) => p.entries.push(r.text),
            Err(_) => {
                if p.corrupt == 0 {
                    p.first_corrupt = i + 1;
                }
                p.corrupt += 1;
            }
        }
    }
    p
}

/// The file's identity, to notice that a trim replaced it while we waited for the lock.
fn same_file(file: &File, path: &Path) -> bool {
    match (file.metadata(), fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Append one entry. Takes the file lock so a concurrent trim cannot drop it, and starts a
/// fresh line if the file ends in a torn one.
pub fn append(path: &Path, text: &str) -> Result<(), HistoryError> {
    let write_err = |source| HistoryError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut line = serde_json::to_vec(&Record {
        text: text.to_string(),
    })
    .map_err(|e| write_err(e.into()))?;
    line.push(b'\n');
    if let Some(dir) = path.parent() {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(write_err)?;
    }
    // A trim can replace the file between open and lock; then the write would go to the
    // unlinked old file, so open again. A few tries are plenty: trims are rare.
    for _ in 0..3 {
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
            .open(path)
            .map_err(write_err)?;
        if !file.metadata().map_err(write_err)?.is_file() {
            return Err(write_err(std::io::ErrorKind::InvalidInput.into()));
        }
        // Without lock support (some network file systems) an O_APPEND write of one line is
        // still the best there is.
        let locked = file.lock().is_ok();
        if locked && !same_file(&file, path) {
            continue;
        }
        let mut out = Vec::with_capacity(line.len() + 1);
        if ends_in_torn_line(&mut file).map_err(write_err)? {
            out.push(b'\n');
        }
        out.extend_from_slice(&line);
        return file.write_all(&out).map_err(write_err);
    }
    Err(write_err(std::io::Error::other(
        "the file kept being replaced",
    )))
}

fn ends_in_torn_line(file: &mut File) -> std::io::Result<bool> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(false);
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

/// Rewrite the file with only its newest `MAX_ENTRIES` entries, under the lock, replacing it
/// atomically (a reader sees the old file or the new one).
fn trim(path: &Path) -> std::io::Result<()> {
    let file = open_regular(path, true)?;
    file.lock()?;
    if !same_file(&file, path) {
        return Ok(());
    }
    let tail = read_tail(path).map_err(|e| std::io::Error::other(e.to_string()))?;
    let Some(tail) = tail else { return Ok(()) };
    let parsed = parse(&tail.data);
    let keep = &parsed.entries[parsed.entries.len().saturating_sub(MAX_ENTRIES)..];
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    for text in keep {
        let mut line = serde_json::to_vec(&Record { text: text.clone() })?;
        line.push(b'\n');
        tmp.write_all(&line)?;
    }
    // NamedTempFile is created 0600, as the history (prompts can hold secrets) should be.
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    drop(file);
    Ok(())
}

#[cfg(test)]
#[path = "history_file_tests.rs"]
mod tests;
