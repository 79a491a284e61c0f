//! Finding and killing the processes a subreaper has inherited, shared by the watchdog (which
//! kills everything below it when `pi` dies) and `pi` (which kills what the watchdog left it
//! when the watchdog dies); and the scan of `/proc` that tells whether a process group still
//! has live members (`group`).
//!
//! The kernel keeps no list of a process's children that every kernel exposes
//! (`/proc/PID/task/TID/children` needs `CONFIG_PROC_CHILDREN`), so children are found by
//! reading `/proc/*/stat` for their parent; the kill loops repeat until nothing is left, which
//! also catches processes reparented to us while a pass was running.

use nix::errno::Errno;
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;

/// One process as `/proc/PID/stat` describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub pid: i32,
    pub ppid: i32,
    pub pgrp: i32,
    /// A zombie waiting to be reaped (or already being torn down).
    pub dead: bool,
}

/// Parses a `/proc/PID/stat` line: "pid (comm) state ppid pgrp …", where `comm` may contain
/// spaces and parentheses.
pub fn parse_stat(line: &str) -> Option<Stat> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    let pid = line[..open].trim().parse().ok()?;
    let mut fields = line.get(close + 1..)?.split_whitespace();
    let state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some(Stat {
        pid,
        ppid,
        pgrp,
        dead: matches!(state, "Z" | "X"),
    })
}

/// Every process on the machine (zombies included), from a scan of `/proc`; `None` when
/// `/proc` cannot be read.
pub fn all() -> Option<impl Iterator<Item = Stat>> {
    let dir = std::fs::read_dir("/proc").ok()?;
    Some(
        dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .filter_map(|pid| {
                // Processes come and go during the scan; a vanished one is simply not listed.
                let line = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                parse_stat(&line)
            }),
    )
}

/// The current children of `parent` (zombies included), from a scan of `/proc`.
pub fn children_of(parent: i32) -> Vec<Stat> {
    all()
        .map(|procs| procs.filter(|s| s.ppid == parent).collect())
        .unwrap_or_default()
}

/// SIGKILLs `child`, and the whole group it leads when it leads one: its group-mates die in the
/// same pass instead of one generation per pass. A group led by someone else is left alone, as
/// it may be a group of the user's shell.
pub fn kill_child(child: &Stat) {
    if child.pgrp == child.pid {
        match killpg(Pid::from_raw(child.pgrp), Signal::SIGKILL) {
            Ok(()) | Err(Errno::ESRCH) => {}
            Err(_) => {
                let _ = kill(Pid::from_raw(child.pid), Signal::SIGKILL);
            }
        }
    } else {
        let _ = kill(Pid::from_raw(child.pid), Signal::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_awkward_names_parse() {
        let s = parse_stat("4242 (my (odd) proc) S 17 4242 17 0 -1 4194560 0 0").unwrap();
        assert_eq!(
            s,
            Stat {
                pid: 4242,
                ppid: 17,
                pgrp: 4242,
                dead: false
            }
        );
        assert!(parse_stat("7 (zombie) Z 1 7 7").unwrap().dead);
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(parse_stat("1 (x)"), None);
    }

    #[test]
    fn our_children_are_found() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let me = std::process::id() as i32;
        let found = children_of(me);
        assert!(
            found.iter().any(|s| s.pid == child.id() as i32),
            "{found:?}"
        );
        let _ = child.kill();
        let _ = child.wait();
    }
}
