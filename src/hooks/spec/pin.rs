//! SHA-256 pins that pin what runs: a pinned file is opened once, hashed through that
//! descriptor, and that same descriptor is what the hook process executes (installed in the
//! child at a fixed number N and executed as `/proc/self/fd/N`). Replacing, renaming or
//! re-linking the path after the check changes nothing: the path is never opened again.
//!
//! The descriptor stays open in the hook (without close-on-exec) because for a `#!` script
//! the kernel hands the interpreter the path `/proc/self/fd/N`, which the interpreter opens.
//!
//! An *interpreter entry* is a command whose program is a known interpreter (its file name is
//! `python`, `node`, `bash`, … possibly with a version, see [`is_interpreter`]). For it,
//! `sha256` pins the script — the first argument that is not an option — which is opened,
//! hashed and passed to the interpreter as `/proc/self/fd/4`; `interpreter_sha256` pins the
//! interpreter binary, executed through its descriptor the same way.

use std::fs::File;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use nix::fcntl::{fcntl, FcntlArg, OFlag};
use sha2::{Digest, Sha256};

use super::HookSpec;

/// Where a pinned program (or interpreter) is installed in the hook process.
pub const PROGRAM_FD: i32 = 3;
/// Where the pinned script of an interpreter entry is installed.
pub const SCRIPT_FD: i32 = 4;

/// Program names that take a script as their first non-option argument.
const INTERPRETERS: &[&str] = &[
    "python", "pypy", "node", "nodejs", "bash", "sh", "dash", "zsh", "ksh", "mksh", "perl", "ruby",
    "php", "lua",
];
/// Options after which an interpreter runs inline code or a module: no script follows.
const NO_SCRIPT_OPTIONS: &[&str] = &["-c", "-m", "-e", "--eval", "-"];

/// Why a pinned hook must not be started. Messages name the pin, the file and the digests.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PinError {
    #[error("cannot verify the {field} pin of {}: {message}", path.display())]
    Unreadable {
        field: &'static str,
        path: PathBuf,
        message: String,
    },
    #[error("cannot verify the {field} pin of {}: it is not a regular file", path.display())]
    NotAFile { field: &'static str, path: PathBuf },
    #[error(
        "{field} mismatch for {}: expected {expected}, actual {actual}; it was not started",
        path.display()
    )]
    Mismatch {
        field: &'static str,
        path: PathBuf,
        expected: String,
        actual: String,
    },
    #[error(
        "`sha256` of an interpreter entry pins its script, but {} is given no script \
         (the first argument that is not an option)",
        program.display()
    )]
    NoScript { program: PathBuf },
    #[error(
        "`interpreter_sha256` needs a command that starts with an interpreter (python, node, \
         bash, sh, perl, ruby, …); {} is not one",
        program.display()
    )]
    NotAnInterpreter { program: PathBuf },
}

/// The pinned files of one start, opened and verified: what the process must be given.
#[derive(Debug, Default)]
pub struct Verified {
    /// The program (for an interpreter entry: the interpreter) when it is pinned.
    pub program: Option<File>,
    /// An interpreter entry's pinned script and its index in `args`.
    pub script: Option<(usize, File)>,
}

/// Whether a program is a known interpreter: its file name is one of [`INTERPRETERS`],
/// optionally followed by a version made of digits and dots (`python3`, `python3.12`, `lua5.4`).
pub fn is_interpreter(program: &Path) -> bool {
    let Some(name) = program.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    INTERPRETERS.contains(&base)
}

/// The index of the script among an interpreter's arguments: the first that does not start
/// with `-`, unless an option that gives inline code or a module (`-c`, `-m`, `-e`, `--eval`,
/// `-`) comes first.
pub fn script_index(args: &[String]) -> Option<usize> {
    for (i, a) in args.iter().enumerate() {
        if NO_SCRIPT_OPTIONS.contains(&a.as_str()) {
            return None;
        }
        if !a.starts_with('-') {
            return Some(i);
        }
    }
    None
}

/// The SHA-256 of a file's contents, as lowercase hex.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    sha256_of(&mut File::open(path)?)
}

