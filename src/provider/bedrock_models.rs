//! What depends on the model family behind Bedrock, with 1.6's tests of the model id and name
//! (both, lower-cased and with `.`, `:`, `_` and spaces as `-`, so application inference
//! profiles named after their model are recognised): whether it is Claude (signatures, output
//! cap, error-result images), which Claude thinks adaptively, takes `xhigh` natively or binds
//! thinking blocks, which caches prompts, and the `additionalModelRequestFields` that ask for
//! reasoning (Claude's `thinking`, gpt-oss's `reasoning_effort`, GPT's `reasoning.effort`).

use serde_json::{json, Map, Value};

use super::thinking_map;
use super::{Model, ThinkingLevel};

const BINDING_BETA: &str = "thinking-binding-controls-2026-08-01";
const INTERLEAVED_BETA: &str = "interleaved-thinking-2025-05-14";

/// 1.6's `getModelMatchCandidates`.
fn candidates(model: &Model) -> Vec<String> {
    let mut values = vec![model.id.as_str()];
    if !model.name.is_empty() {
        values.push(model.name.as_str());
    }
    values
        .into_iter()
        .flat_map(|v| {
            let lower = v.to_lowercase();
            let mut dashed = String::with_capacity(lower.len());
            let mut prev_sep = false;
            for c in lower.chars() {
                let sep = c.is_whitespace() || matches!(c, '_' | '.' | ':');
                if sep {
                    if !prev_sep {
                        dashed.push('-');
                    }
                } else {
                    dashed.push(c);
                }
                prev_sep = sep;
            }
            [lower, dashed]
        })
        .collect()
}

fn any(model: &Model, needles: &[&str]) -> bool {
    candidates(model)
        .iter()
        .any(|s| needles.iter().any(|n| s.contains(n)))
}

/// 1.6's `isAnthropicClaudeModel`.
pub fn is_claude(model: &Model) -> bool {
    let id = model.id.to_lowercase();
    let name = model.name.to_lowercase();
    id.contains("anthropic.claude")
        || id.contains("anthropic/claude")
        || name.contains("anthropic.claude")
        || name.contains("anthropic/claude")
        || name.contains("claude")
}

const CLAUDE_5: [&str; 4] = ["opus-5", "sonnet-5", "haiku-5", "fable-5"];

pub fn supports_adaptive(model: &Model) -> bool {
    any(model, &["opus-4-6", "opus-4-7", "opus-4-8", "sonnet-4-6"]) || any(model, &CLAUDE_5)
}

fn native_xhigh(model: &Model) -> bool {
    any(model, &["opus-4-7", "opus-4-8"]) || any(model, &CLAUDE_5)
}

fn block_binding(model: &Model) -> bool {
    native_xhigh(model)
}

/// 1.6's `supportsPromptCaching`: Claude 3.5 Haiku, 3.7 Sonnet, 4.x and 5; anything else only
/// with `AWS_BEDROCK_FORCE_CACHE=1`.
pub fn supports_prompt_caching(model: &Model) -> bool {
    if !any(model, &["claude"]) {
        return model.env_var("AWS_BEDROCK_FORCE_CACHE").as_deref() == Some("1");
    }
    any(model, &CLAUDE_5) || any(model, &["-4-", "claude-3-7-sonnet", "claude-3-5-haiku"])
}

fn gov_cloud(model: &Model) -> bool {
    let region = super::bedrock_auth::configured_region(model);
    if region.is_some_and(|r| r.to_lowercase().starts_with("us-gov-")) {
        return true;
    }
    let id = model.id.to_lowercase();
    id.starts_with("us-gov.") || id.starts_with("arn:aws-us-gov:")
}

/// The level the model is asked for: clamped to what it offers, as 1.6's agent does.
fn level(model: &Model, level: ThinkingLevel) -> ThinkingLevel {
    if level == ThinkingLevel::Off {
        return level;
    }
    thinking_map::clamp(model.reasoning, &model.thinking_level_map, level)
}

fn mapped(model: &Model, level: ThinkingLevel) -> Option<String> {
    match thinking_map::mapped(&model.thinking_level_map, level) {
        Some(Some(s)) => Some(s.to_string()),
        _ => None,
    }
}

