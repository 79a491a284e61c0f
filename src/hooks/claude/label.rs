//! The readable part of a Claude Code hook's name, `claude:<Event>:<label>`: a hook that runs a
//! script is named after the script (`python3 -u "$CLAUDE_PROJECT_DIR"/x.py 2>/dev/null` →
//! `x.py`); an inline command — a pipeline, or an interpreter's `-c` as Claude Code's
//! documentation writes many hooks — is named after its own start, shortened at a word to
//! [`MAX_CHARS`], because its first word (`jq`, `grep`, `python3`) says nothing about it.

/// Longest inline label, `…` included.
pub const MAX_CHARS: usize = 40;

/// Programs that run the script named after them (their options skipped).
const RUNNERS: &[&str] = &[
    "python", "python3", "bash", "sh", "zsh", "node", "bun", "deno", "uv", "run", "npx", "env",
    "exec", "ruby", "perl", "tsx", "ts-node", "uvx", "pipx",
];

/// Options that make a runner run the text after them instead of a script.
const INLINE: &[&str] = &["-c", "-e", "--eval", "-p", "--print"];

/// Extensions of the scripts hooks are written in.
const SCRIPT_EXT: &[&str] = &[
    "py", "sh", "bash", "zsh", "js", "mjs", "cjs", "ts", "mts", "rb", "pl", "php", "lua", "ps1",
];

/// The label of `command` (shell form, or exec form joined).
pub fn label(command: &str) -> String {
    let words = shell_words::split(command)
        .unwrap_or_else(|_| command.split_whitespace().map(str::to_string).collect());
    let mut inline = false;
    let script = words.iter().find(|w| {
        if INLINE.contains(&w.as_str()) {
            inline = true;
        }
        !w.starts_with('-') && !w.contains('=') && !RUNNERS.contains(&w.as_str())
    });
    match script {
        Some(w) if !inline && looks_like_file(w) => {
            let base = w.rsplit('/').next().unwrap_or(w);
            if base.is_empty() {
                w.clone()
            } else {
                base.to_string()
            }
        }
        _ => shorten(command),
    }
}

fn looks_like_file(word: &str) -> bool {
    word.contains('/')
        || word
            .rsplit_once('.')
            .is_some_and(|(stem, ext)| !stem.is_empty() && SCRIPT_EXT.contains(&ext))
}

/// `text` on one line, cut at a word so that it is at most [`MAX_CHARS`] with the `…`.
fn shorten(text: &str) -> String {
    let words: Vec<String> = text
        .split_whitespace()
        .map(|w| {
            w.chars()
                .map(|c| if c.is_control() { '?' } else { c })
                .collect()
        })
        .collect();
    let whole = words.join(" ");
    if whole.chars().count() <= MAX_CHARS {
        return if whole.is_empty() {
            "command".into()
        } else {
            whole
        };
    }
    let mut out = String::new();
    for w in &words {
        let sep = usize::from(!out.is_empty());
        if out.chars().count() + sep + w.chars().count() + 1 > MAX_CHARS {
            break;
        }
        if sep == 1 {
            out.push(' ');
        }
        out.push_str(w);
    }
    if out.is_empty() {
        out = whole.chars().take(MAX_CHARS - 1).collect();
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_are_named_by_their_file_inline_commands_by_their_start() {
        assert_eq!(
            label("\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/check.sh 2>/dev/null"),
            "check.sh"
        );
        assert_eq!(label("python3 -u guard.py"), "guard.py");
        assert_eq!(label("uv run --script hooks/lint.py"), "lint.py");
        assert_eq!(label("/opt/fmt --check 'x y'"), "fmt");
        assert_eq!(label("prettier --write"), "prettier --write");
        assert_eq!(
            label("jq -r '.tool_input.command' | grep -q 'rm -rf' && exit 2 || exit 0"),
            "jq -r '.tool_input.command' | grep -q…"
        );
        assert_eq!(
            label("python3 -c \"import json,sys; d=json.load(sys.stdin)\""),
            "python3 -c \"import json,sys;…"
        );
        assert_eq!(
            label("bash -c 'cat > /tmp/x.sh'"),
            "bash -c 'cat > /tmp/x.sh'"
        );
        let long = "x".repeat(60);
        assert_eq!(label(&long).chars().count(), MAX_CHARS);
        assert_eq!(label("echo 'a\nb'"), "echo 'a b'");
    }
}
