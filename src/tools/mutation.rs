//! Per-file mutation queue: edits and writes to the same file run one at a time, keyed by the
//! canonical path, so parallel tool calls cannot interleave a read-modify-write. Hooks take
//! the same locks (`tools.with_file_lock`), so a hook tool's read-modify-write and a built-in
//! `edit` of one file cannot race either.
//!
//! A lock may have an *owner* (a hook's name): while a hook holds a file, a tool it runs
//! itself through `tools.execute` re-enters that file's lock instead of waiting for it, since
//! waiting would be waiting on its own caller.
//!
//! The queue itself waits as long as it must; a tool waits through `ToolContext::lock_file`,
//! which gives up as soon as its call is cancelled, so no lock — a hook may hold one for
//! minutes — keeps an abort or a signal waiting.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::sync::OwnedMutexGuard;

struct PathLock {
    mutex: Arc<tokio::sync::Mutex<()>>,
    /// Who holds `mutex` now, when an owner took it.
    holder: Mutex<Option<String>>,
}

#[derive(Default)]
pub struct MutationQueue {
    locks: Mutex<HashMap<PathBuf, Arc<PathLock>>>,
}

/// Exclusive access to one file until dropped.
pub struct FileGuard {
    held: Option<(OwnedMutexGuard<()>, Arc<PathLock>)>,
}

impl Drop for FileGuard {
    fn drop(&mut self) {
        if let Some((_, lock)) = &self.held {
            *lock.holder.lock().unwrap_or_else(|p| p.into_inner()) = None;
        }
    }
}

/// The lock key of `path`: the real path when the file exists (so symlinks to one file share
/// a lock), else the absolute path as given.
pub fn lock_key(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

impl MutationQueue {
    fn entry(&self, path: &Path) -> Arc<PathLock> {
        let mut map = self.locks.lock().unwrap_or_else(|p| p.into_inner());
        map.entry(lock_key(path))
            .or_insert_with(|| {
                Arc::new(PathLock {
                    mutex: Arc::default(),
                    holder: Mutex::new(None),
                })
            })
            .clone()
    }

    /// Wait for exclusive access to `path`.
    pub async fn lock(&self, path: &Path) -> FileGuard {
        self.lock_as(path, None).await
    }

    /// Wait for exclusive access to `path` on behalf of `owner`. If `owner` holds the file
    /// already, the guard is a re-entry that waits for nothing and releases nothing.
    pub async fn lock_as(&self, path: &Path, owner: Option<&str>) -> FileGuard {
        let lock = self.entry(path);
        if let Some(o) = owner {
            let holder = lock.holder.lock().unwrap_or_else(|p| p.into_inner());
            if holder.as_deref() == Some(o) {
                return FileGuard { held: None };
            }
        }
        let guard = lock.mutex.clone().lock_owned().await;
        *lock.holder.lock().unwrap_or_else(|p| p.into_inner()) = owner.map(str::to_string);
        FileGuard {
            held: Some((guard, lock)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn same_path_is_serialised() {
        let q = Arc::new(MutationQueue::default());
        let g = q.lock(Path::new("/tmp/pi-mq-test")).await;
        let q2 = q.clone();
        let h = tokio::spawn(async move {
            let _g = q2.lock(Path::new("/tmp/pi-mq-test")).await;
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!h.is_finished());
        drop(g);
        h.await.unwrap();
    }

    #[tokio::test]
    async fn the_owner_re_enters_and_everyone_else_waits() {
        let q = Arc::new(MutationQueue::default());
        let p = Path::new("/tmp/pi-mq-owner-test");
        let held = q.lock_as(p, Some("fmt")).await;
        // The owner's own nested tool does not wait on its caller.
        let again = tokio::time::timeout(Duration::from_secs(5), q.lock_as(p, Some("fmt")))
            .await
            .expect("re-entry waits for nothing");
        drop(again);
        let q2 = q.clone();
        let other = tokio::spawn(async move {
            let _g = q2
                .lock_as(Path::new("/tmp/pi-mq-owner-test"), Some("lint"))
                .await;
        });
        tokio::task::yield_now().await;
        assert!(!other.is_finished(), "another owner waits");
        drop(held);
        other.await.unwrap();
        // Released: the next holder is nobody in particular.
        let plain = q.lock(p).await;
        drop(plain);
    }
}
