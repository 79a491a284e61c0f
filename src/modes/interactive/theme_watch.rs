//! A theme file edited while pi runs: as in pi 1.6, the theme in use is drawn again in the
//! file's new colours moments after it is saved, so a person tuning a theme sees each change
//! without `/reload`. Only the file of the theme in use is watched (switching themes moves
//! the watch; a built-in has none). A save that leaves the file unusable — gone for a moment,
//! half written, not JSON — keeps the last good colours, and the reason is said once per save.
//!
//! The watch is the file's metadata (length, modification time, inode: a rename-over save
//! changes the inode) polled four times a second: one `stat`, never a read, until it changes;
//! then the file must hold still for 100 ms (1.6's debounce) before it is read, so an editor's
//! save in several writes is read once.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;

use super::app::{App, AppMsg};
use super::theme::Theme;

const POLL: Duration = Duration::from_millis(250);
const SETTLE: Duration = Duration::from_millis(100);

/// What says a file changed, without reading it.
type Stamp = Option<(u64, i64, i64, u64)>;

fn stamp(path: &Path) -> Stamp {
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), m.mtime(), m.mtime_nsec(), m.ino()))
}

/// The watch on one theme file; dropping it stops the task.
#[derive(Debug)]
pub struct ThemeWatch {
    path: PathBuf,
    task: JoinHandle<()>,
}

impl Drop for ThemeWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn spawn(path: PathBuf, tx: UnboundedSender<AppMsg>) -> ThemeWatch {
    let watched = path.clone();
    let task = tokio::spawn(async move {
        let mut last = stamp(&watched);
        loop {
            tokio::time::sleep(POLL).await;
            let now = stamp(&watched);
            // Gone (mid-save, or deleted): keep the theme, and look again.
            if now == last || now.is_none() {
                continue;
            }
            tokio::time::sleep(SETTLE).await;
            if stamp(&watched) != now {
                continue;
            }
            last = now;
            if tx.send(AppMsg::ThemeFileSaved(watched.clone())).is_err() {
                return;
            }
        }
    });
    ThemeWatch { path, task }
}

impl App {
    /// Watch the file of the theme in use (none for a built-in); called whenever it changes.
    pub fn watch_theme_file(&mut self) {
        let path = self
            .themes
            .catalog
            .get(&self.theme.name)
            .and_then(|e| e.path.clone());
        match (&self.themes.watch, path) {
            (Some(w), Some(p)) if w.path == p => {}
            (_, Some(p)) => self.themes.watch = Some(spawn(p, self.tx.clone())),
            (_, None) => self.themes.watch = None,
        }
    }

    /// The watched file was saved: draw in what it says now, or say why it cannot be used.
    pub fn theme_file_saved(&mut self, path: &Path) {
        let current = self.themes.watch.as_ref().map(|w| w.path.as_path());
        if current != Some(path) {
            return;
        }
        let name = self.theme.name.clone();
        match self.themes.catalog.reread(&name) {
            Ok(spec) => self.apply_theme(Theme::from_spec(&spec, self.theme.color)),
            Err(why) => {
                let text = format!("Warning: theme {name} kept as it was: {why}");
                self.transcript.notice(text, self.theme.warning);
            }
        }
    }
}
