//! What front ends may ask at any time, also while a run streams: state, messages, entries
//! (entry ids are durable cursors), the tree, fork points, the last reply, statistics, the
//! commands, models and thinking levels — and the two small writes that need no exclusive
//! access (session name, labels). Answers read the shared session and the agent's handle,
//! never the running agent, so they never wait for a run.

use serde_json::json;

use super::model::{available_levels, model_info};
use super::{
    lock, CommandInfo, CommandSource, Commands, ContextUsage, ControllerError, Core, EntriesPage,
    ForkMessage, ForkMessages, LastAssistantText, Messages, ModelList, SessionController,
    SessionStats, SourceInfo, StateSnapshot, ThinkingLevels, TreeView, WireEntry,
};
use crate::hooks::events::NotifyEvent;
use crate::hooks::spec::HookSource;
use crate::resources::skills::SkillOrigin;
use crate::resources::templates::Origin;
use crate::session::compaction::{estimate_context, estimate_messages_tokens};
use crate::session::stats::session_stats;
use crate::session::{AgentMessage, EntryKind, Session};

/// The context's size as the compaction checks see it: `None` right after a compaction,
/// until a reply has reported usage again.
fn context_tokens(session: &Session) -> Option<u64> {
    let path = session.branch(None);
    let start = path
        .iter()
        .rposition(|e| matches!(e.kind, EntryKind::Compaction(_)));
    let since: Vec<&AgentMessage> = path[start.map_or(0, |i| i + 1)..]
        .iter()
        .filter_map(|e| e.message())
        .collect();
    let est = estimate_context(&since);
    if start.is_some() && est.last_usage_index.is_none() {
        return None;
    }
    Some(est.tokens)
}

/// What `get_commands` calls where a command comes from.
fn info(path: &std::path::Path, source: &str, scope: &str) -> SourceInfo {
    SourceInfo {
        path: path.display().to_string(),
        source: source.into(),
        scope: scope.into(),
        origin: "top-level".into(),
        base_dir: None,
        changelog_path: None,
    }
}

/// A prompt template's or skill's source: pi 1.6 says `auto` for what it found in the agent
/// directory or the project's `.pi`, with that directory as `baseDir`; `local` for what a
/// settings entry named.
fn discovered(path: &std::path::Path, scope: &str, base_dir: &std::path::Path) -> SourceInfo {
    SourceInfo {
        base_dir: Some(base_dir.display().to_string()),
        ..info(path, "auto", scope)
    }
}

impl Core {
    /// Hook commands (with the hook's name), prompt templates and skills, in that order: what
    /// RPC `get_commands`, the editor's `/` list and hooks' `commands.list` show.
    pub(super) fn command_list(&self) -> Vec<(CommandInfo, Option<String>)> {
        let mut commands = Vec::new();
        for h in &self.hooks().instances {
            let spec = h.spec();
            let (source, scope) = match spec.source {
                HookSource::Managed | HookSource::User => ("local", "user"),
                HookSource::Discovered => ("auto", "user"),
                HookSource::Cli => ("cli", "temporary"),
                HookSource::Project => ("local", "project"),
            };
            let hook = h.name();
            for c in h.registration().commands {
                commands.push((
                    CommandInfo {
                        name: c.name,
                        description: Some(c.description).filter(|d| !d.is_empty()),
                        source: CommandSource::Extension,
                        source_info: info(spec.shown_path(), source, scope),
                    },
                    Some(hook.clone()),
                ));
            }
        }
        let env = self.env();
        let agent_dir = &self.fixed.agent_dir;
        let project_dir = self.place().cwd.join(".pi");
        for t in &env.resources.templates {
            let source_info = match t.origin {
                Origin::Project => discovered(&t.path, "project", &project_dir),
                Origin::User => discovered(&t.path, "user", agent_dir),
                Origin::Cli => info(&t.path, "cli", "temporary"),
                Origin::Hook => info(&t.path, "extension", "temporary"),
                Origin::Package | Origin::Settings => info(&t.path, "local", "user"),
            };
            commands.push((
                CommandInfo {
                    name: t.name.clone(),
                    description: Some(t.description.clone()).filter(|d| !d.is_empty()),
                    source: CommandSource::Prompt,
                    source_info,
                },
                None,
            ));
        }
        for sk in &env.resources.skills.skills {
            let path = &sk.file_path;
            let source_info = match &sk.origin {
                SkillOrigin::Project => discovered(path, "project", &project_dir),
                SkillOrigin::User => discovered(path, "user", agent_dir),
                SkillOrigin::ProjectSetting => info(path, "local", "project"),
                SkillOrigin::Cli => info(path, "cli", "temporary"),
                SkillOrigin::Hook(_) => info(path, "extension", "temporary"),
                SkillOrigin::UserSetting | SkillOrigin::Package => info(path, "local", "user"),
            };
            commands.push((
                CommandInfo {
                    name: format!("skill:{}", sk.name),
                    description: Some(sk.description.clone()).filter(|d| !d.is_empty()),
                    source: CommandSource::Skill,
                    source_info,
                },
                None,
            ));
        }
        commands
    }

