//! What a Claude Code `ask` shows the person asked. Claude Code shows the command it asks
//! about in its own prompt; pi's confirm dialog (and an RPC client's) shows what it is given,
//! so the question carries the exact call that would run — the bash command as it is, any
//! other tool's arguments as JSON — after the hook's reason. An approval that named only the
//! tool ("Allow Bash?") would rely on the transcript above it, which text with escape
//! sequences, or simply a long scrollback, can make show something else.

use serde_json::Value;

/// The confirm's message: the hook's `reason`, then the call that would run (`input` with
/// the hook's `patch`, a merge patch, applied).
pub fn message(reason: &str, claude_tool: &str, input: &Value, patch: Option<&Value>) -> String {
    let mut input = input.clone();
    if let Some(p) = patch {
        json_patch::merge(&mut input, p);
    }
    let subject = match (claude_tool, input.get("command").and_then(Value::as_str)) {
        ("Bash", Some(command)) => format!("Bash command:\n{command}"),
        _ => format!(
            "{claude_tool} arguments:\n{}",
            serde_json::to_string_pretty(&input).unwrap_or_else(|_| input.to_string())
        ),
    };
    format!("{reason}\n\n{subject}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_bash_ask_shows_the_command_whole_and_exact() {
        let command = "rm -rf ~/x\u{1b}[2K\r ls -la\necho two";
        let m = message("risky", "Bash", &json!({"command": command}), None);
        assert_eq!(m, format!("risky\n\nBash command:\n{command}"));
    }

    #[test]
    fn the_question_is_about_the_patched_call() {
        let m = message(
            "check",
            "Bash",
            &json!({"command": "ls"}),
            Some(&json!({"command": "ls -la /"})),
        );
        assert!(m.ends_with("Bash command:\nls -la /"), "{m}");
    }

    #[test]
    fn other_tools_show_their_arguments_as_json() {
        let m = message(
            "w",
            "Write",
            &json!({"path": "a.txt", "content": "x"}),
            None,
        );
        assert!(m.starts_with("w\n\nWrite arguments:\n{"), "{m}");
        assert!(m.contains("\"path\": \"a.txt\""), "{m}");
    }
}
