//! The control protocol between `pi` and its watchdog, as bytes: plain types and their
//! encoding, no I/O.
//!
//! The channel is a `SOCK_SEQPACKET` socket pair, so every message arrives whole and alone.
//! A spawn request can be larger than one socket message may be (a model's shell command with a
//! long heredoc, a large environment), so requests travel as a run of chunks, each with a
//! one-byte "more follows" flag; the sender keeps a run contiguous, the descriptors ride on the
//! first chunk. Replies are always a single small message. Integers are little-endian; byte
//! strings carry a `u32` length.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

/// Payload bytes per request chunk: well under the default socket buffer of every Linux.
pub const CHUNK: usize = 32 * 1024;
/// Largest reply message.
pub const MAX_REPLY: usize = 32;
/// Extra descriptors may only be installed at these numbers. The watchdog keeps them occupied
/// itself, so no descriptor it opens (including the standard library's exec-error pipe) can
/// sit where a child's descriptor is about to be installed.
pub const EXTRA_FDS: std::ops::RangeInclusive<i32> = 3..=9;

/// "Start this process", with the descriptors that come with the message: the standard streams
/// flagged in `stdio`, in order, then one per entry of `fd_targets`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnRequest {
    pub id: u64,
    /// What to execute (a path; `/proc/self/fd/N` for a verified file).
    pub program: PathBuf,
    /// `argv[0]`.
    pub arg0: OsString,
    pub args: Vec<OsString>,
    /// The complete environment.
    pub env: Vec<(OsString, OsString)>,
    pub cwd: PathBuf,
    /// Lead a new process group (its id is the child's pid).
    pub new_group: bool,
    /// SIGKILL the child when the watchdog dies (its parent-death signal). Costs a `fork`
    /// where a plain `posix_spawn` would do, so it is asked for, not implied.
    pub die_with_parent: bool,
    /// Whether stdin, stdout, stderr come as descriptors; `/dev/null` otherwise.
    pub stdio: [bool; 3],
    /// Where each extra descriptor goes in the child, inheritable (within [`EXTRA_FDS`]).
    pub fd_targets: Vec<i32>,
}

impl SpawnRequest {
    /// How many descriptors must come with this request.
    pub fn fd_count(&self) -> usize {
        self.stdio.iter().filter(|s| **s).count() + self.fd_targets.len()
    }
}

/// What the watchdog tells `pi`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    Spawned {
        id: u64,
        pid: i32,
    },
    /// The process could not be started; `errno` says why.
    Failed {
        id: u64,
        errno: i32,
    },
    /// A process it started ended; `status` as `waitpid` reports it.
    Exited {
        pid: i32,
        status: i32,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("control message ends early")]
    Truncated,
    #[error("unknown control message tag {0}")]
    Tag(u8),
    #[error("{0} trailing bytes after a control message")]
    Trailing(usize),
    #[error("extra descriptor number {0} is outside 3..=9")]
    FdTarget(i32),
}

const TAG_SPAWN: u8 = 1;
const TAG_SPAWNED: u8 = 11;
const TAG_FAILED: u8 = 12;
const TAG_EXITED: u8 = 13;

struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i32(&mut self, v: i32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        // Anything a process can be given is far below 4 GiB (the kernel caps argv and envp).
        self.u32(u32::try_from(b.len()).unwrap_or(u32::MAX));
        self.0.extend_from_slice(b);
    }
    fn count(&mut self, n: usize) {
        self.u32(u32::try_from(n).unwrap_or(u32::MAX));
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if self.0.len() < n {
            return Err(WireError::Truncated);
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Ok(head)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, WireError> {
        self.array().map(u32::from_le_bytes)
    }
    fn i32(&mut self) -> Result<i32, WireError> {
        self.array().map(i32::from_le_bytes)
    }
    fn u64(&mut self) -> Result<u64, WireError> {
        self.array().map(u64::from_le_bytes)
    }
    fn bytes(&mut self) -> Result<&'a [u8], WireError> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    fn os(&mut self) -> Result<OsString, WireError> {
        Ok(OsString::from_vec(self.bytes()?.to_vec()))
    }
    /// A count of items at least `min_size` bytes each, checked against what is left so a
    /// corrupt count cannot ask for a huge allocation.
    fn count(&mut self, min_size: usize) -> Result<usize, WireError> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_size) > self.0.len() {
            return Err(WireError::Truncated);
        }
        Ok(n)
    }
    fn finish(&self) -> Result<(), WireError> {
        match self.0.len() {
            0 => Ok(()),
            n => Err(WireError::Trailing(n)),
        }
    }
}

