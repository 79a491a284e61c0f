//! What a Messages request asks of the model besides the conversation, as pi 1.6's
//! `anthropic-messages.js` decides it from the model's `compat` block and the thinking level:
//! `max_tokens`, `thinking` (disabled, adaptive, or a token budget), the effort (top level or,
//! for models that take it inside the conversation, as markers before each reply), the cache
//! marks and their lifetime, the tools' wire form (eager input streaming, strict schemas, the
//! cache breakpoint on the last), and the betas all of that needs.

use serde_json::{Map, Value};

use super::anthropic_wire::{BlockBinding, CacheControl, OutputConfig, Schema, Thinking, WireTool};
use super::cache_retention::Retention;
use super::constrained_sampling::{resolve_strict_with, tool_parameters, Sampled};
use super::context_budget::clamp_to_context;
use super::{thinking_map, Model, ProviderError, Request, ThinkingLevel};

const FINE_GRAINED_TOOL_STREAMING_BETA: &str = "fine-grained-tool-streaming-2025-05-14";
const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";
const SERVER_SIDE_FALLBACK_BETA: &str = "server-side-fallback-2026-07-01";
const MID_CONVERSATION_OUTPUT_CONFIG_BETA: &str = "mid-conversation-output-config-2026-07-01";
const THINKING_BINDING_CONTROLS_BETA: &str = "thinking-binding-controls-2026-08-01";
/// Tokens a thinking budget leaves for the answer.
const MIN_ANSWER_TOKENS: u64 = 1024;
/// What the API shows of the model's thinking (1.6's default `thinkingDisplay`).
const DISPLAY: &str = "summarized";

/// The model's `compat` flags this API reads, with 1.6's defaults.
#[derive(Debug, Clone, Copy)]
pub(super) struct Compat {
    pub eager_input_streaming: bool,
    pub cache_on_tools: bool,
    pub strict_tools: bool,
    pub allow_empty_signature: bool,
    pub effort_in_conversation: bool,
    pub adaptive: bool,
}

fn flag(model: &Model, key: &str) -> Option<bool> {
    model.compat.get(key).and_then(Value::as_bool)
}

impl Compat {
    pub fn of(model: &Model) -> Self {
        Compat {
            eager_input_streaming: flag(model, "supportsEagerToolInputStreaming").unwrap_or(true),
            cache_on_tools: flag(model, "supportsCacheControlOnTools").unwrap_or(true),
            strict_tools: flag(model, "supportsStrictTools").unwrap_or(false),
            allow_empty_signature: flag(model, "allowEmptySignature").unwrap_or(false),
            effort_in_conversation: flag(model, "supportsMidConvoEffort") == Some(true),
            adaptive: flag(model, "forceAdaptiveThinking") == Some(true),
        }
    }
}

/// The conversation's cache mark: none without caching, an hour's when a long retention was
/// asked for and the model keeps it.
pub(super) fn cache_control(model: &Model) -> Option<CacheControl> {
    let retention = Retention::of(model);
    if retention == Retention::None {
        return None;
    }
    let long = retention.long_kept(model, true);
    Some(CacheControl {
        ty: "ephemeral",
        ttl: long.then_some("1h"),
    })
}

/// How the request thinks.
#[derive(Debug, Clone)]
pub(super) struct Plan {
    pub max_tokens: u64,
    pub thinking: Option<Thinking>,
    pub output_config: Option<OutputConfig>,
    /// The effort the reply is asked for by a marker at the end of the conversation, for
    /// models that take effort inside it (and the level the reply is recorded with).
    pub effort_markers: Option<String>,
}

/// 1.6's `mapThinkingLevelToEffort`.
fn effort(model: &Model, level: ThinkingLevel) -> String {
    if let Some(Some(name)) = thinking_map::mapped(&model.thinking_level_map, level) {
        return name.to_string();
    }
    match level {
        ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        _ => "high",
    }
    .into()
}

/// The plan of `req`, as 1.6's `streamSimple` and `buildParams` make it.
pub(super) fn plan(req: &Request) -> Plan {
    let model = &req.model;
    let compat = Compat::of(model);
    let level = req.thinking;
    let enabled = level != ThinkingLevel::Off;
    let mut max_tokens = clamp_to_context(req, model.max_tokens);
    // The effort adaptive thinking is asked for; none for budgeted or no thinking.
    let mut asked: Option<String> = None;
    let mut budget = None;
    if enabled && compat.adaptive {
        asked = Some(effort(model, level));
    } else if enabled {
        let mut b = u64::from(level.budget_tokens());
        let capped = (max_tokens + b).min(model.max_tokens);
        if capped <= b {
            b = b.min(capped.saturating_sub(MIN_ANSWER_TOKENS));
        }
        max_tokens = clamp_to_context(req, capped);
        let b = b.min(max_tokens.saturating_sub(MIN_ANSWER_TOKENS));
        budget = Some(if b == 0 { MIN_ANSWER_TOKENS } else { b });
    }
    let off_is_offered =
        thinking_map::mapped(&model.thinking_level_map, ThinkingLevel::Off) != Some(None);
    let disabled = model.reasoning && !enabled && off_is_offered;
    let markers = compat.effort_in_conversation && !disabled;
    let (thinking, output_config) = if disabled {
        (Some(Thinking::Disabled), None)
    } else if markers {
        let binding = BlockBinding {
            prefix_mismatch_behavior: "drop_block",
        };
        let thinking = Thinking::Adaptive {
            display: DISPLAY,
            block_binding: Some(binding),
        };
        // Low at the top: the cached prefix keeps it, and organisations may cap effort.
        (
            Some(thinking),
            Some(OutputConfig {
                effort: "low".into(),
            }),
        )
    } else if model.reasoning && enabled && compat.adaptive {
        let thinking = Thinking::Adaptive {
            display: DISPLAY,
            block_binding: None,
        };
        (
            Some(thinking),
            asked.clone().map(|effort| OutputConfig { effort }),
        )
    } else if let Some(budget_tokens) = budget.filter(|_| model.reasoning) {
        let thinking = Thinking::Enabled {
            budget_tokens,
            display: DISPLAY,
        };
        (Some(thinking), None)
    } else {
        (None, None)
    };
    Plan {
        max_tokens,
        thinking,
        output_config,
        effort_markers: markers.then(|| asked.unwrap_or_else(|| "high".into())),
    }
}

