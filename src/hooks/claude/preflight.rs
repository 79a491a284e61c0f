//! What pi checks of a Claude Code hook's command before starting it. An interpreter told to
//! run a script that does not exist does not say so in a way Claude Code's exit codes can
//! tell apart from an answer: `python3 /missing.py` exits 2 ("block", with python's complaint
//! as the reason), `node /missing.js` exits 1 ("allow", a non-blocking error). Either way the
//! gate never ran. So when a command is an interpreter followed by a script path, pi resolves
//! the path as the shell would (variables of the hook's environment, `~`, relative to the
//! project directory) and, if nothing is there, the hook is a failure under its `fail` policy.
//!
//! Only what can be told for certain is checked: the first command of a shell line, a known
//! interpreter, a word that is plainly a file (a `/` or a script extension), no inline code
//! (`-c`, `-e`), no command substitution or glob. Everything else runs as written.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::config::Program;

/// Programs whose first non-option argument is the script they run.
const INTERPRETERS: &[&str] = &[
    "python", "python3", "node", "bash", "sh", "zsh", "dash", "ruby", "perl", "bun", "deno", "tsx",
    "ts-node", "php", "lua",
];

/// Options after which there is no script: the code is inline, or a module is run.
const NO_SCRIPT: &[&str] = &["-c", "-e", "--eval", "-p", "--print", "-m", "-", "-i"];

/// Subcommands that come before the script (`deno run x.ts`, `bun run x.ts`).
const SUBCOMMANDS: &[&str] = &["run"];

/// Extensions that mark a word as a script file.
const SCRIPT_EXT: &[&str] = &[
    "py", "sh", "bash", "zsh", "js", "mjs", "cjs", "ts", "mts", "cts", "rb", "pl", "php", "lua",
];

/// `text` with pi's own variables (`own`) substituted where written as `$NAME` or `${NAME}`:
/// an exec-form command has no shell to do it, and plugins write `${CLAUDE_PLUGIN_ROOT}` in
/// their `args` as in their command strings.
pub fn substitute(text: &str, own: &[(String, String)]) -> String {
    let mut out = text.to_string();
    for (k, v) in own {
        out = out.replace(&format!("${{{k}}}"), v);
        // `$NAME` only where the name ends: `$CLAUDE_PLUGIN_ROOTX` is another variable.
        let bare = format!("${k}");
        let mut rest = out.as_str();
        let mut done = String::new();
        while let Some(i) = rest.find(&bare) {
            let after = &rest[i + bare.len()..];
            done.push_str(&rest[..i]);
            if after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                done.push_str(&bare);
            } else {
                done.push_str(v);
            }
            rest = after;
        }
        done.push_str(rest);
        out = done;
    }
    out
}

/// Why `program` cannot run, if the script it names is missing.
pub fn missing_script(
    program: &Program,
    cwd: &Path,
    env: &[(OsString, OsString)],
) -> Option<String> {
    let words: Vec<String> = match program {
        Program::Shell { command, .. } => first_command(command)?,
        Program::Exec { program, args } => std::iter::once(program.clone())
            .chain(args.iter().cloned())
            .collect(),
    };
    let expand_vars = matches!(program, Program::Shell { .. });
    let mut words = words
        .into_iter()
        .skip_while(|w| is_assignment(w))
        .peekable();
    let interpreter = words.next()?;
    let base = interpreter.rsplit('/').next().unwrap_or(&interpreter);
    if !INTERPRETERS.contains(&version_less(base)) {
        return None;
    }
    let script = words.find(|w| {
        (!w.starts_with('-') || NO_SCRIPT.contains(&w.as_str()))
            && !SUBCOMMANDS.contains(&w.as_str())
    })?;
    if NO_SCRIPT.contains(&script.as_str()) || !looks_like_file(&script) {
        return None;
    }
    let expanded = if expand_vars {
        expand(&script, env)?
    } else {
        PathBuf::from(script)
    };
    let path = cwd.join(&expanded);
    (!path.exists()).then(|| {
        format!(
            "its script {} does not exist ({base} would not run the hook, and its exit code \
             would not say so)",
            path.display()
        )
    })
}

