//! Changing `auth.json` safely while the TypeScript pi may be changing it too.
//!
//! Every change is a read-modify-write of the whole object under a lock both programs honour:
//! pi 1.6 locks with `proper-lockfile`, which creates the directory `<real path>.lock` (mkdir is
//! atomic), treats one untouched for 30 s as abandoned, and removes it when done; [`AuthLock`]
//! does the same. The new contents go to a temporary file beside the real one (created 0600,
//! or with the existing file's mode, so an administrator's mode survives) and are renamed over
//! it, so a `kill -9` mid-write leaves the old file or the new one, never half of either.
//! Entries this version does not understand are carried over untouched.

use std::fs::{self, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Map, Value};

/// A lock directory untouched for this long was left by a process that died (pi 1.6's value).
const STALE_AFTER: Duration = Duration::from_secs(30);
/// How long a writer waits for another holder before giving up.
const WAIT_AT_MOST: Duration = Duration::from_secs(30);

#[derive(Debug, thiserror::Error)]
pub enum AuthStoreError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path} is locked by another pi (its lock {lock} is newer than 30 s); try again, or \
         remove the lock directory if no pi is running"
    )]
    Locked { path: PathBuf, lock: PathBuf },
    #[error("{path} is not valid: {message}; fix or remove it (nothing was written)")]
    Malformed { path: PathBuf, message: String },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> AuthStoreError + '_ {
    move |source| AuthStoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// `proper-lockfile`'s lock on one file, held until dropped.
#[derive(Debug)]
pub struct AuthLock {
    dir: PathBuf,
}

impl AuthLock {
    /// Locks `file` (its real path, so symlinked aliases share one lock), waiting for another
    /// holder up to 30 s and taking over a lock abandoned for longer than that.
    pub fn acquire(file: &Path) -> Result<AuthLock, AuthStoreError> {
        let dir = lock_dir(file);
        let deadline = Instant::now() + WAIT_AT_MOST;
        let mut delay = Duration::from_millis(10);
        loop {
            match fs::create_dir(&dir) {
                Ok(()) => return Ok(AuthLock { dir }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io(&dir)(e)),
            }
            if is_stale(&dir) {
                // Another waiter may take it over first; either way the next mkdir decides.
                let _ = fs::remove_dir(&dir);
                continue;
            }
            if Instant::now() >= deadline {
                return Err(AuthStoreError::Locked {
                    path: file.to_path_buf(),
                    lock: dir,
                });
            }
            std::thread::sleep(delay);
            delay = (delay * 2).min(Duration::from_secs(1));
        }
    }

    /// Marks the lock as still held (a holder doing slow work, such as a token refresh,
    /// touches it well within 30 s so no one takes it over).
    pub fn touch(&self) {
        let _ = filetime_now(&self.dir);
    }
}

impl Drop for AuthLock {
    fn drop(&mut self) {
        let _ = fs::remove_dir(&self.dir);
    }
}

fn lock_dir(file: &Path) -> PathBuf {
    let real = fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
    let mut name = real.into_os_string();
    name.push(".lock");
    PathBuf::from(name)
}

fn is_stale(dir: &Path) -> bool {
    let Ok(modified) = fs::metadata(dir).and_then(|m| m.modified()) else {
        return false;
    };
    SystemTime::now()
        .duration_since(modified)
        .is_ok_and(|age| age > STALE_AFTER)
}

fn filetime_now(dir: &Path) -> std::io::Result<()> {
    let f = fs::File::open(dir)?;
    f.set_modified(SystemTime::now())
}

/// Reads `auth.json` as a JSON object (a missing file is empty).
fn read_object(path: &Path) -> Result<Map<String, Value>, AuthStoreError> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(e) => return Err(io(path)(e)),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(AuthStoreError::Malformed {
            path: path.to_path_buf(),
            message: "expected a JSON object keyed by provider".into(),
        }),
        Err(e) => Err(AuthStoreError::Malformed {
            path: path.to_path_buf(),
            message: e.to_string(),
        }),
    }
}

/// Writes `bytes` to `path` by a rename from a temporary file beside it. The file keeps its
/// mode if it exists (an administrator's choice), else is created 0600.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), AuthStoreError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mode = fs::metadata(path)
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or(0o600);
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("auth.json");
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        f.set_permissions(fs::Permissions::from_mode(mode))?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(io(path))
}

