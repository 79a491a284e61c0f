//! The system prompt's `docs` section: where pi's own documentation is, so the model reads it
//! when the user asks about pi itself (pi 1.6 points at its npm package's README, docs and
//! examples). Our documentation is the repository's `README.md`, `hook-protocol.md`,
//! `sample-hooks/` and `examples/`, and a `cargo install`ed binary carries none of it, so the
//! section names a directory only where one is found on disk, and only the files found there:
//! the prompt never sends the model to a path that does not exist. Without one there is no
//! `docs` section at all.
//!
//! Where the directory comes from, first match wins: `PI_PACKAGE_DIR` (the override pi 1.6
//! reads too, for packagers who install the docs elsewhere); the nearest ancestor of the
//! running executable holding `README.md` and `hook-protocol.md` (a build in a checkout, or an
//! install that keeps the docs above `bin/`); the checkout the binary was built from, if it is
//! still there.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The files that make a directory pi's documentation root.
const MARKERS: [&str; 2] = ["README.md", "hook-protocol.md"];

/// What the model may want to read, by topic, relative to the root. A topic is listed with
/// the paths that exist; one with none is left out.
const TOPICS: [(&str, &[&str]); 3] = [
    (
        "extensions, which are hooks here",
        &["hook-protocol.md", "sample-hooks/", "examples/echo_hook.rs"],
    ),
    ("RPC clients", &["examples/rpc_client.py"]),
    ("benchmarks", &["bench/README.md"]),
];

/// The documentation root for this process, found once (see the module doc).
pub fn docs_root() -> Option<&'static Path> {
    static ROOT: OnceLock<Option<PathBuf>> = OnceLock::new();
    ROOT.get_or_init(find_root).as_deref()
}

fn find_root() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("PI_PACKAGE_DIR").filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        return holds_docs(&dir).then_some(dir);
    }
    let exe = std::env::current_exe()
        .ok()
        .and_then(|e| e.canonicalize().ok());
    if let Some(found) = exe
        .as_deref()
        .and_then(Path::parent)
        .and_then(|dir| dir.ancestors().find(|d| holds_docs(d)))
    {
        return Some(found.to_path_buf());
    }
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR"));
    holds_docs(built_from).then(|| built_from.to_path_buf())
}

fn holds_docs(dir: &Path) -> bool {
    MARKERS.iter().all(|m| dir.join(m).is_file())
}

/// The section's text for documentation under `root`; pi 1.6's wording, with our paths.
pub fn section(root: &Path) -> String {
    let root_str = root.display().to_string();
    let mut lines = vec![
        "Pi documentation (read only when the user asks about the harness itself, its SDK, \
         extensions, themes, skills, or TUI):"
            .to_string(),
        format!("- Main documentation: {}", root.join("README.md").display()),
        format!("- Additional docs: {root_str}"),
    ];
    let examples = root.join("examples");
    if examples.is_dir() {
        lines.push(format!(
            "- Examples: {} (extensions, custom tools, SDK)",
            examples.display()
        ));
    }
    lines.push(
        "- When reading pi docs or examples, resolve docs/... under Additional docs and \
         examples/... under Examples, not the current working directory"
            .to_string(),
    );
    let topics: Vec<String> = TOPICS
        .iter()
        .filter_map(|(topic, paths)| {
            let present: Vec<&str> = paths
                .iter()
                .copied()
                .filter(|p| root.join(p).exists())
                .collect();
            (!present.is_empty()).then(|| format!("{topic} ({})", present.join(", ")))
        })
        .collect();
    if !topics.is_empty() {
        lines.push(format!("- When asked about: {}", topics.join(", ")));
    }
    lines.push(
        "- Before implementing harness changes, read the relevant docs and examples in full, \
         following related cross-references."
            .to_string(),
    );
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_names_only_what_exists() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("README.md"), "r").unwrap();
        std::fs::write(root.join("hook-protocol.md"), "h").unwrap();
        let text = section(root);
        assert!(text.contains(&format!(
            "- Main documentation: {}",
            root.join("README.md").display()
        )));
        assert!(!text.contains("- Examples:"), "{text}");
        assert!(
            text.contains(
                "- When asked about: extensions, which are hooks here (hook-protocol.md)\n"
            ),
            "{text}"
        );
        assert!(!text.contains("RPC clients"), "{text}");

        std::fs::create_dir(root.join("examples")).unwrap();
        std::fs::write(root.join("examples/rpc_client.py"), "").unwrap();
        let text = section(root);
        assert!(text.contains(&format!(
            "- Examples: {} (extensions, custom tools, SDK)",
            root.join("examples").display()
        )));
        assert!(
            text.contains("RPC clients (examples/rpc_client.py)"),
            "{text}"
        );
    }

    #[test]
    fn the_checkout_is_a_docs_root() {
        assert!(holds_docs(Path::new(env!("CARGO_MANIFEST_DIR"))));
        assert!(!holds_docs(Path::new("/nonexistent-pi-docs")));
    }
}
