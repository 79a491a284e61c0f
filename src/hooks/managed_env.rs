//! The fixed environment of managed hooks (SPEC 4.9): what the administrator's hooks get in
//! place of the user's `PATH`, `HOME` and language-runtime variables.
//!
//! Why: the environment belongs to the user. With the user's `PATH`, a pinned
//! `#!/usr/bin/env python3` policy runs whatever `python3` the user puts first; with the
//! user's `HOME`, Python imports `usercustomize.py` from the user's site directory; with
//! `PYTHONPATH`, `LD_PRELOAD` or `NODE_OPTIONS`, the interpreter loads the user's code before
//! the policy's. So a managed hook gets a system `PATH` (unless its entry sets one), a `HOME`
//! of its own (unless its entry sets one), `PYTHONNOUSERSITE=1`, and never a runtime variable
//! from the user's environment — not even one its entry's `env_passthrough` names; a value the
//! entry's `env` sets is the administrator's and is kept.
//!
//! The `HOME` is one fresh, empty, private (0700) directory per `pi` process, created the
//! first time a managed hook starts and removed when the last [`ManagedHome`] handle is
//! dropped, which is when `pi` exits.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use super::spec::{HookSource, HookSpec};

/// The `PATH` of a managed hook whose entry sets none, and where bare command names in
/// managed entries are looked up.
pub const SYSTEM_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Variables of pi's environment a managed hook gets without asking (when set): harmless
/// facts about the user's session. `TMPDIR` and `SHELL` are not among them: both name
/// locations or programs the user controls.
pub const MANAGED_BASE_ENV: &[&str] = &["LANG", "TERM", "USER"];

/// Whether `name` is a variable that makes a language runtime (or the dynamic loader, or a
/// shell) load code or change how it starts: `PYTHON*`, `NODE_OPTIONS`, `NODE_PATH`,
/// `PERL5*`, `PERLLIB`, `RUBY*`, `GEM_*`, `LD_*`, `DYLD_*`, `JAVA_TOOL_OPTIONS`,
/// `_JAVA_OPTIONS`, `BASH_ENV`, `ENV`. Such a variable from the user's environment never
/// reaches a managed hook.
pub fn is_runtime_var(name: &str) -> bool {
    const PREFIXES: &[&str] = &["PYTHON", "PERL5", "RUBY", "GEM_", "LD_", "DYLD_"];
    const NAMES: &[&str] = &[
        "NODE_OPTIONS",
        "NODE_PATH",
        "PERLLIB",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "BASH_ENV",
        "ENV",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p)) || NAMES.contains(&name)
}

/// Why a name in a managed entry's `env_passthrough` is not passed, if it is not.
pub fn passthrough_refusal(name: &str) -> Option<&'static str> {
    if is_runtime_var(name) {
        Some(
            "language-runtime and loader variables from the user's environment never reach a \
             managed hook (set a value in `env` instead)",
        )
    } else if matches!(name, "PATH" | "HOME") {
        Some("a managed hook's PATH and HOME are fixed (set them in `env` instead)")
    } else {
        None
    }
}

/// The `HOME` of managed hooks whose entry sets none, created on first use. Clones share one
/// directory; it is removed when the last clone is dropped.
#[derive(Debug, Clone, Default)]
pub struct ManagedHome(Arc<OnceLock<tempfile::TempDir>>);

impl ManagedHome {
    /// The directory, created (empty, mode 0700) the first time it is asked for.
    pub fn path(&self) -> std::io::Result<&Path> {
        if let Some(dir) = self.0.get() {
            return Ok(dir.path());
        }
        let dir = create()?;
        // Another thread may have won the race; its directory is used and ours removed.
        Ok(self.0.get_or_init(|| dir).path())
    }
}

impl ManagedHome {
    /// The `HOME` to give `spec`'s process: this directory for a managed hook whose entry sets
    /// no `HOME`, nothing otherwise.
    pub fn for_spec(&self, spec: &HookSpec) -> std::io::Result<Option<&Path>> {
        if spec.source != HookSource::Managed || spec.env.iter().any(|(k, _)| k == "HOME") {
            return Ok(None);
        }
        self.path().map(Some).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("cannot create a home directory for managed hooks: {e}"),
            )
        })
    }
}

fn create() -> std::io::Result<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix("pi-managed-home-")
        .tempdir()?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))?;
    Ok(dir)
}

