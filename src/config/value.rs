//! pi's value grammar for API keys and header values in `models.json` and `auth.json`.
//!
//! `!command` runs the rest through `sh -c` and uses its trimmed stdout; `$VAR` and `${VAR}`
//! interpolate environment variables anywhere in the string; `$$` and `$!` are escapes for a
//! literal `$` and `!`; everything else is literal. Secrets are usually kept in password
//! managers or the environment rather than in the file, which is why this grammar exists.
//! A referenced variable that is unset makes the whole value "unresolved" (`Ok(None)`), so the
//! auth chain moves on instead of sending a half-built key.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::Env;

/// Commands that hang (a password manager waiting for a prompt) must not hang the agent.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a value could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum ValueError {
    #[error("cannot run command `{command}`: {source}")]
    Spawn {
        command: String,
        #[source]
        source: std::io::Error,
    },
    #[error("command `{command}` failed ({status}){}", stderr_suffix(stderr))]
    CommandFailed {
        command: String,
        status: String,
        stderr: String,
    },
    #[error("command `{command}` did not finish within {} seconds", COMMAND_TIMEOUT.as_secs())]
    Timeout { command: String },
    #[error("command `{command}` printed nothing")]
    EmptyOutput { command: String },
}

fn stderr_suffix(stderr: &str) -> String {
    let s = stderr.trim();
    if s.is_empty() {
        String::new()
    } else {
        format!(": {s}")
    }
}

/// Resolves one value. `Ok(None)` means an environment variable it refers to is unset.
pub fn resolve_value(raw: &str, env: &dyn Env) -> Result<Option<String>, ValueError> {
    if let Some(command) = raw.strip_prefix('!') {
        return run_command(command).map(Some);
    }
    Ok(interpolate(raw, env))
}

/// Whether a value counts as "configured" without running any command: used for model
/// availability, which must stay cheap and side-effect free (pi does the same).
pub fn value_is_configured(raw: &str, env: &dyn Env) -> bool {
    if raw.starts_with('!') {
        return raw.len() > 1;
    }
    interpolate(raw, env).is_some_and(|v| !v.is_empty())
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Where a value comes from, by its syntax: what decides whether a header is a credential
/// (shown to hooks redacted) without guessing from the resolved text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueOrigin {
    /// Plain text (escapes included): the file itself holds the value.
    Literal,
    /// `!command`: a credential helper's output.
    Command,
    /// Interpolates at least one `$VAR` / `${VAR}`.
    Environment,
}

/// The origin of `raw`, from its syntax alone (nothing is run or read).
pub fn value_origin(raw: &str) -> ValueOrigin {
    if raw.starts_with('!') {
        ValueOrigin::Command
    } else if referenced_vars(raw).is_empty() {
        ValueOrigin::Literal
    } else {
        ValueOrigin::Environment
    }
}

/// The environment variables `raw` interpolates, in order (none for a `!command`, whose text
/// is the user's own shell code).
pub fn referenced_vars(raw: &str) -> Vec<String> {
    if raw.starts_with('!') {
        return Vec::new();
    }
    let mut names = Vec::new();
    expand(raw, &mut |name| {
        names.push(name.to_string());
        Some(String::new())
    });
    names
}

fn interpolate(raw: &str, env: &dyn Env) -> Option<String> {
    expand(raw, &mut |name| env.var(name))
}

/// Expands `$NAME`, `${NAME}` and the `$$` / `$!` escapes, asking `lookup` for each name;
/// `None` from it makes the whole value `None`.
fn expand(raw: &str, lookup: &mut dyn FnMut(&str) -> Option<String>) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some((_, '$')) => {
                chars.next();
                out.push('$');
            }
            Some((_, '!')) => {
                chars.next();
                out.push('!');
            }
            Some((j, '{')) => {
                let rest = &raw[j + 1..];
                let name_len = rest.find('}');
                match name_len {
                    Some(n)
                        if n > 0
                            && rest[..n].starts_with(is_name_start)
                            && rest[..n].chars().all(is_name_char) =>
                    {
                        out.push_str(&lookup(&rest[..n])?);
                        // Skip `{`, the name and `}`.
                        for _ in 0..n + 2 {
                            chars.next();
                        }
                    }
                    // Not a well-formed `${NAME}`: keep the text as written.
                    _ => out.push('$'),
                }
            }
            Some((_, n)) if is_name_start(n) => {
                let start = i + 1;
                let mut end = start;
                while let Some((k, ch)) = chars.peek().copied() {
                    if !is_name_char(ch) {
                        break;
                    }
                    end = k + ch.len_utf8();
                    chars.next();
                }
                out.push_str(&lookup(&raw[start..end])?);
            }
            _ => out.push('$'),
        }
    }
    Some(out)
}

