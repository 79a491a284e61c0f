//! Recognizing "the context is too long" (pi's `isContextOverflow`, in `packages/ai`). Such a
//! failure is not retried like other errors: the app compacts and then retries the turn.
//!
//! Providers say it in their own words, so detection is a list of case-insensitive patterns
//! over the error message, with exclusions for throttling messages that happen to match
//! (Bedrock's "Too many tokens, please wait" is a rate limit). Two providers do not fail at
//! all: one answers normally with an input larger than the window, another truncates the
//! input to fill the window and stops with no output. Those are caught from the usage when
//! the window is known.

use std::sync::OnceLock;

use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};

use crate::message::{AssistantMessage, StopReason};

/// Overflow messages, one pattern per provider family (pi 0.84's list, same order).
const OVERFLOW_PATTERNS: &[&str] = &[
    r"prompt is too long",                    // Anthropic, token count
    r"request_too_large",                     // Anthropic, request bytes (HTTP 413)
    r"input is too long for requested model", // Amazon Bedrock
    r"exceeds the context window",            // OpenAI Completions and Responses
    r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))", // LiteLLM and other OpenAI-compatible proxies
    r"input token count.*exceeds the maximum", // Google Gemini
    r"maximum prompt length is \d+",           // xAI
    r"reduce the length of the messages",      // Groq
    r"maximum context length is \d+ tokens",   // OpenRouter
    r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?", // OpenRouter/Poolside
    r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)", // Together AI
    r"exceeds the limit of \d+",           // GitHub Copilot
    r"exceeds the available context size", // llama.cpp
    r"greater than the context length",    // LM Studio
    r"context window exceeds limit",       // MiniMax
    r"exceeded model token limit",         // Kimi For Coding
    r"too large for model with \d+ maximum context length", // Mistral
    r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?", // DS4
    r"model_context_window_exceeded",      // z.ai finish reason surfaced as an error
    r"prompt too long; exceeded (?:max )?context length", // Ollama
    r"range of input length should be",    // DashScope / Qwen
    r"context[_ ]length[_ ]exceeded",      // generic
    r"too many tokens",                    // generic
    r"token limit exceeded",               // generic
    r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)", // Cerebras: 400/413 without a body
];

/// Messages that are never overflow, even when an overflow pattern matches.
const NON_OVERFLOW_PATTERNS: &[&str] = &[
    r"^(Throttling error|Service unavailable):", // Bedrock's readable error prefixes
    r"rate limit",
    r"too many requests",
];

struct Patterns {
    overflow: Vec<RegexMatcher>,
    not_overflow: Vec<RegexMatcher>,
}

fn compile(patterns: &[&str]) -> Vec<RegexMatcher> {
    let mut b = RegexMatcherBuilder::new();
    b.case_insensitive(true);
    // The patterns are constants checked by a test; one that failed to compile would only
    // make detection miss that provider, so it is skipped rather than taken down the app.
    patterns.iter().filter_map(|p| b.build(p).ok()).collect()
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        overflow: compile(OVERFLOW_PATTERNS),
        not_overflow: compile(NON_OVERFLOW_PATTERNS),
    })
}

fn any_match(matchers: &[RegexMatcher], text: &str) -> bool {
    matchers
        .iter()
        .any(|m| m.is_match(text.as_bytes()).unwrap_or(false))
}

/// Whether a provider's error message says the input exceeded the context window.
pub fn is_context_overflow_error(error_message: &str) -> bool {
    let p = patterns();
    !any_match(&p.not_overflow, error_message) && any_match(&p.overflow, error_message)
}

/// pi's `isContextOverflow` for a finished reply. `context_window` 0 means unknown, which
/// disables the two usage-based checks.
pub fn is_context_overflow(message: &AssistantMessage, context_window: u64) -> bool {
    if message.stop_reason == StopReason::Error {
        if let Some(err) = message.error_message.as_deref().filter(|e| !e.is_empty()) {
            if is_context_overflow_error(err) {
                return true;
            }
        }
    }
    if context_window == 0 {
        return false;
    }
    let input = message.usage.input + message.usage.cache_read;
    match message.stop_reason {
        // Accepted silently, with more input than the window holds.
        StopReason::Stop => input > context_window,
        // Input truncated to fill the window, leaving no room to answer.
        StopReason::Length => {
            message.usage.output == 0 && input as f64 >= context_window as f64 * 0.99
        }
        _ => false,
    }
}