/// The directories of [`SYSTEM_PATH`], or of `path` when a managed entry sets one.
pub fn managed_dirs(path: Option<&str>) -> Vec<PathBuf> {
    crate::hooks::lookup::search_dirs(Some(path.unwrap_or(SYSTEM_PATH).as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_variables() {
        for name in [
            "PYTHONPATH",
            "PYTHONSTARTUP",
            "PYTHONHOME",
            "NODE_OPTIONS",
            "PERL5LIB",
            "PERL5OPT",
            "RUBYOPT",
            "RUBYLIB",
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "DYLD_INSERT_LIBRARIES",
            "BASH_ENV",
        ] {
            assert!(is_runtime_var(name), "{name}");
        }
        for name in ["PATH", "ACME_TOKEN", "LANG", "NODE_ENV", "PYTHON"] {
            assert_eq!(is_runtime_var(name), name == "PYTHON", "{name}");
        }
        assert!(passthrough_refusal("PATH").is_some());
        assert!(passthrough_refusal("ACME_TOKEN").is_none());
    }

    #[test]
    fn a_managed_hook_gets_the_fixed_environment() {
        use crate::hooks::process::{hook_environment, HookVars};
        use std::collections::HashMap;
        use std::ffi::OsString;
        let parent: HashMap<&str, &str> = [
            ("PATH", "/home/u/bin:/usr/bin"),
            ("HOME", "/home/u"),
            ("LANG", "C.UTF-8"),
            ("SHELL", "/bin/zsh"),
            ("TMPDIR", "/home/u/tmp"),
            ("PYTHONPATH", "/home/u/py"),
            ("LD_PRELOAD", "/home/u/evil.so"),
            ("ACME_TOKEN", "t"),
        ]
        .into_iter()
        .collect();
        let lookup = |k: &str| parent.get(k).map(OsString::from);
        let mut spec = HookSpec::new("p", PathBuf::from("/opt/p"), HookSource::Managed);
        spec.env_passthrough = ["PYTHONPATH", "LD_PRELOAD", "ACME_TOKEN", "PATH", "HOME"]
            .map(String::from)
            .to_vec();
        spec.env = vec![("PYTHONIOENCODING".into(), "utf-8".into())];
        let vars = HookVars {
            hook_name: "p",
            project_dir: Path::new("/proj"),
            session_id: None,
            protocol_version: 1,
            managed_home: Some(Path::new("/tmp/pi-managed-home-x")),
        };
        let env: HashMap<String, String> = hook_environment(&spec, &vars, &lookup)
            .into_iter()
            .map(|(k, v)| (k.into_string().unwrap(), v.into_string().unwrap()))
            .collect();
        let expected: HashMap<String, String> = [
            ("PATH", SYSTEM_PATH),
            ("HOME", "/tmp/pi-managed-home-x"),
            ("LANG", "C.UTF-8"),
            ("PYTHONNOUSERSITE", "1"),
            ("ACME_TOKEN", "t"),
            ("PYTHONIOENCODING", "utf-8"),
            ("PI_HOOK_NAME", "p"),
            ("PI_PROJECT_DIR", "/proj"),
            ("PI_PROTOCOL_VERSION", "1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(env, expected);
        // What the administrator sets in `env` wins, PATH and HOME included.
        spec.env = vec![
            ("PATH".into(), "/opt/bin".into()),
            ("HOME".into(), "/var/p".into()),
        ];
        let home = ManagedHome::default();
        assert_eq!(home.for_spec(&spec).unwrap(), None);
        let env = hook_environment(&spec, &vars, &lookup);
        assert!(env.contains(&("PATH".into(), "/opt/bin".into())));
        assert!(env.contains(&("HOME".into(), "/var/p".into())));
        spec.source = HookSource::User;
        assert_eq!(home.for_spec(&spec).unwrap(), None);
    }

    #[test]
    fn the_managed_home_is_private_shared_and_removed_with_the_last_handle() {
        use std::os::unix::fs::PermissionsExt;
        let home = ManagedHome::default();
        let again = home.clone();
        let path = home.path().unwrap().to_path_buf();
        assert_eq!(again.path().unwrap(), path);
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o700);
        assert_eq!(std::fs::read_dir(&path).unwrap().count(), 0);
        drop(home);
        assert!(path.exists());
        drop(again);
        assert!(!path.exists());
    }
}
