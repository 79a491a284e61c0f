//! What starting a server needs, resolved from its entry: `${VAR}` and `!command` values
//! (commands run off the async threads: a password manager may take its time), a stdio
//! server's full environment (the bash tool's filtered one plus exactly its own `env`) and
//! working directory; and the one-line description listings show.
//!
//! Only the user's own entries resolve in pi's environment and run commands. A project's or a
//! hook's entry (`foreign`) resolves in the environment granted to it and never runs anything,
//! checked again here whatever was checked when it was accepted.

use std::path::Path;
use std::sync::Arc;

use super::client::{Endpoint, McpError};
use super::config::{ServerConfig, Source, Transport};
use super::spawn::{server_cwd, StdioLaunch};
use crate::config::{resolve_value, ForeignEnv, ProjectGrant, SystemEnv};
use crate::tools::shell_env::ShellEnvironment;

/// How one value resolves: in pi's environment (the user's own file) or in a granted one.
fn resolve_one(k: &str, raw: &str, foreign: Option<&ForeignEnv>) -> Result<String, McpError> {
    match foreign {
        Some(env) => env
            .resolve(raw)
            .map_err(|e| McpError::Config(format!("{k}: {e}"))),
        None => match resolve_value(raw, &SystemEnv) {
            Ok(Some(v)) => Ok(v),
            Ok(None) => Err(McpError::Config(format!(
                "{k}: a variable in {raw:?} is not set"
            ))),
            Err(e) => Err(McpError::Config(format!("{k}: {e}"))),
        },
    }
}

/// The endpoint with every `${VAR}` / `!cmd` value resolved. Commands may block (a
/// password manager), so they run off the async threads.
pub async fn endpoint(
    config: &ServerConfig,
    shell: &ShellEnvironment,
    project: &Path,
) -> Result<Endpoint, McpError> {
    let foreign: Option<Arc<ForeignEnv>> = match (&config.foreign, config.source) {
        (Some(env), _) => Some(env.clone()),
        (None, Source::User) => None,
        // A project's entry that reached here without its grant resolves nothing.
        (None, Source::Project) => {
            let none = ProjectGrant::none(project, Path::new("your settings.json"));
            Some(Arc::new(ForeignEnv::project(&none, &SystemEnv)))
        }
    };
    let resolve_all = |pairs: Vec<(String, String)>| {
        let foreign = foreign.clone();
        async move {
            tokio::task::spawn_blocking(move || {
                pairs
                    .into_iter()
                    .map(|(k, raw)| {
                        let v = resolve_one(&k, &raw, foreign.as_deref())?;
                        Ok::<_, McpError>((k, v))
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .await
            .map_err(|e| McpError::Config(e.to_string()))?
        }
    };
    match &config.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let own = resolve_all(env.clone()).await?;
            let mut full = shell.for_process(&[]);
            for (k, v) in own {
                full.retain(|(name, _)| name.as_os_str() != k.as_str());
                full.push((k.into(), v.into()));
            }
            Ok(Endpoint::Stdio(StdioLaunch {
                command: command.clone(),
                args: args.clone(),
                env: full,
                cwd: server_cwd(project, cwd.as_deref()),
            }))
        }
        Transport::Http { url, headers } => Ok(Endpoint::Http {
            url: url.clone(),
            headers: resolve_all(headers.clone()).await?,
        }),
    }
}

/// `npx -y server` / `https://…`, for listings.
pub fn describe(t: &Transport) -> String {
    match t {
        Transport::Stdio { command, args, .. } => {
            let mut s = command.clone();
            for a in args {
                s.push(' ');
                s.push_str(a);
            }
            s
        }
        Transport::Http { url, .. } => url.clone(),
    }
}
