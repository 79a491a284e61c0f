//! One run of the agent once start-up is decided: tools, the system prompt (with the skills
//! and templates that apply), the provider, the agent with its session recorder and session
//! operations, then the prompts in order — each followed by the compaction checks — with hook
//! commands run in between. From the moment the agent exists, an abort of its run (or a
//! signal) ends every wait on a hook.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::{compact, hooks, prompt_resources, session_ops, signals, tools, EXIT_ERROR};
use crate::agent::hooks::{AgentHooks, NoHooks};
use crate::agent::{Agent, AgentConfig};
use crate::cli::{Cli, Mode};
use crate::config::Settings;
use crate::hooks::bridge::HookBridge;
use crate::message::UserContent;
use crate::provider::faux::FauxScript;
use crate::provider::retry::RetryPolicy;
use crate::provider::{Providers, ThinkingLevel};
use crate::resources::system_prompt::{self, PromptOptions};

pub struct Chosen {
    pub model: crate::provider::Model,
    pub thinking: ThinkingLevel,
    pub api_key: Option<String>,
}

/// How the run ended: the exit code it demands, if any, and the signal handlers, which stay
/// installed until pi exits (a signal during the shutdown still counts).
pub struct RunEnd {
    pub code: Option<i32>,
    pub signals: Option<signals::Signals>,
}

impl RunEnd {
    fn code(code: i32) -> Self {
        RunEnd {
            code: Some(code),
            signals: None,
        }
    }
}

pub struct RunInputs<'a> {
    pub cli: &'a Cli,
    pub settings: &'a Settings,
    pub agent_dir: &'a std::path::Path,
    pub cwd: &'a std::path::Path,
    pub trusted: bool,
    pub session: Arc<crate::session::SharedSession>,
    /// Environment variables that hold keys (models.json, auth.json, the providers' own), kept
    /// from the model's shell.
    pub credential_vars: std::collections::BTreeSet<String>,
}

