//! The agent's hook points, delegated to whichever hook generation is current. The agent is
//! built once, but session replacement and `reload` start new hook processes with a new
//! runner; each call reads the current one at the moment it is made (as pi's runner
//! callbacks do), so nothing in the agent is rebuilt and no call reaches a stopped generation
//! once the swap is done.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use crate::agent::events::AgentEvent;
use crate::agent::hooks::{
    AgentHooks, BeforeAgentStart, Boundary, GateOutcome, InputOutcome, InputSource, Outcome,
    Validate,
};
use crate::message::{Message, ToolCall, ToolResultMessage};
use crate::provider::ProviderHooks;
use crate::resources::system_prompt::SystemPrompt;

pub struct CurrentHooks {
    current: Mutex<Arc<dyn AgentHooks>>,
}

impl CurrentHooks {
    pub fn new(hooks: Arc<dyn AgentHooks>) -> Self {
        CurrentHooks {
            current: Mutex::new(hooks),
        }
    }

    /// From now on every hook point goes to `hooks`.
    pub fn set(&self, hooks: Arc<dyn AgentHooks>) {
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) = hooks;
    }

    pub fn get(&self) -> Arc<dyn AgentHooks> {
        self.current
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

#[async_trait]
impl AgentHooks for CurrentHooks {
    fn event(&self, event: &AgentEvent) {
        self.get().event(event)
    }

    async fn input(&self, text: String, source: InputSource) -> InputOutcome {
        self.get().input(text, source).await
    }

    async fn before_agent_start(
        &self,
        prompt: &str,
        system_prompt: SystemPrompt,
    ) -> BeforeAgentStart {
        self.get().before_agent_start(prompt, system_prompt).await
    }

    async fn context(&self, messages: Vec<Arc<Message>>) -> Vec<Arc<Message>> {
        self.get().context(messages).await
    }

    async fn context_with_system(
        &self,
        system_prompt: String,
        messages: Vec<Arc<Message>>,
    ) -> (String, Vec<Arc<Message>>) {
        self.get()
            .context_with_system(system_prompt, messages)
            .await
    }

    async fn prepare_arguments(
        &self,
        call: &ToolCall,
        args: serde_json::Value,
    ) -> serde_json::Value {
        self.get().prepare_arguments(call, args).await
    }

    async fn tool_call(&self, call: &ToolCall, validate: &Validate) -> GateOutcome {
        self.get().tool_call(call, validate).await
    }

    async fn tool_result(&self, call: &ToolCall, result: ToolResultMessage) -> ToolResultMessage {
        self.get().tool_result(call, result).await
    }

    async fn tool_blocked(&self, call: &ToolCall, reason: &str) -> Vec<String> {
        self.get().tool_blocked(call, reason).await
    }

    async fn message_end(&self, message: Arc<Message>) -> Arc<Message> {
        self.get().message_end(message).await
    }

    async fn turn_end(
        &self,
        turn_index: usize,
        message: &Message,
        results: &[ToolResultMessage],
        outcome: Outcome,
    ) -> Boundary {
        self.get()
            .turn_end(turn_index, message, results, outcome)
            .await
    }

    async fn agent_before_settle(&self, messages: &[Arc<Message>], outcome: Outcome) -> Boundary {
        self.get().agent_before_settle(messages, outcome).await
    }

    fn provider_hooks(&self) -> Arc<dyn ProviderHooks> {
        self.get().provider_hooks()
    }
}