/// Changes `auth.json` at `path` under the lock: `change` gets the current entries and says
/// whether it changed them; only then is the file rewritten. The directory is created 0700
/// when missing, as pi 1.6 does.
pub fn update<T>(
    path: &Path,
    change: impl FnOnce(&mut Map<String, Value>) -> (bool, T),
) -> Result<T, AuthStoreError> {
    let held = Held::lock(path)?;
    let mut entries = held.read()?;
    let (changed, out) = change(&mut entries);
    if changed {
        held.write(entries)?;
    }
    Ok(out)
}

/// `auth.json` locked for a change that takes a while (a token refresh over the network):
/// read, work, write, and the lock goes when this is dropped.
#[derive(Debug)]
pub struct Held {
    real: PathBuf,
    lock: AuthLock,
}

impl Held {
    /// Locks `path` (waiting as [`AuthLock::acquire`] does), creating its directory 0700.
    pub fn lock(path: &Path) -> Result<Held, AuthStoreError> {
        if let Some(dir) = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty() && !d.exists())
        {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(io(dir))?;
        }
        // Writes go to the file a symlink points at, so the link stays a link.
        let real = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let lock = AuthLock::acquire(&real)?;
        Ok(Held { real, lock })
    }

    /// The entries as they are now (a missing file is empty).
    pub fn read(&self) -> Result<Map<String, Value>, AuthStoreError> {
        read_object(&self.real)
    }

    /// Replaces the file's entries, atomically.
    pub fn write(&self, entries: Map<String, Value>) -> Result<(), AuthStoreError> {
        let mut text = serde_json::to_string_pretty(&Value::Object(entries)).unwrap_or_default();
        text.push('\n');
        write_atomic(&self.real, text.as_bytes())
    }

    /// Marks the lock as still held.
    pub fn touch(&self) {
        self.lock.touch();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_new_file_is_0600_and_unknown_entries_survive_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent/auth.json");
        update(&path, |m| {
            m.insert("groq".into(), json!({"type": "api_key", "key": "k1"}));
            (true, ())
        })
        .unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let parent = fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(parent, 0o700);
        fs::write(
            &path,
            r#"{"groq":{"type":"api_key","key":"k1"},"future":{"type":"passkey","x":[1]}}"#,
        )
        .unwrap();
        update(&path, |m| (m.remove("groq").is_some(), ())).unwrap();
        let left: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(left, json!({"future": {"type": "passkey", "x": [1]}}));
        assert!(!lock_dir(&path).exists(), "the lock is released");
    }

    #[test]
    fn an_administrators_mode_and_a_symlink_survive_a_rewrite() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        fs::write(&real, "{}").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("auth.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        update(&link, |m| {
            m.insert("a".into(), json!({"type": "api_key", "key": "k"}));
            (true, ())
        })
        .unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            fs::metadata(&real).unwrap().permissions().mode() & 0o777,
            0o640
        );
        assert!(fs::read_to_string(&real).unwrap().contains("\"a\""));
    }

    #[test]
    fn a_malformed_file_is_named_and_left_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.json");
        fs::write(&path, "{oops").unwrap();
        let err = update(&path, |_| (true, ())).unwrap_err();
        assert!(matches!(err, AuthStoreError::Malformed { .. }), "{err}");
        assert!(err.to_string().contains("auth.json"), "{err}");
        assert_eq!(fs::read_to_string(&path).unwrap(), "{oops");
    }

    #[test]
    fn concurrent_writers_lose_no_entry() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.json");
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let path = path.clone();
                std::thread::spawn(move || {
                    for j in 0..5 {
                        update(&path, |m| {
                            m.insert(format!("p{i}-{j}"), json!({"type": "api_key", "key": "k"}));
                            (true, ())
                        })
                        .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let all: Map<String, Value> =
            serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(all.len(), 40);
    }

    #[test]
    fn an_abandoned_lock_is_taken_over_and_a_live_one_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.json");
        fs::write(&path, "{}").unwrap();
        let lock = lock_dir(&path);
        fs::create_dir(&lock).unwrap();
        let old = SystemTime::now() - Duration::from_secs(60);
        fs::File::open(&lock).unwrap().set_modified(old).unwrap();
        update(&path, |_| (false, ())).unwrap();
        assert!(!lock.exists());

        let held = AuthLock::acquire(&path).unwrap();
        let p = path.clone();
        let waiter = std::thread::spawn(move || update(&p, |_| (false, "got it")).unwrap());
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiter.is_finished(), "a live lock is waited for");
        drop(held);
        assert_eq!(waiter.join().unwrap(), "got it");
    }
}
