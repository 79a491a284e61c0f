//! Why a hook executable cannot be run, in words a user can act on: "it is a directory", "it is
//! not executable (mode 0644)", "its interpreter /usr/bin/python9 (from the #! line) does not
//! exist". The kernel reports all of these as a bare `EACCES` or `ENOENT`, and "No such file
//! or directory" about a file that plainly exists sends people looking in the wrong place.
//!
//! [`probe`] gathers the facts (metadata, the `#!` line, the interpreter's metadata);
//! [`explain`] is the pure judgement over them, so every case is unit-tested without files.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Linux reads at most this much of a `#!` line.
const SHEBANG_MAX: usize = 256;

/// What a path is, as far as running it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Missing,
    Directory,
    /// A device, socket or FIFO.
    Special,
    /// A regular file; `executable` is whether this process may execute it.
    File {
        mode: u32,
        executable: bool,
    },
}

/// Everything [`explain`] needs about one program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecFacts {
    pub kind: FileKind,
    /// The `#!` line's interpreter and whether the line ends in `\r` (Windows line endings).
    pub interpreter: Option<(PathBuf, bool)>,
    pub interpreter_kind: Option<FileKind>,
    /// The name ends in `.ts`, `.mts`, `.cts`, `.js`, `.mjs` or `.cjs`: most likely a pi 1.6
    /// extension module, which the extension bridge loads (`hooks::extension`), not executed.
    pub extension_module: bool,
}

/// Why a program cannot run. Messages follow the program's path ("PATH: …").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecProblem {
    #[error("it does not exist")]
    Missing,
    #[error("it is a directory, not an executable")]
    Directory,
    #[error("it is not a regular file")]
    Special,
    #[error("it is not executable (mode {mode:04o})")]
    NotExecutable { mode: u32 },
    #[error(
        "it is a TypeScript extension, not an executable: load it with -e, or list it under \
         `extensions` in the settings, and pi runs it through its extension bridge; `hooks` \
         entries are executables that speak hook-protocol.md"
    )]
    ExtensionModule,
    #[error(
        "its interpreter {} (from the #! line) does not exist{}",
        interpreter.display(),
        if *crlf { "; the line ends in a carriage return: the file has Windows line endings" } else { "" }
    )]
    MissingInterpreter { interpreter: PathBuf, crlf: bool },
    #[error("its interpreter {} (from the #! line) is not an executable file", interpreter.display())]
    BadInterpreter { interpreter: PathBuf },
}

/// The interpreter named by a file's first bytes, if they are a `#!` line: the first word
/// after `#!`, and whether the line ends in `\r`.
pub fn shebang_interpreter(head: &[u8]) -> Option<(PathBuf, bool)> {
    let rest = head.strip_prefix(b"#!")?;
    let line = rest.split(|&b| b == b'\n').next().unwrap_or(rest);
    let crlf = line.ends_with(b"\r");
    let line = String::from_utf8_lossy(line);
    let word = line.split([' ', '\t']).find(|w| !w.is_empty())?;
    // A `\r` glued to the interpreter (no arguments) is part of the name the kernel looks up.
    Some((PathBuf::from(word), crlf))
}

/// The judgement: the first reason the program cannot run, or `None` when the facts show no
/// problem (then the operating system's own error is the best there is).
pub fn explain(facts: &ExecFacts) -> Option<ExecProblem> {
    match facts.kind {
        FileKind::Missing => return Some(ExecProblem::Missing),
        FileKind::Directory => return Some(ExecProblem::Directory),
        FileKind::Special => return Some(ExecProblem::Special),
        FileKind::File {
            executable: false, ..
        } if facts.extension_module => return Some(ExecProblem::ExtensionModule),
        FileKind::File {
            executable: false,
            mode,
        } => {
            return Some(ExecProblem::NotExecutable {
                mode: mode & 0o7777,
            })
        }
        FileKind::File { .. } => {}
    }
    let (interpreter, crlf) = facts.interpreter.clone()?;
    match facts.interpreter_kind? {
        FileKind::Missing => Some(ExecProblem::MissingInterpreter { interpreter, crlf }),
        FileKind::File {
            executable: true, ..
        } => None,
        _ => Some(ExecProblem::BadInterpreter { interpreter }),
    }
}

fn kind_of(path: &Path) -> FileKind {
    let Ok(meta) = std::fs::metadata(path) else {
        return FileKind::Missing;
    };
    if meta.is_dir() {
        FileKind::Directory
    } else if !meta.is_file() {
        FileKind::Special
    } else {
        FileKind::File {
            mode: meta.permissions().mode(),
            // access(2) answers as execve(2) will, root included.
            executable: nix::unistd::access(path, nix::unistd::AccessFlags::X_OK).is_ok(),
        }
    }
}

