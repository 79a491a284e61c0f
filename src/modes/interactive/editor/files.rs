//! The file list behind `@` completion: one gitignore-aware walk of the working directory per
//! session, on a background thread, so typing never waits for the disk. The walk publishes
//! what it has found in batches and calls the app's `notify` so an open popup can refresh;
//! queries rank whatever is there so far with nucleo (helix's fuzzy matcher), shorter paths
//! first among equal scores. The walk stops at [`MAX_FILES`] entries: a home directory or a
//! monorepo must not cost minutes of disk or unbounded memory.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use ignore::WalkBuilder;
use nucleo_matcher::pattern::{AtomKind, CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

use crate::tools::find::relative;

pub const MAX_FILES: usize = 50_000;
/// Entries are handed over to queries this many at a time.
const BATCH: usize = 2_000;

/// Called (from the walk's thread) when new results are available.
pub type Notify = Arc<dyn Fn() + Send + Sync>;

#[derive(Debug, Default)]
struct State {
    /// Relative paths with `/` separators; directories end in `/`.
    paths: Vec<String>,
    started: bool,
    done: bool,
    truncated: bool,
    /// Bumped on every batch, so a popup knows whether to re-rank.
    generation: u64,
    /// Bumped by `invalidate`, so a walk that outlived its index stops publishing.
    epoch: u64,
}

/// What a query found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMatches {
    pub paths: Vec<String>,
    /// False while the walk is still running (more may come).
    pub done: bool,
    /// True when the walk stopped at [`MAX_FILES`].
    pub truncated: bool,
    pub generation: u64,
}

pub struct FileIndex {
    root: PathBuf,
    limit: usize,
    state: Arc<Mutex<State>>,
    notify: Option<Notify>,
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    // A panic on the walk thread must not take the editor down with it.
    state.lock().unwrap_or_else(|p| p.into_inner())
}

impl FileIndex {
    pub fn new(root: PathBuf, notify: Option<Notify>) -> FileIndex {
        FileIndex::with_limit(root, MAX_FILES, notify)
    }

    pub fn with_limit(root: PathBuf, limit: usize, notify: Option<Notify>) -> FileIndex {
        FileIndex {
            root,
            limit,
            state: Arc::default(),
            notify,
        }
    }

    /// Start the walk unless it has started already.
    pub fn ensure_started(&self) {
        let epoch = {
            let mut s = lock(&self.state);
            if s.started {
                return;
            }
            s.started = true;
            s.epoch
        };
        let root = self.root.clone();
        let limit = self.limit;
        let state = Arc::clone(&self.state);
        let notify = self.notify.clone();
        let spawned = std::thread::Builder::new()
            .name("pi-file-index".into())
            .spawn(move || walk(&root, limit, epoch, &state, notify.as_deref()));
        if spawned.is_err() {
            // No thread, no list: report an empty, finished walk rather than "searching…"
            // forever.
            lock(&self.state).done = true;
        }
    }

    /// Forget the list (files were created or deleted); the next query walks again.
    pub fn invalidate(&self) {
        let mut s = lock(&self.state);
        let epoch = s.epoch + 1;
        *s = State {
            epoch,
            generation: s.generation + 1,
            ..State::default()
        };
    }

    pub fn generation(&self) -> u64 {
        lock(&self.state).generation
    }

    /// The best `max` paths for `query`. Hidden entries (a component starting with `.`) only
    /// when the query itself starts with `.`.
    pub fn search(&self, query: &str, max: usize) -> FileMatches {
        self.ensure_started();
        let s = lock(&self.state);
        let hidden_ok = query.starts_with('.');
        // The path typed in full (a directory just accepted) is not offered again: the
        // list should go on to what is inside it.
        let visible = s
            .paths
            .iter()
            .filter(|p| (hidden_ok || !is_hidden(p)) && p.as_str() != query);
        let paths = rank(query, visible, max);
        FileMatches {
            paths,
            done: s.done,
            truncated: s.truncated,
            generation: s.generation,
        }
    }
}

impl Drop for FileIndex {
    /// A walk still running for a closed editor stops at its next batch.
    fn drop(&mut self) {
        lock(&self.state).epoch += 1;
    }
}

fn is_hidden(path: &str) -> bool {
    path.split('/').any(|c| c.starts_with('.'))
}

/// Rank `paths` for `query`: fuzzy score, then fewer components, then shorter, then by name.
/// An empty query lists the shallowest entries first, by name.
pub fn rank<'a>(query: &str, paths: impl Iterator<Item = &'a String>, max: usize) -> Vec<String> {
    let mut scored: Vec<(u32, usize, &str)> = if query.is_empty() {
        paths.map(|p| (0, depth(p), p.as_str())).collect()
    } else {
        let pattern = Pattern::new(
            query,
            CaseMatching::Smart,
            Normalization::Smart,
            AtomKind::Fuzzy,
        );
        let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
        let mut buf = Vec::new();
        paths
            .filter_map(|p| {
                let score = pattern.score(Utf32Str::new(p, &mut buf), &mut matcher)?;
                Some((score, depth(p), p.as_str()))
            })
            .collect()
    };
    if query.is_empty() {
        scored.sort_by(|a, b| a.1.cmp(&b.1).then(a.2.cmp(b.2)));
    } else {
        scored.sort_by(|a, b| {
            b.0.cmp(&a.0)
                .then(a.1.cmp(&b.1))
                .then(a.2.len().cmp(&b.2.len()))
                .then(a.2.cmp(b.2))
        });
    }
    scored
        .into_iter()
        .take(max)
        .map(|(_, _, p)| p.to_string())
        .collect()
}

