//! Copying to the clipboard as pi 1.6 does (`/copy`, Ctrl+X in the editor and in `/tree`):
//! the desktop's clipboard program gets the text (a stand-in `xclip` on `PATH` records what it
//! was given), a desktop whose programs fail is told what to install instead of a "Copied"
//! nobody can promise, and an entry without text says so.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::common::pty::{PtyPi, PLACEHOLDER};
use crate::common::{path_str, TestAgent};

fn command(pi: &mut PtyPi, line: &str) {
    pi.type_text(line);
    pi.enter();
}

/// A `bin/` with stand-ins for the X11 clipboard programs, first on `PATH`, and `DISPLAY` set.
fn x11_desktop(agent: &mut TestAgent, xclip: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = agent.tmp.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    for (name, script) in [("xclip", xclip), ("xsel", "#!/bin/sh\nexit 1\n")] {
        let p = bin.join(name);
        std::fs::write(&p, script).expect("write the stand-in");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let path = format!(
        "{}:{}",
        path_str(&bin),
        std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into())
    );
    agent.env("PATH", &path);
    agent.env("DISPLAY", ":99");
    bin
}

/// Waits until the stand-in `xclip` has recorded `text` as the clipboard's contents.
fn wait_clipboard(pi: &mut PtyPi, file: &Path, text: &str) {
    pi.wait_screen("the clipboard program ran", |_| {
        std::fs::read_to_string(file).is_ok_and(|t| t == text)
    });
}

#[test]
fn ctrl_x_in_tree_copies_the_selected_entry_and_in_the_editor_the_last_answer() {
    let mut agent = TestAgent::new();
    let clip = agent.tmp.join("clipboard.txt");
    let script = format!(
        "#!/bin/sh\ncat > '{}.part' && mv '{0}.part' '{0}'\n",
        path_str(&clip)
    );
    x11_desktop(&mut agent, &script);
    let mut pi = agent.pty_faux(json!(["answer one"]), 100, 30);
    command(&mut pi, "first question");
    pi.wait_row("answer one");
    command(&mut pi, "/tree");
    pi.wait_text("ctrl+x copy");
    pi.send(b"\x1b[A");
    pi.wait_text("› • user: first question");
    pi.ctrl('x');
    pi.wait_text("Copied selected message to clipboard");
    wait_clipboard(&mut pi, &clip, "first question");
    pi.esc();
    pi.wait_editor(PLACEHOLDER);
    pi.ctrl('x');
    wait_clipboard(&mut pi, &clip, "answer one");
    pi.wait_text("Copied last agent message to clipboard");
    pi.quit();
}

#[test]
fn a_desktop_whose_clipboard_programs_fail_is_told_what_to_install() {
    let mut agent = TestAgent::new();
    x11_desktop(&mut agent, "#!/bin/sh\nexit 1\n");
    let mut pi = agent.pty_faux(json!(["the answer"]), 120, 30);
    pi.ctrl('x');
    pi.wait_text("No agent messages to copy yet.");
    command(&mut pi, "hello");
    pi.wait_row("the answer");
    command(&mut pi, "/copy");
    pi.wait_text("Clipboard unavailable: install `xclip` or `xsel`, or check X11 access");
    pi.quit();
}