/// Gathers the facts about `path` (reads at most its first 256 bytes).
pub fn probe(path: &Path) -> ExecFacts {
    let kind = kind_of(path);
    let interpreter = match kind {
        FileKind::File { .. } => std::fs::File::open(path).ok().and_then(|f| {
            let mut head = Vec::with_capacity(SHEBANG_MAX);
            f.take(SHEBANG_MAX as u64).read_to_end(&mut head).ok()?;
            shebang_interpreter(&head)
        }),
        _ => None,
    };
    let interpreter_kind = interpreter.as_ref().map(|(p, _)| kind_of(p));
    ExecFacts {
        kind,
        interpreter,
        interpreter_kind,
        extension_module: is_extension_module(path),
    }
}

/// Whether `path` is named as pi 1.6's extension modules are (TypeScript or JavaScript).
pub fn is_extension_module(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "ts" | "mts" | "cts" | "js" | "mjs" | "cjs"))
}

/// Why `path` cannot run, if the file system says.
pub fn diagnose(path: &Path) -> Option<ExecProblem> {
    explain(&probe(path))
}

/// A failed spawn's error, with the reason in words when one can be found; the error kind is
/// kept.
pub fn explain_spawn_error(path: &Path, err: std::io::Error) -> std::io::Error {
    match diagnose(path) {
        Some(problem) => std::io::Error::new(err.kind(), problem.to_string()),
        None => err,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(executable: bool) -> FileKind {
        FileKind::File {
            mode: if executable { 0o100755 } else { 0o100644 },
            executable,
        }
    }

    fn facts(kind: FileKind, interp: Option<(&str, bool, FileKind)>) -> ExecFacts {
        ExecFacts {
            kind,
            interpreter: interp.map(|(p, crlf, _)| (PathBuf::from(p), crlf)),
            interpreter_kind: interp.map(|(_, _, k)| k),
            extension_module: false,
        }
    }

    #[test]
    fn a_typescript_extension_is_named_as_one() {
        let mut f = facts(file(false), None);
        f.extension_module = true;
        let problem = explain(&f).map(|p| p.to_string()).unwrap_or_default();
        assert!(
            problem.contains("it is a TypeScript extension, not an executable: load it with -e"),
            "{problem}"
        );
        // An executable one is a hook like any other (a `#!/usr/bin/env tsx` script).
        f.kind = file(true);
        assert_eq!(explain(&f), None);
        assert!(is_extension_module(Path::new("ext.ts")));
        assert!(!is_extension_module(Path::new("hook.py")));
    }

    #[test]
    fn shebang_lines() {
        let p = |s: &[u8]| shebang_interpreter(s);
        assert_eq!(p(b"#!/bin/sh\necho"), Some(("/bin/sh".into(), false)));
        assert_eq!(
            p(b"#! /usr/bin/env python3 -u\n"),
            Some(("/usr/bin/env".into(), false))
        );
        assert_eq!(
            p(b"#!/usr/bin/python3\r\n"),
            Some(("/usr/bin/python3\r".into(), true))
        );
        assert_eq!(p(b"#!/bin/sh"), Some(("/bin/sh".into(), false)));
        assert_eq!(p(b"#!\n"), None);
        assert_eq!(p(b"\x7fELF"), None);
    }

    #[test]
    fn each_problem_in_words() {
        let says = |f: ExecFacts| explain(&f).map(|p| p.to_string());
        assert_eq!(
            says(facts(FileKind::Directory, None)).as_deref(),
            Some("it is a directory, not an executable")
        );
        assert_eq!(
            says(facts(file(false), None)).as_deref(),
            Some("it is not executable (mode 0644)")
        );
        assert_eq!(
            says(facts(
                file(true),
                Some(("/usr/bin/python9", false, FileKind::Missing))
            ))
            .as_deref(),
            Some("its interpreter /usr/bin/python9 (from the #! line) does not exist")
        );
        assert!(says(facts(
            file(true),
            Some(("/bin/sh\r", true, FileKind::Missing))
        ))
        .is_some_and(|s| s.contains("Windows line endings")));
        assert!(says(facts(
            file(true),
            Some(("/etc", false, FileKind::Directory))
        ))
        .is_some_and(|s| s.contains("is not an executable file")));
        assert_eq!(
            says(facts(file(true), Some(("/bin/sh", false, file(true))))),
            None
        );
        assert_eq!(says(facts(file(true), None)), None);
        assert_eq!(
            says(facts(FileKind::Missing, None)).as_deref(),
            Some("it does not exist")
        );
    }

    #[test]
    fn probing_real_files() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(diagnose(d.path()), Some(ExecProblem::Directory));
        let script = d.path().join("hook");
        std::fs::write(&script, "#!/nonexistent/interp\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(
            diagnose(&script),
            Some(ExecProblem::NotExecutable { mode: 0o644 })
        );
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            diagnose(&script),
            Some(ExecProblem::MissingInterpreter {
                interpreter: "/nonexistent/interp".into(),
                crlf: false
            })
        );
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        assert_eq!(diagnose(&script), None);
    }
}