pub fn encode_request(r: &SpawnRequest) -> Vec<u8> {
    let mut w = Writer(Vec::with_capacity(256));
    w.u8(TAG_SPAWN);
    w.u64(r.id);
    w.bytes(r.program.as_os_str().as_bytes());
    w.bytes(r.arg0.as_bytes());
    w.count(r.args.len());
    for a in &r.args {
        w.bytes(a.as_bytes());
    }
    w.count(r.env.len());
    for (k, v) in &r.env {
        w.bytes(k.as_bytes());
        w.bytes(v.as_bytes());
    }
    w.bytes(r.cwd.as_os_str().as_bytes());
    w.u8(u8::from(r.new_group));
    w.u8(u8::from(r.die_with_parent));
    for s in r.stdio {
        w.u8(u8::from(s));
    }
    w.count(r.fd_targets.len());
    for t in &r.fd_targets {
        w.i32(*t);
    }
    w.0
}

/// The id of a request, when at least that much of it is readable (to answer a malformed one).
pub fn request_id(bytes: &[u8]) -> Option<u64> {
    let mut r = Reader(bytes);
    (r.u8().ok()? == TAG_SPAWN).then(|| r.u64().ok()).flatten()
}

pub fn decode_request(bytes: &[u8]) -> Result<SpawnRequest, WireError> {
    let mut r = Reader(bytes);
    match r.u8()? {
        TAG_SPAWN => {}
        t => return Err(WireError::Tag(t)),
    }
    let id = r.u64()?;
    let program = PathBuf::from(r.os()?);
    let arg0 = r.os()?;
    let n = r.count(4)?;
    let args = (0..n).map(|_| r.os()).collect::<Result<_, _>>()?;
    let n = r.count(8)?;
    let env = (0..n)
        .map(|_| Ok((r.os()?, r.os()?)))
        .collect::<Result<_, _>>()?;
    let cwd = PathBuf::from(r.os()?);
    let new_group = r.u8()? != 0;
    let die_with_parent = r.u8()? != 0;
    let stdio = [r.u8()? != 0, r.u8()? != 0, r.u8()? != 0];
    let n = r.count(4)?;
    let fd_targets: Vec<i32> = (0..n).map(|_| r.i32()).collect::<Result<_, _>>()?;
    if let Some(bad) = fd_targets.iter().find(|t| !EXTRA_FDS.contains(*t)) {
        return Err(WireError::FdTarget(*bad));
    }
    r.finish()?;
    Ok(SpawnRequest {
        id,
        program,
        arg0,
        args,
        env,
        cwd,
        new_group,
        die_with_parent,
        stdio,
        fd_targets,
    })
}

/// Splits an encoded request into the messages that carry it.
pub fn chunks(encoded: &[u8]) -> impl Iterator<Item = Vec<u8>> + '_ {
    let n = encoded.len().div_ceil(CHUNK).max(1);
    (0..n).map(move |i| {
        let part = &encoded[(i * CHUNK).min(encoded.len())..((i + 1) * CHUNK).min(encoded.len())];
        let mut m = Vec::with_capacity(part.len() + 1);
        m.push(u8::from(i + 1 < n));
        m.extend_from_slice(part);
        m
    })
}

/// One received chunk: its payload, and whether more of the same request follows.
pub fn split_chunk(message: &[u8]) -> Result<(&[u8], bool), WireError> {
    match message.split_first() {
        Some((more, rest)) => Ok((rest, *more != 0)),
        None => Err(WireError::Truncated),
    }
}

pub fn encode_reply(r: Reply) -> Vec<u8> {
    let mut w = Writer(Vec::with_capacity(MAX_REPLY));
    match r {
        Reply::Spawned { id, pid } => {
            w.u8(TAG_SPAWNED);
            w.u64(id);
            w.i32(pid);
        }
        Reply::Failed { id, errno } => {
            w.u8(TAG_FAILED);
            w.u64(id);
            w.i32(errno);
        }
        Reply::Exited { pid, status } => {
            w.u8(TAG_EXITED);
            w.i32(pid);
            w.i32(status);
        }
    }
    w.0
}