fn depth(path: &str) -> usize {
    path.trim_end_matches('/').matches('/').count()
}

fn walk(
    root: &Path,
    limit: usize,
    epoch: u64,
    state: &Mutex<State>,
    notify: Option<&(dyn Fn() + Send + Sync)>,
) {
    // As the find tool does: hidden entries are listed (a query starting with `.` wants
    // them), ignore files apply even outside a git repository, `.git` itself never.
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git")
        .sort_by_file_name(|a, b| a.cmp(b));
    let mut batch = Vec::with_capacity(BATCH);
    let mut count = 0;
    let mut truncated = false;
    let publish = |batch: &mut Vec<String>, done: bool, truncated: bool| -> bool {
        let mut s = lock(state);
        if s.epoch != epoch {
            return false;
        }
        s.paths.append(batch);
        s.done = done;
        s.truncated = truncated;
        s.generation += 1;
        drop(s);
        if let Some(n) = notify {
            n();
        }
        true
    };
    for entry in builder.build() {
        let Ok(entry) = entry else { continue };
        let Some(rel) = relative(entry.path(), root) else {
            continue;
        };
        if count >= limit {
            truncated = true;
            break;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        batch.push(if is_dir { format!("{rel}/") } else { rel });
        count += 1;
        if batch.len() >= BATCH && !publish(&mut batch, false, false) {
            return;
        }
    }
    publish(&mut batch, true, truncated);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::sync::mpsc;

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            let p = dir.path().join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, "").unwrap();
        }
        dir
    }

    /// An index with a notifier, and a way to wait for its walk (on notifications, not time).
    fn indexed(dir: &Path, limit: usize) -> (FileIndex, mpsc::Receiver<()>) {
        let (tx, rx) = mpsc::channel();
        let tx = Mutex::new(tx);
        let notify: Notify = Arc::new(move || {
            let _ = tx.lock().unwrap_or_else(|p| p.into_inner()).send(());
        });
        let index = FileIndex::with_limit(dir.to_path_buf(), limit, Some(notify));
        wait_done(&index, &rx);
        (index, rx)
    }

    fn wait_done(index: &FileIndex, rx: &mpsc::Receiver<()>) {
        while !index.search("", 0).done {
            rx.recv_timeout(std::time::Duration::from_secs(10))
                .expect("the walk finishes");
        }
    }

    fn finished(dir: &Path, limit: usize) -> FileIndex {
        indexed(dir, limit).0
    }

    #[test]
    fn gitignored_and_git_internal_entries_are_not_listed() {
        let dir = tree(&["src/main.rs", "target/debug/pi", ".git/HEAD", "notes.md"]);
        fs::write(dir.path().join(".gitignore"), "target/\n").unwrap();
        let index = finished(dir.path(), MAX_FILES);
        let all = index.search("", 100).paths;
        assert_eq!(all, ["notes.md", "src/", "src/main.rs"]);
    }

    #[test]
    fn hidden_entries_only_for_a_query_starting_with_a_dot() {
        let dir = tree(&[".github/workflows/ci.yml", "src/ci.rs"]);
        let index = finished(dir.path(), MAX_FILES);
        assert_eq!(index.search("ci", 10).paths, ["src/ci.rs"]);
        let dotted = index.search(".gith", 10).paths;
        assert_eq!(dotted.first().map(String::as_str), Some(".github/"));
        assert!(dotted.contains(&".github/workflows/ci.yml".to_string()));
    }

    #[test]
    fn fuzzy_ranking_prefers_the_closer_match() {
        let dir = tree(&[
            "src/modes/interactive/editor/mod.rs",
            "src/editor.rs",
            "docs/every_day_it_rains.md",
        ]);
        let index = finished(dir.path(), MAX_FILES);
        let found = index.search("editor", 10).paths;
        assert_eq!(found.first().map(String::as_str), Some("src/editor.rs"));
        let pos = |p: &str| found.iter().position(|f| f == p);
        assert!(
            pos("src/modes/interactive/editor/")
                .is_some_and(|i| pos("docs/every_day_it_rains.md").is_none_or(|j| i < j)),
            "{found:?}"
        );
        assert!(index.search("zzzz", 10).paths.is_empty());
    }

    #[test]
    fn the_walk_stops_at_its_bound_and_says_so() {
        let names: Vec<String> = (0..30).map(|i| format!("f{i:02}.txt")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let dir = tree(&refs);
        let index = finished(dir.path(), 10);
        let m = index.search("", 100);
        assert_eq!(m.paths.len(), 10);
        assert!(m.truncated && m.done);
    }

    #[test]
    fn the_list_is_cached_until_invalidated() {
        let dir = tree(&["a.txt"]);
        let (index, rx) = indexed(dir.path(), MAX_FILES);
        fs::write(dir.path().join("b.txt"), "").unwrap();
        assert_eq!(index.search("", 10).paths, ["a.txt"], "cached");
        let before = index.generation();
        index.invalidate();
        assert!(index.generation() > before, "an open popup re-ranks");
        wait_done(&index, &rx);
        assert_eq!(index.search("", 10).paths, ["a.txt", "b.txt"]);
    }

    #[test]
    fn rank_breaks_ties_by_depth_then_length() {
        let paths: Vec<String> = ["a/b/c.rs", "c.rs", "x/c.rs"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(rank("", paths.iter(), 10), ["c.rs", "x/c.rs", "a/b/c.rs"]);
        let flat: Vec<String> = ["zz", "b.txt", "a/"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(rank("", flat.iter(), 10), ["a/", "b.txt", "zz"]);
        assert_eq!(rank("c.rs", paths.iter(), 1), ["c.rs"]);
    }
}
