//! What unit tests across modules share: the faux model they run against, and the Python
//! interpreter test hooks are started with.

use std::path::PathBuf;

/// The faux model every in-process run uses (`faux-1`, a 100k-token window).
pub(crate) fn faux_model() -> crate::provider::Model {
    crate::provider::Model {
        id: "faux-1".into(),
        name: "faux".into(),
        provider: "faux".into(),
        api: "faux".into(),
        base_url: String::new(),
        headers: Default::default(),
        reasoning: false,
        context_window: 100_000,
        max_tokens: 1000,
        compat: serde_json::Value::Null,
        cost: Default::default(),
    }
}

/// The real interpreter, not a version-manager shim (a pyenv shim is a shell script that adds
/// its own variables to the environment and costs a fork per start).
pub(crate) fn python() -> PathBuf {
    static PYTHON: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PYTHON
        .get_or_init(|| {
            std::process::Command::new("python3")
                .args(["-c", "import sys; print(sys.executable)"])
                .output()
                .ok()
                .and_then(|o| String::from_utf8(o.stdout).ok())
                .map(|s| PathBuf::from(s.trim()))
                .filter(|p| p.is_absolute())
                .unwrap_or_else(|| PathBuf::from("python3"))
        })
        .clone()
}
