//! What Claude Code hooks cost: every run of a hook process is timed (spawn, and spawn + run
//! until its output is read), kept in memory for the run's latency report, and at the end of
//! the run appended to `claude-hooks-latency.json` in the agent directory, so `pi hooks` can
//! show the median of real runs per hook and event. Nothing is probed: a hook that has never
//! run has no figure. The file keeps the last [`KEPT`] runs of each hook; two pi processes
//! ending at once may lose one's samples (the file is replaced whole, never corrupted).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::config::ClaudeSpec;

/// Runs kept per hook, in memory and in the file.
pub const KEPT: usize = 200;

pub const FILE: &str = "claude-hooks-latency.json";

/// One hook's recorded runs (oldest first).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Runs {
    pub event: String,
    pub command: String,
    /// Spawn + run, per run, in microseconds.
    pub total_us: Vec<u64>,
    /// The spawn alone, per run.
    pub spawn_us: Vec<u64>,
}

impl Runs {
    fn push(&mut self, total_us: u64, spawn_us: u64) {
        self.total_us.push(total_us);
        self.spawn_us.push(spawn_us);
        self.trim();
    }

    fn trim(&mut self) {
        for v in [&mut self.total_us, &mut self.spawn_us] {
            if v.len() > KEPT {
                v.drain(..v.len() - KEPT);
            }
        }
    }

    pub fn stats(&self) -> Option<Stats> {
        if self.total_us.is_empty() {
            return None;
        }
        Some(Stats {
            runs: self.total_us.len(),
            median_us: quantile(&self.total_us, 0.5),
            p90_us: quantile(&self.total_us, 0.9),
            spawn_median_us: quantile(&self.spawn_us, 0.5),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    pub runs: usize,
    pub median_us: u64,
    pub p90_us: u64,
    pub spawn_median_us: u64,
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "median {} (spawn {}), p90 {} over {} run(s)",
            ms(self.median_us),
            ms(self.spawn_median_us),
            ms(self.p90_us),
            self.runs
        )
    }
}

fn ms(us: u64) -> String {
    format!("{:.1} ms", us as f64 / 1000.0)
}

fn quantile(v: &[u64], q: f64) -> u64 {
    let mut s = v.to_vec();
    s.sort_unstable();
    if s.is_empty() {
        return 0;
    }
    let i = ((s.len() as f64 - 1.0) * q).round() as usize;
    s[i.min(s.len() - 1)]
}

/// The key of a hook's runs in the file: its event, matcher and command, so the same hook
/// configured again (or in another file) keeps its history.
pub fn key(spec: &ClaudeSpec) -> String {
    format!(
        "{} [{}] {}",
        spec.event.name(),
        spec.matcher_text.as_deref().unwrap_or("*"),
        spec.command_line()
    )
}

/// One hook's runs in this process.
#[derive(Debug, Default)]
pub struct Recorder {
    runs: Mutex<Runs>,
    /// Runs not yet written to the file.
    unsaved: Mutex<Runs>,
}

impl Recorder {
    pub fn new(spec: &ClaudeSpec) -> Self {
        let runs = Runs {
            event: spec.event.name().into(),
            command: spec.command_line(),
            ..Runs::default()
        };
        Recorder {
            runs: Mutex::new(runs.clone()),
            unsaved: Mutex::new(runs),
        }
    }

    pub fn record(&self, total_us: u64, spawn_us: u64) {
        for m in [&self.runs, &self.unsaved] {
            m.lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(total_us, spawn_us);
        }
    }

    pub fn stats(&self) -> Option<Stats> {
        self.runs.lock().unwrap_or_else(|p| p.into_inner()).stats()
    }

    fn take_unsaved(&self) -> Runs {
        let mut u = self.unsaved.lock().unwrap_or_else(|p| p.into_inner());
        let taken = u.clone();
        u.total_us.clear();
        u.spawn_us.clear();
        taken
    }
}

pub fn file_in(agent_dir: &Path) -> PathBuf {
    agent_dir.join(FILE)
}

/// The recorded runs, by [`key`]; an absent or unreadable file is no history.
pub fn load(path: &Path) -> BTreeMap<String, Runs> {
    std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Appends what `hooks` recorded since the last save to the file.
pub fn save<'a>(
    path: &Path,
    hooks: impl IntoIterator<Item = (String, &'a Recorder)>,
) -> std::io::Result<()> {
    let mut all = load(path);
    let mut changed = false;
    for (k, rec) in hooks {
        let new = rec.take_unsaved();
        if new.total_us.is_empty() {
            continue;
        }
        changed = true;
        let e = all.entry(k).or_insert_with(|| Runs {
            event: new.event.clone(),
            command: new.command.clone(),
            ..Runs::default()
        });
        e.total_us.extend(new.total_us);
        e.spawn_us.extend(new.spawn_us);
        e.trim();
    }
    if !changed {
        return Ok(());
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    serde_json::to_writer_pretty(&mut tmp, &all)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::claude::config::from_value;
    use crate::hooks::spec::HookSource;
    use serde_json::json;

    #[test]
    fn runs_are_appended_to_the_file_and_summarised() {
        let (specs, _) = from_value(
            &json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"command": "check.sh"}]}]}),
            "s.json",
            HookSource::User,
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = file_in(dir.path());
        let rec = Recorder::new(&specs[0]);
        for (t, s) in [(3000, 1000), (5000, 1000), (4000, 2000)] {
            rec.record(t, s);
        }
        let st = rec.stats().unwrap();
        assert_eq!((st.runs, st.median_us, st.spawn_median_us), (3, 4000, 1000));
        save(&path, [(key(&specs[0]), &rec)]).unwrap();
        rec.record(10_000, 1000);
        save(&path, [(key(&specs[0]), &rec)]).unwrap();
        let runs = &load(&path)[&key(&specs[0])];
        assert_eq!(runs.total_us, [3000, 5000, 4000, 10_000]);
        assert_eq!(runs.event, "PreToolUse");
        assert_eq!(key(&specs[0]), "PreToolUse [Bash] check.sh");
        assert!(
            st.to_string().starts_with("median 4.0 ms (spawn 1.0 ms)"),
            "{st}"
        );
    }
}