    /// pi 1.6's estimate of the context right now (for `compact`'s `estimatedTokensAfter`):
    /// the messages, the system prompt and the tools offered with it.
    pub(super) fn estimated_context_tokens(&self) -> u64 {
        use crate::session::compaction::estimate::ContextItem;
        {
            let session = self.session.lock();
            let context = session.context();
            let typed = context.llm_messages();
            // pi 1.6: the replayed system message once, then the conversation.
            if let Some(system) = crate::message::system::current(typed.iter().map(|m| m.as_ref()))
            {
                let rest: u64 = context
                    .messages
                    .iter()
                    .filter(|m| m.message.role() != "system")
                    .map(|m| m.estimate_tokens())
                    .sum();
                return crate::message::Message::System(system).estimate_tokens() + rest;
            }
        }
        let config = self.handle.config();
        let tools = self
            .handle
            .tools()
            .offered(self.handle.active_tools().as_deref());
        let system = crate::session::compaction::estimate::estimate_system_tokens(
            config.system_prompt.text(),
            &tools,
        );
        system + estimate_messages_tokens(&self.session.lock().context().messages)
    }
}

impl SessionController {
    /// Where themes come from now: the `--theme` paths, the user's and (when trusted) the
    /// project's folders, the `themes` settings as the files say now, and what hooks
    /// contributed at the last start or `reload`. The controller does not read themes; the
    /// interactive mode does.
    pub fn theme_sources(&self) -> crate::resources::themes::Sources {
        let fixed = &self.core.fixed;
        let place = self.core.place();
        crate::resources::themes::Sources {
            agent_dir: fixed.agent_dir.clone(),
            cwd: place.cwd.clone(),
            trusted: place.trusted,
            cli: fixed.options.themes.clone(),
            hooks: self.core.env().theme_paths.clone(),
            configured: crate::resources::themes::Configured::from_files(
                &fixed.agent_dir,
                &place.cwd,
                place.trusted,
            ),
            no_themes: fixed.options.no_themes,
        }
    }

    /// A top-level string setting as it is in effect now (the user's settings under a trusted
    /// project's, as read at start-up or the last `reload`).
    pub fn setting_str(&self, key: &str) -> Option<String> {
        let env = self.core.env();
        env.settings.get(key)?.as_str().map(str::to_string)
    }

    /// The directory the run works in now: the start directory, or the project of a session
    /// the run moved into.
    pub fn cwd(&self) -> std::path::PathBuf {
        self.core.place().cwd.clone()
    }

    /// Whether this run trusts the project (its settings, hooks and resources load).
    pub fn project_trusted(&self) -> bool {
        self.core.place().trusted
    }

    /// `get_state`.
    pub fn get_state(&self) -> StateSnapshot {
        let core = &self.core;
        let config = core.handle.config();
        let (streaming, compacting, auto_compaction) = {
            let s = lock(&core.status);
            (s.streaming, s.compacting, s.auto_compaction)
        };
        let s = core.session.lock();
        StateSnapshot {
            model: Some(core.model_info()),
            thinking_level: config.thinking.as_str().into(),
            is_streaming: streaming,
            is_compacting: compacting,
            steering_mode: config.steering_mode.as_str().into(),
            follow_up_mode: config.follow_up_mode.as_str().into(),
            session_file: s.path().map(|p| p.display().to_string()),
            session_id: s.id().to_string(),
            session_name: s.name().map(str::to_string),
            auto_compaction_enabled: auto_compaction,
            message_count: core.handle.message_count(),
            pending_message_count: core.handle.pending_count(),
        }
    }

    /// `get_messages`: the current context, with pi's message roles.
    pub fn get_messages(&self) -> Messages {
        let s = self.core.session.lock();
        Messages {
            messages: s
                .context()
                .messages
                .into_iter()
                .map(|m| m.message.into_owned())
                .collect(),
        }
    }

    /// `get_entries {since?}`: every entry after `since` (all without it) in append order.
    pub fn get_entries(&self, since: Option<&str>) -> Result<EntriesPage, ControllerError> {
        let s = self.core.session.lock();
        let entries = s
            .entries_since(since)
            .map_err(|e| match e {
                crate::session::SessionError::EntryNotFound(id) => {
                    ControllerError::EntryNotFound(id)
                }
                other => other.into(),
            })?
            .iter()
            .map(|e| WireEntry::Session(Box::new(e.clone())))
            .collect();
        Ok(EntriesPage {
            entries,
            leaf_id: s.leaf_id().map(str::to_string),
        })
    }

