//! The run's system prompt: the text each request sends, and the system messages that
//! declare it in the transcript (pi 1.6's `role: "system"` messages, see
//! [`crate::message::system`]).
//!
//! A run chains its prompt once, from the configured one, through `before_agent_start`.
//! Before the first request and each later one, what the transcript declares is compared
//! with the run's sections and the tools offered; a difference becomes a system message in
//! the conversation, recorded like any other, so a session says what the model was told.

use std::sync::Arc;

use super::Agent;
use crate::message::system::{self, ToolDeclaration};
use crate::message::Message;
use crate::resources::system_prompt::SystemPrompt;

impl Agent {
    /// A run that does not chain `before_agent_start` (`continue`, queued messages) keeps
    /// the last run's prompt, or starts from the configured one.
    pub(super) fn keep_run_prompt(&mut self) {
        if self.run_system_prompt.is_some() {
            return;
        }
        let base = self.handle.config().system_prompt;
        self.run_system_prompt = Some(base.text().to_string());
        self.run_base_prompt = Some(base.text().to_string());
        self.run_sections = Some(base);
    }

    /// The configured prompt changed during the run (the tools it describes did): a run
    /// prompt no `before_agent_start` hook changed becomes the new one; one a hook changed is
    /// kept (the hook's text cannot be re-derived) until the next run chains from the new one.
    pub(super) fn follow_prompt(&mut self, configured: &SystemPrompt) {
        let Some(base) = &self.run_base_prompt else {
            return;
        };
        if base == configured.text() {
            return;
        }
        if self.run_system_prompt.as_deref() == Some(base.as_str()) {
            self.run_system_prompt = Some(configured.text().to_string());
            self.run_sections = Some(configured.clone());
        }
        self.run_base_prompt = Some(configured.text().to_string());
    }

    /// Adds the system message the next request needs, if the transcript does not already
    /// declare the run's sections and the tools offered.
    pub(super) async fn declare_system(&mut self, run: &mut Vec<Arc<Message>>) {
        let (config, _, registry) = self.handle.snapshot();
        self.follow_prompt(&config.system_prompt);
        let sections = self.run_sections.clone().unwrap_or(config.system_prompt);
        let tools: Vec<ToolDeclaration> = registry
            .offered(self.handle.active_tools().as_deref())
            .iter()
            .map(ToolDeclaration::from)
            .collect();
        if let Some(m) = system::update(&self.messages(), &sections, &tools) {
            self.push_message(Message::System(m), run).await;
        }
    }
}