/// pi's `isRecoverableLength`: the reply stopped for length before reaching the output limit
/// the caller wanted (`desired_max_output`, before any clamping to the context), so context
/// pressure likely cut it short and one compact-and-retry is worth it.
pub fn is_recoverable_length(message: &AssistantMessage, desired_max_output: u64) -> bool {
    message.stop_reason == StopReason::Length
        && desired_max_output > 0
        && message.usage.output < desired_max_output
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Usage;

    #[test]
    fn every_pattern_compiles() {
        assert_eq!(patterns().overflow.len(), OVERFLOW_PATTERNS.len());
        assert_eq!(patterns().not_overflow.len(), NON_OVERFLOW_PATTERNS.len());
    }

    #[test]
    fn provider_messages_are_recognized() {
        for msg in [
            "prompt is too long: 213462 tokens > 200000 maximum",
            r#"413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}"#,
            "Your input exceeds the context window of this model",
            "Requested token count exceeds the model's maximum context length of 131072 tokens",
            "Input length (265330) exceeds model's maximum context length (262144).",
            "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
            "This model's maximum prompt length is 131072 but the request contains 537812 tokens",
            "Please reduce the length of the messages or completion",
            "This endpoint's maximum context length is 8192 tokens. However, you requested about 9000 tokens",
            "Input length 9000 exceeds the maximum allowed input length of 8,192 tokens.",
            "The input (9000 tokens) is longer than the model's context length (8192 tokens).",
            "prompt token count of 130000 exceeds the limit of 128000",
            "the request exceeds the available context size, try increasing it",
            "tokens to keep from the initial prompt is greater than the context length",
            "invalid params, context window exceeds limit",
            "Your request exceeded model token limit: 262144 (requested: 300000)",
            "Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 maximum context length",
            "Prompt has 70,000 tokens, but the configured context size is 65,536 tokens",
            "model_context_window_exceeded",
            "prompt too long; exceeded max context length by 1200 tokens",
            "Range of input length should be [1, 129024]",
            "CONTEXT_LENGTH_EXCEEDED",
            "Too many tokens in request",
            "token limit exceeded",
            "400 status code (no body)",
            "413 (no body)",
        ] {
            assert!(is_context_overflow_error(msg), "{msg}");
        }
    }

    #[test]
    fn other_errors_and_rate_limits_are_not_overflow() {
        for msg in [
            "Throttling error: Too many tokens, please wait before trying again.",
            "Rate limit reached: too many tokens per minute",
            "429 Too Many Requests",
            "429 status code (no body)",
            "overloaded_error",
            "Internal server error",
            "the 400 status code (no body)",
        ] {
            assert!(!is_context_overflow_error(msg), "{msg}");
        }
    }

    fn reply(stop: StopReason, err: Option<&str>, input: u64, output: u64) -> AssistantMessage {
        let mut m = AssistantMessage::empty("a", "p", "m");
        m.stop_reason = stop;
        m.error_message = err.map(str::to_string);
        m.usage = Usage {
            input,
            output,
            ..Usage::default()
        };
        m
    }

    #[test]
    fn only_error_replies_are_matched_by_message() {
        let msg = Some("prompt is too long");
        assert!(is_context_overflow(&reply(StopReason::Error, msg, 0, 0), 0));
        assert!(!is_context_overflow(&reply(StopReason::Stop, msg, 0, 0), 0));
        assert!(!is_context_overflow(
            &reply(StopReason::Error, Some("boom"), 0, 0),
            0
        ));
    }

    #[test]
    fn silent_overflow_is_detected_from_usage_when_the_window_is_known() {
        let mut m = reply(StopReason::Stop, None, 150_000, 10);
        m.usage.cache_read = 60_000;
        assert!(is_context_overflow(&m, 200_000));
        assert!(!is_context_overflow(&m, 0));
        assert!(!is_context_overflow(&m, 210_000));
        // Truncated to fill the window, no output.
        assert!(is_context_overflow(
            &reply(StopReason::Length, None, 198_000, 0),
            200_000
        ));
        assert!(!is_context_overflow(
            &reply(StopReason::Length, None, 198_000, 5),
            200_000
        ));
        assert!(!is_context_overflow(
            &reply(StopReason::Length, None, 197_000, 0),
            200_000
        ));
    }

    #[test]
    fn recoverable_length_stops_end_below_the_desired_output() {
        assert!(is_recoverable_length(
            &reply(StopReason::Length, None, 0, 100),
            8192
        ));
        assert!(!is_recoverable_length(
            &reply(StopReason::Length, None, 0, 8192),
            8192
        ));
        assert!(!is_recoverable_length(
            &reply(StopReason::Length, None, 0, 100),
            0
        ));
        assert!(!is_recoverable_length(
            &reply(StopReason::Stop, None, 0, 100),
            8192
        ));
    }
}