/// Hashes from the current offset to the end. Streams, so a large compiled policy binary costs
/// no more memory than a small script.
fn sha256_of(file: &mut File) -> std::io::Result<String> {
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

/// Opens `path` for reading and checks that it is a regular file. `O_NONBLOCK` keeps a FIFO
/// planted at the path from blocking the open; it is cleared again for the hook's sake.
fn open_regular(field: &'static str, path: &Path) -> Result<File, PinError> {
    use std::os::unix::fs::OpenOptionsExt;
    let unreadable = |e: std::io::Error| PinError::Unreadable {
        field,
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(OFlag::O_NONBLOCK.bits())
        .open(path)
        .map_err(unreadable)?;
    if !file.metadata().map_err(unreadable)?.is_file() {
        return Err(PinError::NotAFile {
            field,
            path: path.to_path_buf(),
        });
    }
    fcntl(file.as_raw_fd(), FcntlArg::F_SETFL(OFlag::empty())).map_err(|e| unreadable(e.into()))?;
    Ok(file)
}

/// Opens, hashes and compares one pinned file; returns the open file on a match.
fn open_pinned(field: &'static str, path: &Path, expected: &str) -> Result<File, PinError> {
    let mut file = open_regular(field, path)?;
    let actual = sha256_of(&mut file).map_err(|e| PinError::Unreadable {
        field,
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    if actual.eq_ignore_ascii_case(expected) {
        Ok(file)
    } else {
        Err(PinError::Mismatch {
            field,
            path: path.to_path_buf(),
            expected: expected.to_ascii_lowercase(),
            actual,
        })
    }
}

impl HookSpec {
    /// Whether any file of this hook is pinned (and starting it reads and hashes files).
    pub fn is_pinned(&self) -> bool {
        self.sha256.is_some() || self.interpreter_sha256.is_some()
    }

    /// Checks that the pins fit the command: `interpreter_sha256` only for an interpreter
    /// entry, and an interpreter entry's `sha256` only with a script to pin.
    pub fn check_pins(&self) -> Result<(), PinError> {
        let interpreter = is_interpreter(&self.program);
        if self.interpreter_sha256.is_some() && !interpreter {
            return Err(PinError::NotAnInterpreter {
                program: self.program.clone(),
            });
        }
        if self.sha256.is_some() && interpreter && script_index(&self.args).is_none() {
            return Err(PinError::NoScript {
                program: self.program.clone(),
            });
        }
        Ok(())
    }

    /// Opens and verifies every pinned file, before every spawn. `cwd` is the hook's working
    /// directory, against which the interpreter would resolve a relative script path. Reads
    /// whole files: call it off the async threads.
    pub fn verify(&self, cwd: &Path) -> Result<Verified, PinError> {
        self.check_pins()?;
        let mut verified = Verified::default();
        if !is_interpreter(&self.program) {
            if let Some(pin) = &self.sha256 {
                verified.program = Some(open_pinned("sha256", &self.program, pin)?);
            }
            return Ok(verified);
        }
        if let Some(pin) = &self.interpreter_sha256 {
            verified.program = Some(open_pinned("interpreter_sha256", &self.program, pin)?);
        }
        if let (Some(pin), Some(i)) = (&self.sha256, script_index(&self.args)) {
            // As the interpreter will see it: verbatim, relative to its working directory.
            let script = cwd.join(&self.args[i]);
            verified.script = Some((i, open_pinned("sha256", &script, pin)?));
        }
        Ok(verified)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::spec::HookSource;

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
    fn a_matching_pin_passes_in_either_case_and_keeps_the_file_open() {
        let d = tempfile::tempdir().unwrap();
        assert!(sha256_file(&d.path().join("x")).is_err());
        let v = pinned(d.path(), Some(HELLO)).verify(d.path()).unwrap();
        assert!(v.program.is_some() && v.script.is_none());
        let upper = HELLO.to_ascii_uppercase();
        assert!(pinned(d.path(), Some(&upper)).verify(d.path()).is_ok());
        let unpinned = pinned(d.path(), None).verify(d.path()).unwrap();
        assert!(unpinned.program.is_none() && unpinned.script.is_none());
    }

    #[test]
    fn a_mismatch_names_the_pin_the_file_and_both_digests() {
        let d = tempfile::tempdir().unwrap();
        let want = "0".repeat(64);
        let e = pinned(d.path(), Some(&want)).verify(d.path()).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, PinError::Mismatch { .. }));
        assert!(msg.starts_with("sha256 mismatch for "), "{msg}");
        assert!(msg.contains(&want) && msg.contains(HELLO), "{msg}");
        assert!(
            msg.contains(&d.path().join("hook").display().to_string()),
            "{msg}"
        );
    }

    #[test]
    fn an_unreadable_or_irregular_file_fails_the_check_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let mut spec = pinned(d.path(), Some(HELLO));
        spec.program = d.path().join("gone");
        let e = spec.verify(d.path()).unwrap_err();
        assert!(matches!(e, PinError::Unreadable { .. }), "{e}");
        assert!(e.to_string().contains("gone"), "{e}");
        // A FIFO would block a plain open until someone writes to it.
        let fifo = d.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        spec.program = fifo;
        let e = spec.verify(d.path()).unwrap_err();
        assert!(matches!(e, PinError::NotAFile { .. }), "{e}");
        spec.program = d.path().to_path_buf();
        assert!(matches!(
            spec.verify(d.path()),
            Err(PinError::NotAFile { .. })
        ));
    }

    #[test]
    fn interpreters_are_known_by_file_name_with_an_optional_version() {
        for yes in [
            "/usr/bin/python3",
            "python3.12",
            "/bin/sh",
            "node",
            "/usr/local/bin/lua5.4",
            "perl",
        ] {
            assert!(is_interpreter(Path::new(yes)), "{yes}");
        }
        for no in [
            "/opt/acme/policy",
            "python-policy",
            "shell",
            "nodemon",
            "sh.py",
        ] {
            assert!(!is_interpreter(Path::new(no)), "{no}");
        }
    }

    #[test]
    fn the_script_is_the_first_argument_that_is_not_an_option() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(script_index(&args(&["hook.py", "--strict"])), Some(0));
        assert_eq!(script_index(&args(&["-u", "-B", "hook.py"])), Some(2));
        assert_eq!(script_index(&args(&["-c", "print(1)"])), None);
        assert_eq!(script_index(&args(&["-m", "policy"])), None);
        assert_eq!(script_index(&args(&["-"])), None);
        assert_eq!(script_index(&args(&["-u"])), None);
    }

    #[test]
    fn pins_must_fit_the_command() {
        let d = tempfile::tempdir().unwrap();
        let mut spec = pinned(d.path(), None);
        spec.interpreter_sha256 = Some(HELLO.into());
        let e = spec.check_pins().unwrap_err();
        assert!(matches!(e, PinError::NotAnInterpreter { .. }), "{e}");
        assert!(e.to_string().contains("interpreter_sha256"), "{e}");
        let mut spec = HookSpec::new("h", PathBuf::from("/usr/bin/python3"), HookSource::User);
        spec.args = vec!["-c".into(), "pass".into()];
        spec.sha256 = Some(HELLO.into());
        let e = spec.check_pins().unwrap_err();
        assert!(matches!(e, PinError::NoScript { .. }), "{e}");
        spec.args = vec!["hook.py".into()];
        assert!(spec.check_pins().is_ok());
    }

    #[test]
    fn an_interpreter_entry_pins_its_script_and_optionally_the_interpreter() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("hook.sh"), "hello\n").unwrap();
        let sh = which::which("sh").unwrap();
        let mut spec = HookSpec::new("h", sh.clone(), HookSource::Managed);
        spec.args = vec!["-e".into(), "hook.sh".into()];
        spec.sha256 = Some(HELLO.into());
        // `sh -e` is an option of sh, not inline code; but `-e` is a code option elsewhere,
        // so the rule treats it as one: no script.
        assert!(matches!(
            spec.verify(d.path()),
            Err(PinError::NoScript { .. })
        ));
        spec.args = vec!["hook.sh".into(), "--flag".into()];
        let v = spec.verify(d.path()).unwrap();
        assert!(v.program.is_none());
        assert_eq!(v.script.as_ref().map(|s| s.0), Some(0));
        spec.interpreter_sha256 = Some("0".repeat(64));
        let e = spec.verify(d.path()).unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("interpreter_sha256 mismatch for "), "{msg}");
        assert!(msg.contains(&sh.display().to_string()), "{msg}");
        spec.interpreter_sha256 = Some(sha256_file(&sh).unwrap());
        let v = spec.verify(d.path()).unwrap();
        assert!(v.program.is_some() && v.script.is_some());
        spec.sha256 = Some("0".repeat(64));
        let e = spec.verify(d.path()).unwrap_err().to_string();
        assert!(
            e.starts_with("sha256 mismatch for ") && e.contains("hook.sh"),
            "{e}"
        );
    }

    #[test]
    fn digest_syntax() {
        assert!(is_sha256_hex(HELLO));
        assert!(is_sha256_hex(&HELLO.to_ascii_uppercase()));
        assert!(!is_sha256_hex("abc"));
        assert!(!is_sha256_hex(&"g".repeat(64)));
    }
}