/// 1.6's `mapThinkingLevelToEffort` for adaptive Claude.
fn effort(model: &Model, level: ThinkingLevel) -> String {
    if level == ThinkingLevel::Xhigh && native_xhigh(model) {
        return "xhigh".into();
    }
    if let Some(m) = mapped(model, level) {
        return m;
    }
    match level {
        ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        _ => "high",
    }
    .into()
}

/// Claude's budget at `level` (budgeted Claude takes `xhigh` and `max` as `high`).
fn budget(level: ThinkingLevel) -> u64 {
    match level {
        ThinkingLevel::Minimal => 1024,
        ThinkingLevel::Low => 2048,
        ThinkingLevel::Medium => 8192,
        _ => 16384,
    }
}

fn claude_fields(model: &Model, level: ThinkingLevel) -> Value {
    let gov = gov_cloud(model);
    let binding = !gov && block_binding(model);
    let mut thinking = Map::new();
    let mut out = Map::new();
    if supports_adaptive(model) {
        thinking.insert("type".into(), json!("adaptive"));
        if !gov {
            thinking.insert("display".into(), json!("summarized"));
        }
        if binding {
            thinking.insert(
                "block_binding".into(),
                json!({"prefix_mismatch_behavior": "drop_block"}),
            );
        }
        out.insert("thinking".into(), Value::Object(thinking));
        out.insert(
            "output_config".into(),
            json!({"effort": effort(model, level)}),
        );
        if binding {
            out.insert("anthropic_beta".into(), json!([BINDING_BETA]));
        }
        return Value::Object(out);
    }
    // The budget leaves 1,024 tokens of the cap for the answer (1.6's streamSimple).
    let cap = model.max_tokens;
    let budget = budget(level).min(cap.saturating_sub(1024));
    thinking.insert("type".into(), json!("enabled"));
    thinking.insert("budget_tokens".into(), json!(budget));
    if !gov {
        thinking.insert("display".into(), json!("summarized"));
    }
    out.insert("thinking".into(), Value::Object(thinking));
    out.insert("anthropic_beta".into(), json!([INTERLEAVED_BETA]));
    Value::Object(out)
}

/// `additionalModelRequestFields` for `level`: none when not thinking or for a family 1.6
/// asks nothing of.
pub fn additional_fields(model: &Model, level: ThinkingLevel) -> Option<Value> {
    if level == ThinkingLevel::Off || !model.reasoning {
        return None;
    }
    let level = self::level(model, level);
    if level == ThinkingLevel::Off {
        return None;
    }
    if is_claude(model) {
        return Some(claude_fields(model, level));
    }
    if any(model, &["gpt-oss"]) {
        let effort = match level {
            ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            _ => "high",
        };
        return Some(json!({"reasoning_effort": effort}));
    }
    if any(model, &["gpt-"]) {
        let effort = mapped(model, level).unwrap_or_else(|| {
            match level {
                ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
                ThinkingLevel::Medium => "medium",
                ThinkingLevel::High => "high",
                ThinkingLevel::Xhigh => "xhigh",
                _ => "max",
            }
            .into()
        });
        return Some(json!({"reasoning": {"effort": effort}}));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::stream::test_support::model;

    fn m(id: &str, name: &str) -> Model {
        let mut m = model("bedrock-converse-stream", "http://x");
        m.id = id.into();
        m.name = name.into();
        m.reasoning = true;
        m
    }

    #[test]
    fn families_by_id_or_profile_name() {
        assert!(supports_adaptive(&m(
            "global.anthropic.claude-opus-4-6-v1",
            ""
        )));
        assert!(!supports_adaptive(&m(
            "anthropic.claude-sonnet-4-5-20250929-v1:0",
            ""
        )));
        // An application inference profile named after its model.
        let profile = m(
            "arn:aws:bedrock:us-east-1:1:application-inference-profile/abc",
            "Claude Sonnet 4.6",
        );
        assert!(is_claude(&profile) && supports_adaptive(&profile));
        assert!(supports_prompt_caching(&m(
            "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
            ""
        )));
        assert!(!supports_prompt_caching(&m("amazon.nova-2-lite-v1:0", "")));
    }
}
