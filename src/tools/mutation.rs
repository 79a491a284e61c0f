//! Per-file mutation queue: edits and writes to the same file run one at a time, keyed by the
//! canonical path, so parallel tool calls cannot interleave a read-modify-write.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::sync::OwnedMutexGuard;

#[derive(Default)]
pub struct MutationQueue {
    locks: Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>,
}

impl MutationQueue {
    /// Wait for exclusive access to `path`. The key is the real path when the file exists
    /// (so symlinks to one file share a lock), else the absolute path as given.
    pub async fn lock(&self, path: &Path) -> OwnedMutexGuard<()> {
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let m = {
            let mut map = self.locks.lock().unwrap_or_else(|p| p.into_inner());
            map.entry(key).or_default().clone()
        };
        m.lock_owned().await
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
}