    /// `get_tree`.
    pub fn get_tree(&self) -> Result<TreeView, ControllerError> {
        let s = self.core.session.lock();
        let tree = serde_json::value::RawValue::from_string(s.tree_json())?;
        Ok(TreeView {
            tree,
            leaf_id: s.leaf_id().map(str::to_string),
        })
    }

    /// `get_fork_messages`: every user message with text in the session, on any branch, in
    /// file order (1.6's `getUserMessagesForForking`: a fork may start from a branch the
    /// session has left).
    pub fn get_fork_messages(&self) -> ForkMessages {
        let s = self.core.session.lock();
        let messages = s
            .entries()
            .iter()
            .filter_map(|e| {
                let m = e.message()?;
                (m.role() == "user" && !m.text().is_empty()).then(|| ForkMessage {
                    entry_id: e.id.clone(),
                    text: m.text(),
                })
            })
            .collect();
        ForkMessages { messages }
    }

    /// `get_last_assistant_text`: the newest reply with text (replies that only call tools,
    /// or failed without text, are skipped).
    pub fn get_last_assistant_text(&self) -> LastAssistantText {
        let s = self.core.session.lock();
        let ctx = s.context();
        let text = ctx
            .messages
            .iter()
            .rev()
            .filter(|m| m.message.role() == "assistant")
            .map(|m| m.message.text())
            .find(|t| !t.trim().is_empty());
        LastAssistantText { text }
    }

    /// `get_session_stats`: as pi 1.6, over every entry of the session (every branch, and
    /// what compactions summarised away): its messages, and the usage of replies, tools,
    /// summaries and `usage` entries (cache warms), costs as each was priced when it ended.
    pub fn get_session_stats(&self) -> SessionStats {
        let window = self.core.handle.config().model.context_window;
        let s = self.core.session.lock();
        let mut counts = session_stats(s.entries().iter().filter_map(|e| match &e.kind {
            EntryKind::Message(m) => Some(&m.message),
            _ => None,
        }));
        for entry in s.entries() {
            let usage = match &entry.kind {
                EntryKind::Usage(u) => Some(&u.usage),
                EntryKind::Compaction(c) => c.usage.as_ref(),
                EntryKind::BranchSummary(b) => b.usage.as_ref(),
                _ => None,
            };
            if let Some(u) = usage {
                counts.add_usage_entry(u);
            }
        }
        let tokens = context_tokens(&s);
        SessionStats {
            session_file: s.path().map(|p| p.display().to_string()),
            session_id: s.id().to_string(),
            counts,
            context_usage: (window > 0).then(|| ContextUsage {
                tokens,
                context_window: window,
                percent: tokens.map(|t| t as f64 * 100.0 / window as f64),
            }),
        }
    }

    /// `get_commands`: hook commands, prompt templates and skills.
    pub fn get_commands(&self) -> Commands {
        Commands {
            commands: self
                .core
                .command_list()
                .into_iter()
                .map(|(c, _)| c)
                .collect(),
        }
    }

    /// `get_available_models`: the models with configured credentials.
    pub fn get_available_models(&self) -> ModelList {
        ModelList {
            models: self
                .core
                .registry()
                .listed()
                .map(|(p, m)| model_info(p, m))
                .collect(),
        }
    }

    /// `get_available_thinking_levels`: `["off"]` for a model without reasoning.
    pub fn get_available_thinking_levels(&self) -> ThinkingLevels {
        let model = self.core.handle.config().model;
        ThinkingLevels {
            levels: available_levels(&model)
                .into_iter()
                .map(|l| l.as_str().to_string())
                .collect(),
        }
    }

    /// `set_session_name {name}` (whitespace collapsed; empty is refused).
    pub fn set_session_name(&self, name: &str) -> Result<(), ControllerError> {
        let clean = name.split_whitespace().collect::<Vec<_>>().join(" ");
        if clean.is_empty() {
            return Err(ControllerError::EmptyName);
        }
        self.core
            .session
            .record(|s| s.append_session_info(&clean))?;
        self.core.runner().notify(
            NotifyEvent::SessionInfoChanged,
            None,
            || json!({"name": clean}),
        );
        self.core
            .emit(crate::agent::events::AgentEvent::SessionInfoChanged {
                name: Some(clean.clone()),
            });
        Ok(())
    }

    /// Label an entry (`None` or blank removes the label).
    pub fn set_label(&self, entry_id: &str, label: Option<&str>) -> Result<(), ControllerError> {
        let label = label.map(str::trim).filter(|l| !l.is_empty());
        self.core
            .session
            .record(|s| s.append_label(entry_id, label))?;
        Ok(())
    }
}