/// Build the agent (tools, system prompt, provider) and run the prompts.
pub async fn run_agent(
    run: RunInputs<'_>,
    chosen: Chosen,
    hook_tools: Vec<Arc<dyn crate::tools::Tool>>,
    loaded: &hooks::LoadedHooks,
    tx: mpsc::UnboundedSender<crate::agent::events::AgentEvent>,
    prompts: Vec<String>,
    history: Vec<crate::message::Message>,
) -> anyhow::Result<RunEnd> {
    let RunInputs {
        cli,
        settings,
        agent_dir,
        cwd,
        trusted,
        session,
        credential_vars,
    } = run;
    let Chosen {
        model,
        thinking,
        api_key,
    } = chosen;
    let registry_tools = match tools::build(cli, settings, &credential_vars, hook_tools) {
        Ok(t) => Arc::new(t),
        Err(e) => {
            eprintln!("Error: {e}");
            return Ok(RunEnd::code(EXIT_ERROR));
        }
    };
    loaded
        .runner
        .awaited("session_start", serde_json::json!({"reason": "startup"}))
        .await;
    let discovered = loaded
        .runner
        .collect(
            "resources_discover",
            serde_json::json!({"cwd": cwd.display().to_string(), "reason": "startup"}),
        )
        .await;
    if !discovered.skill_paths.is_empty() || !discovered.prompt_paths.is_empty() {
        tracing::info!(skills = ?discovered.skill_paths, prompts = ?discovered.prompt_paths, "resources contributed by hooks");
    }

    let resources = prompt_resources::load(
        cli,
        agent_dir,
        cwd,
        trusted,
        &discovered.skill_paths,
        &registry_tools.names(),
    );
    let system_prompt = system_prompt::build(&PromptOptions {
        custom_prompt: resources.custom_prompt.clone(),
        append: resources.append.clone(),
        tools: tools::prompt_tools(&registry_tools),
        project_context: resources.project_context.clone(),
        skills_block: resources.skills_block.clone(),
        cwd: cwd.display().to_string(),
    });

    let faux_script = load_faux_script(cli, &model.api)?;
    let providers = Providers::builtin(faux_script);
    let Some(provider) = providers.get(&model.api) else {
        eprintln!(
            "Error: model {} uses api \"{}\", which this build does not support",
            model.id, model.api
        );
        return Ok(RunEnd::code(EXIT_ERROR));
    };

    let retry = settings.retry();
    let config = AgentConfig {
        tool_env: vec![
            ("PI_PROVIDER".into(), model.provider.clone()),
            ("PI_MODEL".into(), model.id.clone()),
            ("PI_REASONING_LEVEL".into(), thinking.as_str().into()),
        ],
        model,
        api_key,
        thinking,
        system_prompt,
        retry: RetryPolicy {
            enabled: retry.enabled,
            max_retries: retry.max_retries,
            base_delay_ms: retry.base_delay_ms,
            max_delay_ms: retry.max_retry_delay_ms,
        },
        cwd: cwd.to_path_buf(),
        steering_mode: settings.steering_mode(),
        follow_up_mode: settings.follow_up_mode(),
        expand: resources.expander(),
    };
    let agent_hooks: Arc<dyn AgentHooks> = if loaded.runner.is_empty() {
        Arc::new(NoHooks)
    } else {
        Arc::new(HookBridge::new(loaded.runner.clone(), "print"))
    };
    let compactor = compact::Compactor {
        provider: provider.clone(),
        model: config.model.clone(),
        api_key: config.api_key.clone(),
        thinking,
        retry: config.retry,
        settings: crate::session::compaction::CompactionSettings::from_json(
            settings.get("compaction"),
        ),
        branch_reserve_tokens: settings
            .get("branchSummary")
            .and_then(|b| b.get("reserveTokens"))
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(16384),
    };
    let mut agent = Agent::new(
        config,
        provider,
        registry_tools.clone(),
        agent_hooks,
        tx.clone(),
    );
    agent.load_messages(history);
    agent.observe(recorder(session.clone()));
    loaded
        .calls
        .attach(agent.handle(), registry_tools, &loaded.runner);
    let handle = agent.handle();
    loaded.runner.attach_abort(move || handle.cancel_token());
    let ops = Arc::new(session_ops::SessionOps {
        session,
        runner: loaded.runner.clone(),
        agent: agent.handle(),
        events: tx,
        compactor,
        busy: tokio::sync::Mutex::new(()),
    });
    let control: Arc<dyn crate::hooks::calls::SessionControl> = ops.clone();
    loaded.calls.attach_control(Arc::downgrade(&control));
    let instances = loaded.instances.iter().map(Arc::downgrade).collect();
    let signals = signals::install(agent.handle(), instances)?;

    for p in prompts {
        if signals.received().is_some() {
            break;
        }
        // `/name args` runs a hook's command instead of a model turn, as pi runs extension
        // commands before anything else. A signal withdraws it.
        let command = hooks::run_command(loaded, &p, cli.output_mode() == Mode::Text);
        let command = tokio::select! {
            done = command => done,
            _ = signals.arrived() => break,
        };
        if let Some(done) = command {
            if !done {
                return Ok(RunEnd {
                    code: Some(EXIT_ERROR),
                    signals: Some(signals),
                });
            }
            continue;
        }
        let last = agent.prompt(UserContent::Text(p)).await;
        if signals.received().is_some() {
            break;
        }
        compact::after_run(&ops, &mut agent, last).await;
    }
    Ok(RunEnd {
        code: signals.received(),
        signals: Some(signals),
    })
}

/// Writes each finished message to the session as the agent emits it.
fn recorder(session: Arc<crate::session::SharedSession>) -> crate::agent::EventObserver {
    Arc::new(move |ev| {
        if let crate::agent::events::AgentEvent::MessageEnd { message } = ev {
            let _ = session.record(|s| s.append_message(message.clone()));
        }
    })
}

fn load_faux_script(cli: &Cli, api: &str) -> anyhow::Result<Option<FauxScript>> {
    let path = cli
        .faux_script
        .clone()
        .or_else(|| std::env::var_os("PI_FAUX_SCRIPT").map(Into::into));
    match path {
        Some(p) => Ok(Some(FauxScript::load(&p)?)),
        None if api == "faux" => {
            anyhow::bail!(
                "the faux provider needs a script: pass --faux-script FILE or set PI_FAUX_SCRIPT"
            )
        }
        None => Ok(None),
    }
}
