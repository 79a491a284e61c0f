//! The module boundaries of issue 26, as a gate: each rule names a folder (or file) of `src/`
//! and the crate paths its code may not name, and fails with `file:line` of every offence, the
//! way clippy's `unwrap_used` gate names each `unwrap`. Comments and test code (`tests.rs`,
//! `*_tests.rs`, `tests/` folders, `#[cfg(test)]` modules) are not scanned: a test may reach
//! across a boundary to drive what it tests.
//!
//! This reads source text rather than `cargo tree` (one crate has no internal edges there); a
//! `use crate::x` or `crate::x::` path is exactly what an import across a boundary looks like.

use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name == "tests.rs"
        || name.ends_with("_tests.rs")
        || name == "test_support.rs"
        || name == "test_util.rs"
        || path.components().any(|c| c.as_os_str() == "tests")
}

/// Every non-test `.rs` file at or under `root` (a file or a folder).
fn sources(root: &Path) -> Vec<PathBuf> {
    if root.is_file() {
        return vec![root.to_path_buf()];
    }
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") && !is_test_file(&p) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The code of `text` line by line (1-based numbers), without comments and `#[cfg(test)]`
/// items: a `//` comment is cut (string literals that contain `//` are rare enough in `use`
/// lines to ignore), and after `#[cfg(test)]` the next item is skipped up to its closing brace
/// or semicolon.
fn code_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut skipping = false;
    let mut depth = 0i64;
    let mut entered = false;
    for (i, line) in text.lines().enumerate() {
        let code = match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        };
        if !skipping && code.trim() == "#[cfg(test)]" {
            skipping = true;
            depth = 0;
            entered = false;
            continue;
        }
        if skipping {
            for ch in code.chars() {
                match ch {
                    '{' => {
                        depth += 1;
                        entered = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            let item_ended =
                (entered && depth <= 0) || (!entered && code.trim_end().ends_with(';'));
            if item_ended {
                skipping = false;
            }
            continue;
        }
        out.push((i + 1, code.to_string()));
    }
    out
}

/// The lines under `root` (relative to `src/`) that name one of `forbidden` (`crate::x` paths
/// or other literal text), as `file:line: text`; files in `except` (paths relative to `src/`,
/// or folders ending in `/`) are not read.
fn offences(root: &str, forbidden: &[&str], except: &[&str]) -> Vec<String> {
    let base = src();
    let mut found = Vec::new();
    for file in sources(&base.join(root)) {
        let rel = file
            .strip_prefix(&base)
            .unwrap_or(&file)
            .display()
            .to_string();
        // An exception ending in `/` is a folder.
        if except
            .iter()
            .any(|e| rel == *e || (e.ends_with('/') && rel.starts_with(e)))
        {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for (n, line) in code_lines(&text) {
            if forbidden.iter().any(|f| line.contains(f)) {
                found.push(format!("src/{rel}:{n}: {}", line.trim()));
            }
        }
    }
    found
}

#[track_caller]
fn assert_none(rule: &str, found: Vec<String>) {
    assert!(
        found.is_empty(),
        "{rule}; these lines cross it:\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn the_scanner_skips_comments_and_test_modules() {
    let text = "use crate::a; // crate::b\n#[cfg(test)]\nmod tests {\n    use crate::c;\n}\n\
                #[cfg(test)]\nmod more;\nuse crate::d;\n";
    let lines: Vec<String> = code_lines(text).into_iter().map(|(_, l)| l).collect();
    let joined = lines.join("\n");
    assert!(
        joined.contains("crate::a") && joined.contains("crate::d"),
        "{joined}"
    );
    assert!(
        !joined.contains("crate::b") && !joined.contains("crate::c"),
        "{joined}"
    );
    // The rules do see real files.
    assert!(!sources(&src().join("controller")).is_empty());
}

/// Issue 26, item 1: the controller is driven by every front end and knows none of them; it
/// takes its own options (`controller::options`), which `app/` builds from the flags.
#[test]
fn the_controller_knows_no_front_end() {
    assert_none(
        "the controller must not use the command line, the app or a mode",
        offences(
            "controller",
            &["crate::cli", "crate::app", "crate::modes"],
            &[],
        ),
    );
}

/// Issue 26, item 2: storage prepares what to summarise and stores the result; the model calls
/// are the controller's (`controller::summarize`).
#[test]
fn storage_makes_no_model_calls() {
    assert_none(
        "the session module must not reach the providers",
        offences("session", &["crate::provider", "crate::agent"], &[]),
    );
}

/// Issue 26, item 4: settings types live with settings (`setting_types`), so settings know
/// neither the loop nor the tools.
#[test]
fn settings_know_no_loop_and_no_tools() {
    assert_none(
        "config must not use the agent loop or the tools",
        offences("config", &["crate::agent", "crate::tools"], &[]),
    );
    assert_none(
        "the setting types are a leaf: they use no other module of pi",
        offences("setting_types", &["crate::", "super::super"], &[]),
    );
}

/// Issue 26, item 6: one streaming delta type (`delta::StreamDelta`); RPC puts that type on
/// the wire. A second definition declares the deltas' `contentIndex` field again.
#[test]
fn there_is_one_delta_type() {
    assert_none(
        "only src/delta.rs defines the streaming deltas",
        offences("", &["content_index: usize"], &["delta.rs"]),
    );
}

/// Issue 26, item 3: one module starts and stops processes (new process groups, signals,
/// waiting for a group to be gone, kill on drop): the watchdog's, which forks every process pi
/// starts (`watchdog::Command`, `watchdog::ProcessGroup`). Hooks, MCP servers, Claude Code
/// hooks and the bash tool go through it.
#[test]
fn one_place_starts_and_stops_processes() {
    let process_module = ["watchdog/"];
    assert_none(
        "only the process module (src/watchdog/) signals processes and process groups",
        offences(
            "",
            &[
                "killpg",
                "libc::kill",
                "signal::kill",
                "signal::{kill",
                "signal_group",
                "wait_group_gone",
            ],
            &process_module,
        ),
    );
    assert_none(
        "only the process module (src/watchdog/) starts processes in a process group of their own",
        offences(
            "",
            &[
                "tokio::process::Command",
                ".process_group(",
                "setpgid",
                "setsid(",
            ],
            &process_module,
        ),
    );
    assert_none(
        "nothing outside hooks borrows the hooks' process code",
        offences("mcp", &["crate::hooks::process"], &[]),
    );
}

/// Issue 26, item 5: hooks reach MCP through the controller (`hooks::mcp_calls::McpControl`,
/// which the controller implements over its hub).
#[test]
fn hooks_do_not_use_mcp() {
    assert_none(
        "hooks must not use MCP directly",
        offences("hooks", &["crate::mcp"], &[]),
    );
}