fn run_command(command: &str) -> Result<String, ValueError> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| ValueError::Spawn {
            command: command.to_string(),
            source,
        })?;

    // Drain both pipes on threads so a chatty command cannot block on a full pipe while we wait.
    let stdout = child.stdout.take().map(drain);
    let stderr = child.stderr.take().map(drain);

    let deadline = Instant::now() + COMMAND_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ValueError::Timeout {
                    command: command.to_string(),
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(source) => {
                return Err(ValueError::Spawn {
                    command: command.to_string(),
                    source,
                })
            }
        }
    };
    let stdout = stdout.and_then(|h| h.join().ok()).unwrap_or_default();
    let stderr = stderr.and_then(|h| h.join().ok()).unwrap_or_default();

    if !status.success() {
        let status = match status.code() {
            Some(code) => format!("exit status {code}"),
            None => "killed by a signal".to_string(),
        };
        return Err(ValueError::CommandFailed {
            command: command.to_string(),
            status,
            stderr,
        });
    }
    let value = stdout.trim();
    if value.is_empty() {
        return Err(ValueError::EmptyOutput {
            command: command.to_string(),
        });
    }
    Ok(value.to_string())
}

fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        String::from_utf8_lossy(&buf).into_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MapEnv;

    fn env() -> MapEnv {
        MapEnv::new()
            .with_var("KEY", "sk-123")
            .with_var("A", "x")
            .with_var("FOO_BAR", "fb")
    }

    #[test]
    fn literal_values_pass_through() {
        let e = env();
        assert_eq!(resolve_value("sk-abc", &e).unwrap().unwrap(), "sk-abc");
        // Plain uppercase text is a literal, not a variable name (pi >= 0.80).
        assert_eq!(resolve_value("KEY", &e).unwrap().unwrap(), "KEY");
        assert_eq!(resolve_value("", &e).unwrap().unwrap(), "");
    }

    #[test]
    fn env_interpolation() {
        let e = env();
        assert_eq!(resolve_value("$KEY", &e).unwrap().unwrap(), "sk-123");
        assert_eq!(resolve_value("${KEY}", &e).unwrap().unwrap(), "sk-123");
        assert_eq!(
            resolve_value("Bearer $KEY", &e).unwrap().unwrap(),
            "Bearer sk-123"
        );
        assert_eq!(resolve_value("$FOO_BAR", &e).unwrap().unwrap(), "fb");
        assert_eq!(resolve_value("${A}_BAR", &e).unwrap().unwrap(), "x_BAR");
        // An unset variable leaves the value unresolved.
        assert_eq!(resolve_value("$MISSING", &e).unwrap(), None);
        assert_eq!(resolve_value("pre-${MISSING}", &e).unwrap(), None);
    }

    #[test]
    fn escapes_and_stray_dollars() {
        let e = env();
        assert_eq!(resolve_value("$$KEY", &e).unwrap().unwrap(), "$KEY");
        assert_eq!(resolve_value("$!echo", &e).unwrap().unwrap(), "!echo");
        assert_eq!(resolve_value("a$", &e).unwrap().unwrap(), "a$");
        assert_eq!(resolve_value("$1x", &e).unwrap().unwrap(), "$1x");
        assert_eq!(
            resolve_value("${unclosed", &e).unwrap().unwrap(),
            "${unclosed"
        );
        assert_eq!(resolve_value("${}", &e).unwrap().unwrap(), "${}");
    }

    #[test]
    fn command_values() {
        let e = env();
        assert_eq!(
            resolve_value("!printf '  sk-cmd\\n'", &e).unwrap().unwrap(),
            "sk-cmd"
        );
        let err = resolve_value("!echo boom >&2; exit 3", &e).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, ValueError::CommandFailed { .. }));
        assert!(
            msg.contains("exit status 3") && msg.contains("boom"),
            "{msg}"
        );
        let err = resolve_value("!true", &e).unwrap_err();
        assert!(matches!(err, ValueError::EmptyOutput { .. }), "{err}");
    }

    #[test]
    fn origin_and_referenced_vars_follow_the_syntax() {
        assert_eq!(value_origin("sk-literal"), ValueOrigin::Literal);
        assert_eq!(value_origin("$$NOT_A_VAR and $!"), ValueOrigin::Literal);
        assert_eq!(value_origin("${unclosed"), ValueOrigin::Literal);
        assert_eq!(value_origin("Bearer ${TOK}"), ValueOrigin::Environment);
        assert_eq!(
            value_origin("$UNSET_IS_STILL_ENV"),
            ValueOrigin::Environment
        );
        assert_eq!(value_origin("!pass show x"), ValueOrigin::Command);
        assert_eq!(
            referenced_vars("a $ONE-${TWO}$$THREE $1"),
            vec!["ONE".to_string(), "TWO".to_string()]
        );
        assert!(referenced_vars("!echo $HOME").is_empty());
    }

    #[test]
    fn configured_check_runs_no_commands() {
        let e = env();
        assert!(value_is_configured("!definitely-not-a-command-xyz", &e));
        assert!(value_is_configured("$KEY", &e));
        assert!(!value_is_configured("$MISSING", &e));
        assert!(!value_is_configured("", &e));
    }
}