/// `python3.12` → `python3`.
fn version_less(name: &str) -> &str {
    match name.split_once('.') {
        Some((stem, v)) if v.chars().all(|c| c.is_ascii_digit()) => stem,
        _ => name,
    }
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(k, _)| {
        !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn looks_like_file(word: &str) -> bool {
    word.contains('/')
        || word
            .rsplit_once('.')
            .is_some_and(|(stem, ext)| !stem.is_empty() && SCRIPT_EXT.contains(&ext))
}

/// The words of the first simple command of a shell line, `None` when the line cannot be read
/// as words or starts with something other than a command.
fn first_command(line: &str) -> Option<Vec<String>> {
    let words = shell_words::split(line).ok()?;
    let ops = ["&&", "||", "|", ";", "&", "(", ")", "{", "}", "!"];
    let first: Vec<String> = words
        .into_iter()
        .take_while(|w| !ops.contains(&w.as_str()))
        .collect();
    (!first.is_empty()).then_some(first)
}

/// `word` with `~` and `$NAME` / `${NAME}` expanded from `env` (unset: empty, as the shell
/// does); `None` for anything the shell would do more with.
fn expand(word: &str, env: &[(OsString, OsString)]) -> Option<PathBuf> {
    if word.contains(['`', '*', '?', '[', ';', '|', '&', '<', '>']) || word.contains("$(") {
        return None;
    }
    let var = |name: &str| {
        env.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let mut out = String::new();
    let mut rest = word;
    if let Some(after) = rest.strip_prefix("~/") {
        out.push_str(&var("HOME"));
        out.push('/');
        rest = after;
    }
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (name, tail) = if let Some(braced) = after.strip_prefix('{') {
            let end = braced.find('}')?;
            let name = &braced[..end];
            if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return None;
            }
            (name, &braced[end + 1..])
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        if name.is_empty() {
            return None;
        }
        out.push_str(&var(name));
        rest = tail;
    }
    out.push_str(rest);
    Some(PathBuf::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(c: &str) -> Program {
        Program::Shell {
            shell: "/bin/sh".into(),
            command: c.into(),
        }
    }

    #[test]
    fn a_missing_script_is_found_and_everything_uncertain_runs() {
        let t = tempfile::tempdir().unwrap();
        let cwd = t.path();
        std::fs::create_dir_all(cwd.join("hooks")).unwrap();
        std::fs::write(cwd.join("hooks/ok.py"), "").unwrap();
        let env = vec![("ROOT".into(), cwd.as_os_str().to_owned())];
        let missing = |c: &str| missing_script(&shell(c), cwd, &env);
        assert_eq!(missing("python3 hooks/ok.py"), None);
        assert_eq!(missing("python3 -u \"$ROOT\"/hooks/ok.py 2>&1"), None);
        assert_eq!(missing("X=1 python3.12 ${ROOT}/hooks/ok.py"), None);
        let m = missing("python3 ${ROOT}/hooks/gone.py && echo ok").unwrap();
        assert!(
            m.contains(&format!("{}/hooks/gone.py does not exist", cwd.display())),
            "{m}"
        );
        assert!(missing("node \"$UNSET/scripts/guard.js\"")
            .unwrap()
            .contains("/scripts/guard.js"));
        assert!(missing("deno run hooks/x.ts").is_some());
        // Not certain: inline code, a module, a command name, a glob, a non-interpreter.
        for c in [
            "python3 -c 'print(1)'",
            "python3 -m tool.x",
            "bash -c 'exit 0'",
            "npx prettier --check",
            "node $(which guard.js)",
            "python3 hooks/*.py",
            "jq . hooks/x.py",
            "bun run lint",
        ] {
            assert_eq!(missing(c), None, "{c}");
        }
        // Exec form: the words as given.
        let exec = Program::Exec {
            program: "python3".into(),
            args: vec![format!("{}/hooks/gone.py", cwd.display())],
        };
        assert!(missing_script(&exec, cwd, &[]).is_some());
    }

    #[test]
    fn pis_variables_are_substituted_whole() {
        let own = [("CLAUDE_PLUGIN_ROOT".to_string(), "/p".to_string())];
        assert_eq!(
            substitute("${CLAUDE_PLUGIN_ROOT}/a $CLAUDE_PLUGIN_ROOT/b", &own),
            "/p/a /p/b"
        );
        assert_eq!(
            substitute("$CLAUDE_PLUGIN_ROOTS/x", &own),
            "$CLAUDE_PLUGIN_ROOTS/x"
        );
    }
}