pub fn decode_reply(bytes: &[u8]) -> Result<Reply, WireError> {
    let mut r = Reader(bytes);
    let reply = match r.u8()? {
        TAG_SPAWNED => Reply::Spawned {
            id: r.u64()?,
            pid: r.i32()?,
        },
        TAG_FAILED => Reply::Failed {
            id: r.u64()?,
            errno: r.i32()?,
        },
        TAG_EXITED => Reply::Exited {
            pid: r.i32()?,
            status: r.i32()?,
        },
        t => return Err(WireError::Tag(t)),
    };
    r.finish()?;
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn os(b: Vec<u8>) -> OsString {
        OsString::from_vec(b)
    }

    fn request() -> impl Strategy<Value = SpawnRequest> {
        let bytes = || proptest::collection::vec(any::<u8>(), 0..40);
        (
            any::<u64>(),
            bytes(),
            bytes(),
            proptest::collection::vec(bytes(), 0..6),
            proptest::collection::vec((bytes(), bytes()), 0..6),
            bytes(),
            any::<bool>(),
            any::<bool>(),
            any::<[bool; 3]>(),
            proptest::collection::vec(3..=9i32, 0..4),
        )
            .prop_map(
                |(
                    id,
                    program,
                    arg0,
                    args,
                    env,
                    cwd,
                    new_group,
                    die_with_parent,
                    stdio,
                    fd_targets,
                )| SpawnRequest {
                    id,
                    program: PathBuf::from(os(program)),
                    arg0: os(arg0),
                    args: args.into_iter().map(os).collect(),
                    env: env.into_iter().map(|(k, v)| (os(k), os(v))).collect(),
                    cwd: PathBuf::from(os(cwd)),
                    new_group,
                    die_with_parent,
                    stdio,
                    fd_targets,
                },
            )
    }

    proptest! {
        #[test]
        fn requests_survive_the_wire(req in request()) {
            let bytes = encode_request(&req);
            prop_assert_eq!(request_id(&bytes), Some(req.id));
            prop_assert_eq!(decode_request(&bytes), Ok(req));
        }

        #[test]
        fn damaged_requests_are_errors_not_panics(req in request(), cut in 0usize..400) {
            let bytes = encode_request(&req);
            let cut = cut.min(bytes.len().saturating_sub(1));
            prop_assert!(decode_request(&bytes[..cut]).is_err());
        }

        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode_request(&bytes);
            let _ = decode_reply(&bytes);
        }
    }

    #[test]
    fn replies_survive_the_wire() {
        for r in [
            Reply::Spawned { id: 7, pid: 4242 },
            Reply::Failed {
                id: u64::MAX,
                errno: 2,
            },
            Reply::Exited {
                pid: 1,
                status: 9 | 0x80,
            },
        ] {
            let bytes = encode_reply(r);
            assert!(bytes.len() <= MAX_REPLY);
            assert_eq!(decode_reply(&bytes), Ok(r));
        }
        assert_eq!(decode_reply(&[99]), Err(WireError::Tag(99)));
        let mut long = encode_reply(Reply::Spawned { id: 1, pid: 2 });
        long.push(0);
        assert_eq!(decode_reply(&long), Err(WireError::Trailing(1)));
    }

    #[test]
    fn a_large_request_travels_in_chunks_and_reassembles() {
        let req = SpawnRequest {
            id: 1,
            program: "/bin/sh".into(),
            arg0: "sh".into(),
            args: vec!["-c".into(), "x".repeat(3 * CHUNK + 17).into()],
            env: vec![("PATH".into(), "/bin".into())],
            cwd: "/".into(),
            new_group: true,
            die_with_parent: false,
            stdio: [false, true, true],
            fd_targets: vec![3],
        };
        let encoded = encode_request(&req);
        let messages: Vec<Vec<u8>> = chunks(&encoded).collect();
        assert_eq!(messages.len(), 4);
        assert!(messages.iter().all(|m| m.len() <= CHUNK + 1));
        let mut whole = Vec::new();
        for (i, m) in messages.iter().enumerate() {
            let (part, more) = split_chunk(m).unwrap();
            assert_eq!(more, i + 1 < messages.len());
            whole.extend_from_slice(part);
        }
        assert_eq!(decode_request(&whole), Ok(req));
        assert_eq!(chunks(&[]).count(), 1);
    }

    #[test]
    fn descriptors_outside_the_reserved_range_are_refused() {
        let mut req = SpawnRequest {
            id: 1,
            program: "/bin/true".into(),
            arg0: "true".into(),
            args: vec![],
            env: vec![],
            cwd: "/".into(),
            new_group: false,
            die_with_parent: true,
            stdio: [false; 3],
            fd_targets: vec![1],
        };
        assert_eq!(
            decode_request(&encode_request(&req)),
            Err(WireError::FdTarget(1))
        );
        req.fd_targets = vec![3, 9];
        assert_eq!(req.fd_count(), 2);
        assert!(decode_request(&encode_request(&req)).is_ok());
    }
}
