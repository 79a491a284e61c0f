//! What the host needs to know to start one hook: its command, environment, settings and
//! policies. Built from `--hook`, settings entries and discovered executables (see `sources`).
//!
//! It also owns the `sha256` pin check, because the pin is part of the spec and the check
//! must run before every spawn of it (first start and each restart), wherever that happens.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::protocol::FailPolicy;
pub use crate::config::managed::RequiredHookFailure;

/// Where a hook came from; also its load-order class (managed first, project last).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum HookSource {
    Managed,
    User,
    Discovered,
    Cli,
    Project,
}

impl HookSource {
    pub fn as_str(self) -> &'static str {
        match self {
            HookSource::Managed => "managed",
            HookSource::User => "user settings",
            HookSource::Discovered => "hooks dir",
            HookSource::Cli => "--hook",
            HookSource::Project => "project",
        }
    }
}

/// `enforce` applies a hook's blocks and patches; `shadow` computes and reports them only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HookMode {
    #[default]
    Enforce,
    Shadow,
}

#[derive(Debug, Clone)]
pub struct HookSpec {
    /// Display name until the hook registers its own.
    pub name: String,
    /// The resolved executable.
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Extra environment from the settings entry.
    pub env: Vec<(String, String)>,
    /// Names of parent environment variables passed through on purpose.
    pub env_passthrough: Vec<String>,
    /// The settings entry's `config` object, sent in `hello`.
    pub config: Value,
    pub start_timeout: Duration,
    pub event_timeout: Duration,
    /// The settings entry's failure policy; overrides what the hook registers.
    pub fail: Option<FailPolicy>,
    pub mode: HookMode,
    pub source: HookSource,
    /// Pinned SHA-256 of the executable: 64 lowercase hex digits (normalised by `sources`).
    pub sha256: Option<String>,
    /// Whether `pi` must refuse to run tools when this hook is not running (managed hooks). A
    /// required hook always fails closed, whatever its `fail` says.
    pub required: bool,
    /// For a required hook: what its failure to start does (the managed policy's
    /// `requiredHookFailure`).
    pub on_required_failure: RequiredHookFailure,
}

/// Why a pinned executable must not be started. Messages name the file and both digests.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PinError {
    #[error("cannot verify the sha256 pin of {}: {message}", path.display())]
    Unreadable { path: PathBuf, message: String },
    #[error(
        "sha256 mismatch for {}: expected {expected}, actual {actual}; it was not started",
        path.display()
    )]
    Mismatch {
        path: PathBuf,
        expected: String,
        actual: String,
    },
}

/// The SHA-256 of a file's contents, as lowercase hex. Streams the file, so a large compiled
/// policy binary costs no more memory than a small script.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Whether `s` is a SHA-256 digest written as 64 hex digits (either case).
pub fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

impl HookSpec {
    pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(5);
    pub const DEFAULT_EVENT_TIMEOUT: Duration = Duration::from_secs(30);

    pub fn new(name: impl Into<String>, program: PathBuf, source: HookSource) -> Self {
        HookSpec {
            name: name.into(),
            program,
            args: Vec::new(),
            env: Vec::new(),
            env_passthrough: Vec::new(),
            config: Value::Object(Default::default()),
            start_timeout: Self::DEFAULT_START_TIMEOUT,
            event_timeout: Self::DEFAULT_EVENT_TIMEOUT,
            fail: None,
            mode: HookMode::Enforce,
            source,
            sha256: None,
            required: false,
            on_required_failure: RequiredHookFailure::default(),
        }
    }

    /// Checks the executable against the `sha256` pin, if any. Reads the whole file, so call
    /// it off the async threads. There is an unavoidable window between this check and the
    /// `exec`; pinned binaries belong in directories only the administrator can write.
    pub fn verify_pin(&self) -> Result<(), PinError> {
        let Some(expected) = &self.sha256 else {
            return Ok(());
        };
        let actual = sha256_file(&self.program).map_err(|e| PinError::Unreadable {
            path: self.program.clone(),
            message: e.to_string(),
        })?;
        if actual.eq_ignore_ascii_case(expected) {
            Ok(())
        } else {
            Err(PinError::Mismatch {
                path: self.program.clone(),
                expected: expected.to_ascii_lowercase(),
                actual,
            })
        }
    }

    /// The directory relative paths in this hook's replies resolve against.
    pub fn dir(&self) -> PathBuf {
        self.program
            .parent()
            .map(|p| p.to_path_buf())
            .unwrap_or_else(|| PathBuf::from("."))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SHA-256 of "hello\n".
    const HELLO: &str = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";

    fn pinned(dir: &Path, pin: Option<&str>) -> HookSpec {
        let program = dir.join("hook");
        std::fs::write(&program, "hello\n").unwrap();
        let mut spec = HookSpec::new("h", program, HookSource::Managed);
        spec.sha256 = pin.map(str::to_string);
        spec
    }

    #[test]
    fn a_matching_pin_passes_in_either_case() {
        let d = tempfile::tempdir().unwrap();
        assert!(sha256_file(&d.path().join("x")).is_err());
        assert!(pinned(d.path(), Some(HELLO)).verify_pin().is_ok());
        let upper = HELLO.to_ascii_uppercase();
        assert!(pinned(d.path(), Some(&upper)).verify_pin().is_ok());
        assert!(pinned(d.path(), None).verify_pin().is_ok());
    }

    #[test]
    fn a_mismatch_names_the_file_and_both_digests() {
        let d = tempfile::tempdir().unwrap();
        let want = "0".repeat(64);
        let e = pinned(d.path(), Some(&want)).verify_pin().unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, PinError::Mismatch { .. }));
        assert!(msg.contains(&want) && msg.contains(HELLO), "{msg}");
        assert!(
            msg.contains(&d.path().join("hook").display().to_string()),
            "{msg}"
        );
    }

    #[test]
    fn an_unreadable_executable_fails_the_check() {
        let d = tempfile::tempdir().unwrap();
        let mut spec = pinned(d.path(), Some(HELLO));
        spec.program = d.path().join("gone");
        let e = spec.verify_pin().unwrap_err();
        assert!(matches!(e, PinError::Unreadable { .. }), "{e}");
        assert!(e.to_string().contains("gone"), "{e}");
    }

    #[test]
    fn digest_syntax() {
        assert!(is_sha256_hex(HELLO));
        assert!(is_sha256_hex(&HELLO.to_ascii_uppercase()));
        assert!(!is_sha256_hex("abc"));
        assert!(!is_sha256_hex(&"g".repeat(64)));
    }
}