/// The betas `req` declares, as 1.6's `getBetaFeatures` chooses them (a configured
/// `anthropic-beta` header replaces them when the headers are applied).
pub(super) fn betas(req: &Request, login: bool, native_tool_changes: bool) -> Vec<&'static str> {
    let model = &req.model;
    let compat = Compat::of(model);
    let mut betas = Vec::new();
    if login {
        betas.extend(["claude-code-20250219", "oauth-2025-04-20"]);
    }
    if !req.tools.is_empty() && !compat.eager_input_streaming {
        betas.push(FINE_GRAINED_TOOL_STREAMING_BETA);
    }
    if model.reasoning && req.thinking != ThinkingLevel::Off && !compat.adaptive {
        betas.push(INTERLEAVED_THINKING_BETA);
    }
    if !fallbacks(model).is_empty() {
        betas.push(SERVER_SIDE_FALLBACK_BETA);
    }
    if compat.effort_in_conversation {
        betas.extend([
            MID_CONVERSATION_OUTPUT_CONFIG_BETA,
            THINKING_BINDING_CONTROLS_BETA,
        ]);
    }
    if native_tool_changes {
        betas.push(super::anthropic_system::INLINE_TOOLS_BETA);
    }
    betas
}

/// `compat.allowedFallbackModels`' model ids.
pub(super) fn fallbacks(model: &Model) -> Vec<&str> {
    model
        .compat
        .get("allowedFallbackModels")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|f| f.get("model").and_then(Value::as_str))
        .collect()
}

/// Keywords Anthropic's strict tool use rejects with a 400 for the whole request.
fn strict_unsupported(key: &str, value: &Value) -> bool {
    const KEYWORDS: [&str; 11] = [
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "maxItems",
        "uniqueItems",
        "minContains",
        "maxContains",
        "minProperties",
        "maxProperties",
    ];
    const FORMATS: [&str; 10] = [
        "date-time",
        "time",
        "date",
        "duration",
        "email",
        "hostname",
        "uri",
        "ipv4",
        "ipv6",
        "uuid",
    ];
    match key {
        _ if KEYWORDS.contains(&key) => true,
        "minItems" => value.as_u64().is_none_or(|n| n > 1),
        "format" => value.as_str().is_none_or(|f| !FORMATS.contains(&f)),
        _ => false,
    }
}

/// Tools as the API takes them (1.6's `convertTools`): the last carries `cache`.
pub(super) fn tools<'a, T: Sampled>(
    tools: &[&'a T],
    compat: Compat,
    name: &dyn Fn(&'a str) -> &'a str,
    cache: Option<CacheControl>,
) -> Result<Vec<WireTool<'a>>, ProviderError> {
    let last = tools.len().saturating_sub(1);
    tools
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            let strict = resolve_strict_with(t, compat.strict_tools, Some(&strict_unsupported))
                .map_err(|e| ProviderError::Other(e.to_string()))?;
            Ok(WireTool {
                name: name(t.tool_name()),
                description: t.tool_description(),
                eager_input_streaming: compat.eager_input_streaming.then_some(true),
                strict: strict.then_some(true),
                input_schema: Schema::Of(input_schema(t, strict)),
                cache_control: cache.filter(|_| i == last),
                defer_loading: None,
            })
        })
        .collect()
}

/// The tool's schema reduced to what Anthropic takes at the root (no root `anyOf`/`oneOf`/
/// `allOf`, which it rejects): `type`, `properties`, `required`, and the keywords property
/// `$ref`s and extra arguments need; the strict form keeps the rest of its own.
fn input_schema<T: Sampled>(tool: &T, strict: bool) -> Value {
    let params = tool_parameters(tool, strict);
    let field = |k: &str| params.get(k).cloned();
    let mut legacy = Map::new();
    legacy.insert("type".into(), Value::from("object"));
    legacy.insert(
        "properties".into(),
        field("properties").unwrap_or_else(|| Value::Object(Map::new())),
    );
    legacy.insert(
        "required".into(),
        field("required").unwrap_or_else(|| Value::Array(Vec::new())),
    );
    for k in ["additionalProperties", "$defs", "definitions"] {
        if let Some(v) = field(k) {
            legacy.insert(k.into(), v);
        }
    }
    if !strict {
        return Value::Object(legacy);
    }
    let mut merged = match params {
        Value::Object(o) => o,
        _ => Map::new(),
    };
    merged.extend(legacy);
    Value::Object(merged)
}
