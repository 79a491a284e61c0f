//! Stopping what `pi` started: the process group a started process leads
//! ([`Command::new_process_group`](super::Command::new_process_group)), signalled as a whole,
//! watched until no live member is left, SIGKILLed when a guard is dropped, and the two ways
//! of ending one built on those: at once ([`kill_group`]) or with graces ([`stop`]).
//!
//! Hooks, MCP servers, Claude Code hooks and the bash tool all start their processes in a
//! group of their own, so that stopping one reaches whatever it spawned (`npx` starts `node`,
//! `npm test` starts a test runner); signalling goes through here so each of them gets the
//! same care about groups that are already gone (ESRCH is no error), zombies (which count as
//! gone) and escalation. The watchdog remains the last line: what escapes a group
//! (`setsid`, a double fork) still dies with `pi`.

use std::process::ExitStatus;
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use super::{procs, Child};

/// How long [`kill_group`] and [`ProcessGroup::clear`] wait for a SIGKILLed group to be gone.
const AFTER_SIGKILL: Duration = Duration::from_secs(1);
/// How often [`ProcessGroup::wait_gone`] looks: no notification exists for the death of
/// processes that are not our children.
const POLL: Duration = Duration::from_millis(10);

/// A process group, named by its id: the pid of the process that leads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessGroup(Pid);

impl ProcessGroup {
    /// The group `leader` leads (its pid is the group's id). [`Child::group`] is the usual way
    /// to get one; this is for a group id kept elsewhere (a hook's, reported by the hook).
    pub fn led_by(leader: Pid) -> ProcessGroup {
        ProcessGroup(leader)
    }

    /// The group id.
    pub fn id(self) -> Pid {
        self.0
    }

    /// Sends `sig` to every process in the group. A group that no longer exists is not an
    /// error; other failures are logged (there is nothing else to do about them).
    pub fn signal(self, sig: Signal) {
        match killpg(self.0, sig) {
            Ok(()) | Err(Errno::ESRCH) => {}
            Err(e) => {
                tracing::warn!(pgid = self.0.as_raw(), signal = ?sig, error = %e, "killpg failed")
            }
        }
    }

    /// Whether any live (non-zombie) process is still in the group. Zombies are excluded
    /// because orphaned grandchildren are reaped by PID 1, which in some containers never
    /// reaps.
    pub fn alive(self) -> bool {
        // No process in the group at all, zombies included: the usual answer once the leader
        // is reaped, and it saves reading the stat of every process on the machine (a few
        // milliseconds at each stop, more on a busy host).
        if killpg(self.0, None) == Err(Errno::ESRCH) {
            return false;
        }
        let pgrp = self.0.as_raw();
        match procs::all() {
            Some(mut all) => all.any(|s| s.pgrp == pgrp && !s.dead),
            None => killpg(self.0, None).is_ok(),
        }
    }

