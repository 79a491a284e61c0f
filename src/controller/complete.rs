//! Argument completion from hooks: what may follow `/name ` for a command whose hook
//! registered it with `completions: true`, asked with a short deadline so a slow hook only
//! delays its own list, never the editor.

use std::time::Duration;

use serde_json::Value;

use super::SessionController;

/// At most this long for a hook's completions (its event deadline if shorter).
const COMPLETE_DEADLINE: Duration = Duration::from_secs(2);
/// At most this many items are taken from one answer.
const MAX_ITEMS: usize = 200;

/// One completion a hook offered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgCompletion {
    pub value: String,
    pub description: Option<String>,
}

impl SessionController {
    /// Which commands offer argument completion.
    pub fn completing_commands(&self) -> Vec<String> {
        self.core
            .hooks()
            .instances
            .iter()
            .flat_map(|h| h.registration().commands)
            .filter(|c| c.completions)
            .map(|c| c.name)
            .collect()
    }

    /// The hook's completions for `/name prefix`; empty when no hook offers them, or it
    /// failed or took too long (completion is a convenience, never an error to show).
    pub async fn complete_command(&self, name: &str, prefix: &str) -> Vec<ArgCompletion> {
        let hooks = self.core.hooks();
        let Some(hook) = hooks.instances.iter().find(|h| {
            h.registration()
                .commands
                .iter()
                .any(|c| c.name == name && c.completions)
        }) else {
            return Vec::new();
        };
        let deadline = hook.spec().event_timeout.min(COMPLETE_DEADLINE);
        match hook.complete(name, prefix, deadline).await {
            Ok(v) => items(&v),
            Err(_) => Vec::new(),
        }
    }
}

/// `{items: [string | {value, description?}]}`; anything else is skipped.
fn items(v: &Value) -> Vec<ArgCompletion> {
    v.get("items")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|i| match i {
                    Value::String(s) => Some(ArgCompletion {
                        value: s.clone(),
                        description: None,
                    }),
                    Value::Object(o) => Some(ArgCompletion {
                        value: o.get("value")?.as_str()?.to_string(),
                        description: o
                            .get("description")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                    }),
                    _ => None,
                })
                .take(MAX_ITEMS)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn items_take_strings_and_objects_and_skip_the_rest() {
        let v = json!({"items": ["staging", {"value": "production", "description": "live"}, 3, {"nope": 1}]});
        assert_eq!(
            items(&v),
            [
                ArgCompletion {
                    value: "staging".into(),
                    description: None
                },
                ArgCompletion {
                    value: "production".into(),
                    description: Some("live".into())
                },
            ]
        );
        assert!(items(&json!({})).is_empty());
    }
}
