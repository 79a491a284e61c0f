//! The controller's model operations as hooks' host calls reach them ([`ModelControl`]):
//! the very `set_model` and `set_thinking_level` that `/model` and RPC use, so a hook's change
//! is validated, recorded and announced the same way, answered in the protocol's shapes.

use super::model::{hook_model, info_in};
use super::{ControllerError, Core};
use crate::config::ModelRegistry;
use crate::hooks::calls::ModelControl;
use crate::hooks::protocol::{CallError, HookModel};
use crate::provider::{Model, ThinkingLevel};

/// `model` as hooks see it (`hello.model` before the controller exists).
pub fn hook_model_for(registry: &ModelRegistry, model: Model) -> HookModel {
    hook_model(&info_in(registry, model))
}

impl ModelControl for Core {
    fn current_model(&self) -> HookModel {
        hook_model(&self.model_info())
    }

    fn select_model(&self, provider: &str, id: &str) -> Result<HookModel, CallError> {
        match self.set_model(provider, id, "set") {
            Ok(info) => Ok(hook_model(&info)),
            Err(e @ ControllerError::ModelNotFound { .. }) => Err(CallError {
                code: "not_found".into(),
                message: e.to_string(),
            }),
            Err(e) => Err(e.into()),
        }
    }

    fn thinking_level(&self) -> ThinkingLevel {
        self.handle.config().thinking
    }

    fn select_thinking_level(&self, level: ThinkingLevel) -> Result<ThinkingLevel, CallError> {
        Ok(self.set_thinking(level))
    }

    fn system_prompt(&self) -> Result<crate::resources::system_prompt::SystemPrompt, CallError> {
        Ok(self.handle.config().system_prompt)
    }
}