    /// Waits until no live process of the group remains, at most `within`; whether none does.
    pub async fn wait_gone(self, within: Duration) -> bool {
        let end = tokio::time::Instant::now() + within;
        loop {
            if !self.alive() {
                return true;
            }
            if tokio::time::Instant::now() >= end {
                return false;
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Ends what is left of the group once its leader is reaped: SIGTERM, `grace` to exit,
    /// then SIGKILL and a moment for it to take effect. Whether the group is gone.
    pub async fn clear(self, grace: Duration) -> bool {
        if !self.alive() {
            return true;
        }
        self.signal(Signal::SIGTERM);
        if self.wait_gone(grace).await {
            return true;
        }
        self.signal(Signal::SIGKILL);
        self.wait_gone(AFTER_SIGKILL).await
    }

    /// A guard that SIGKILLs the group when dropped, unless disarmed: also when the future
    /// that owns it is dropped half-way, so nothing outlives the work that started it.
    pub fn kill_on_drop(self) -> KillOnDrop {
        KillOnDrop { group: Some(self) }
    }
}

/// See [`ProcessGroup::kill_on_drop`].
#[derive(Debug)]
pub struct KillOnDrop {
    group: Option<ProcessGroup>,
}

impl KillOnDrop {
    /// SIGKILLs the group now (and again when dropped, unless disarmed).
    pub fn kill(&self) {
        if let Some(group) = self.group {
            group.signal(Signal::SIGKILL);
        }
    }

    /// The group is no longer killed on drop.
    pub fn disarm(&mut self) {
        self.group = None;
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        self.kill();
    }
}

/// SIGKILLs the whole `group`, reaps its `leader`, and waits briefly for the rest to die: for
/// a process that misbehaved (it crashed, broke its protocol, timed out), so it gets no grace.
pub async fn kill_group(leader: &mut Child, group: ProcessGroup) -> Option<ExitStatus> {
    group.signal(Signal::SIGKILL);
    let status = leader.wait().await.ok();
    if !group.wait_gone(AFTER_SIGKILL).await {
        tracing::warn!(pgid = group.id().as_raw(), "process group survived SIGKILL");
    }
    status
}

/// How [`stop`] ended the leader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// It exited within the first grace, by itself.
    Exited,
    /// It exited after SIGTERM.
    Terminated,
    /// It was SIGKILLed.
    Killed,
}

/// Stops a process that was asked to end (its stdin closed, say): `grace` to exit by itself,
/// then SIGTERM to the group and `grace` again, then SIGKILL to the group and reaping; then
/// what the leader left in its group is cleared the same way ([`ProcessGroup::clear`]).
pub async fn stop(leader: &mut Child, group: ProcessGroup, grace: Duration) -> Stopped {
    let how = if exits_within(leader, grace).await {
        Stopped::Exited
    } else {
        group.signal(Signal::SIGTERM);
        if exits_within(leader, grace).await {
            Stopped::Terminated
        } else {
            group.signal(Signal::SIGKILL);
            let _ = leader.wait().await;
            Stopped::Killed
        }
    };
    // What the leader spawned may linger a moment after it exits.
    if !group.clear(grace).await {
        tracing::warn!(pgid = group.id().as_raw(), "process group survived SIGKILL");
    }
    how
}

async fn exits_within(leader: &mut Child, within: Duration) -> bool {
    tokio::time::timeout(within, leader.wait()).await.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watchdog::{Command, Stdio};

    async fn start(script: &str) -> (Child, ProcessGroup) {
        let child = Command::new("/bin/sh")
            .args(["-c", script])
            .envs([("PATH", "/usr/bin:/bin")])
            .stdin(Stdio::Null)
            .new_process_group()
            .spawn()
            .await
            .unwrap();
        let group = child.group().unwrap();
        (child, group)
    }

    #[tokio::test]
    async fn killing_the_group_reaches_grandchildren() {
        let (mut child, group) = start("sleep 60 & sleep 60 & wait").await;
        assert!(group.alive());
        let status = kill_group(&mut child, group).await;
        assert!(status.is_some_and(|s| super::super::describe_status(&s).contains("SIGKILL")));
        assert!(!group.alive());
    }

    #[tokio::test]
    async fn stopping_escalates_to_sigterm_and_clears_what_the_leader_left() {
        // The leader waits on its stdin-less sleep; a grandchild ignores SIGTERM.
        let (mut child, group) = start("(trap '' TERM; sleep 60) & sleep 60").await;
        let how = stop(&mut child, group, Duration::from_millis(200)).await;
        assert_eq!(how, Stopped::Terminated);
        assert!(!group.alive());
    }

    #[tokio::test]
    async fn a_dropped_guard_kills_the_group_and_a_disarmed_one_does_not() {
        let (mut child, group) = start("sleep 60").await;
        let mut guard = group.kill_on_drop();
        guard.disarm();
        drop(guard);
        assert!(group.alive());
        drop(group.kill_on_drop());
        assert!(child.wait().await.is_ok());
        // SIGKILL is delivered asynchronously: a member the shell forked may still be dying
        // when the leader is reaped (seen on a loaded two-core CI machine).
        assert!(group.wait_gone(Duration::from_secs(5)).await);
    }

    #[test]
    fn a_group_that_never_existed_is_not_alive_and_signalling_it_is_harmless() {
        // Pids are below this on Linux (pid_max is at most 2^22).
        let group = ProcessGroup::led_by(Pid::from_raw(i32::MAX - 1));
        assert!(!group.alive());
        group.signal(Signal::SIGKILL);
    }
}
