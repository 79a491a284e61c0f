//! The host calls about the model, its thinking level and its prompt: `model.get`,
//! `model.set`, `thinking.get`, `thinking.set` and `prompt.get`. They are the session
//! controller's own operations (reached through [`ModelControl`], which the controller
//! implements), so a hook's change is validated, recorded in the session and told to hooks
//! (`model_select`, `thinking_level_select`) exactly like `/model` or RPC `set_model`, and a
//! hook can never pick a model the user could not.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::calls::{err, str_param, HostCalls};
use super::protocol::{CallError, HookModel};
use crate::provider::ThinkingLevel;
use crate::resources::system_prompt::SystemPrompt;

/// The methods of this module, offered in `hello.capabilities.methods`.
pub(super) const METHODS: &[&str] = &[
    "model.get",
    "model.set",
    "thinking.get",
    "thinking.set",
    "prompt.get",
];

/// The controller's model operations as host calls see them. None of them waits for the run:
/// a change applies from the next model call, as in pi.
pub trait ModelControl: Send + Sync {
    /// The model of the next model call.
    fn current_model(&self) -> HookModel;
    /// `set_model`: an unknown model is `not_found`, one without credentials (or with an API
    /// this build lacks) `failed`; nothing changes then.
    fn select_model(&self, provider: &str, id: &str) -> Result<HookModel, CallError>;
    fn thinking_level(&self) -> ThinkingLevel;
    /// `set_thinking_level`: clamped to what the model offers; returns the level set.
    fn select_thinking_level(&self, level: ThinkingLevel) -> Result<ThinkingLevel, CallError>;
    /// The system prompt pi builds for every prompt (what `before_agent_start` is given).
    fn system_prompt(&self) -> Result<SystemPrompt, CallError>;
}

/// The model a hook is told of in `hello`: shared by every clone of a host context, so a hook
/// started at any time — at start-up, with a new session, after a crash — is told the model of
/// that moment. Empty while pi does not know yet which model it will use.
#[derive(Debug, Clone, Default)]
pub struct HelloModel(Arc<Mutex<Option<HookModel>>>);

impl HelloModel {
    pub fn set(&self, model: Option<HookModel>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = model;
    }

    pub fn get(&self) -> Option<HookModel> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// What the model calls answer at start-up, before the session controller exists (while
/// `session_start` and `resources_discover` are awaited): the model and level pi starts
/// with. Changing them has to wait until pi has started.
#[derive(Debug, Clone)]
pub struct StartupModel {
    pub model: HookModel,
    pub thinking: ThinkingLevel,
}

impl StartupModel {
    fn not_yet(method: &str) -> CallError {
        err(
            "unavailable",
            format!(
                "{method} is not available while pi is starting (session_start); call it from \
                 a later event or a command"
            ),
        )
    }
}

impl ModelControl for StartupModel {
    fn current_model(&self) -> HookModel {
        self.model.clone()
    }

    fn select_model(&self, _provider: &str, _id: &str) -> Result<HookModel, CallError> {
        Err(Self::not_yet("model.set"))
    }

    fn thinking_level(&self) -> ThinkingLevel {
        self.thinking
    }

    fn select_thinking_level(&self, _level: ThinkingLevel) -> Result<ThinkingLevel, CallError> {
        Err(Self::not_yet("thinking.set"))
    }

    /// The prompt is built after `session_start`, from the resources hooks contribute.
    fn system_prompt(&self) -> Result<SystemPrompt, CallError> {
        Err(Self::not_yet("prompt.get"))
    }
}

/// A prompt's sections as hooks see them: an object of name → text, in the prompt's order.
pub fn sections_value(prompt: &SystemPrompt) -> Value {
    Value::Object(
        prompt
            .sections()
            .iter()
            .map(|s| (s.name.clone(), Value::String(s.text.clone())))
            .collect(),
    )
}

fn model_value(m: &HookModel) -> Result<Value, CallError> {
    serde_json::to_value(m).map_err(|e| err("failed", format!("the model did not serialise: {e}")))
}

fn level_param(params: &Value) -> Result<ThinkingLevel, CallError> {
    let level = str_param(params, "level")?;
    ThinkingLevel::parse(level).ok_or_else(|| {
        err(
            "invalid_params",
            format!(
                "`level` must be one of {}, not {level:?}",
                ThinkingLevel::ALL.join(", ")
            ),
        )
    })
}

pub(super) fn handle(calls: &HostCalls, method: &str, params: &Value) -> Result<Value, CallError> {
    let control = calls.model_control()?;
    match method {
        "model.get" => model_value(&control.current_model()),
        "model.set" => {
            let provider = str_param(params, "provider")?;
            let id = str_param(params, "id")?;
            model_value(&control.select_model(provider, id)?)
        }
        "thinking.get" => Ok(json!({"level": control.thinking_level().as_str()})),
        "thinking.set" => {
            let level = control.select_thinking_level(level_param(params)?)?;
            Ok(json!({"level": level.as_str()}))
        }
        "prompt.get" => {
            let prompt = control.system_prompt()?;
            Ok(json!({"system_prompt": prompt.text(), "sections": sections_value(&prompt)}))
        }
        other => Err(err("unknown_method", format!("unknown method {other:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thinking_level_must_be_one_pi_knows() {
        assert_eq!(
            level_param(&json!({"level": "HIGH"})).ok(),
            Some(ThinkingLevel::High)
        );
        let bad = level_param(&json!({"level": "hot"})).unwrap_err();
        assert_eq!(bad.code, "invalid_params");
        assert!(bad.message.contains("\"hot\""), "{}", bad.message);
        assert_eq!(level_param(&json!({})).unwrap_err().code, "invalid_params");
    }
}
