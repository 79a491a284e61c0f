use std::collections::VecDeque;
use std::sync::Mutex;

use async_trait::async_trait;
use serde_json::json;

use super::*;
use crate::message::{Content, UserContent};
use crate::session::compaction::test_support::*;
use crate::session::compaction::{
    prepare, serialize_agent_messages, CompactionSettings, FileOps, SummaryStage,
};
use crate::session::entry::{AgentMessage, Entry};

/// Answers each call with the next scripted reply and records the requests.
struct Scripted {
    replies: Mutex<VecDeque<Result<AssistantMessage, ProviderError>>>,
    requests: Mutex<Vec<Request>>,
}

impl Scripted {
    fn new(replies: Vec<Result<AssistantMessage, ProviderError>>) -> Self {
        Scripted {
            replies: Mutex::new(replies.into()),
            requests: Mutex::new(Vec::new()),
        }
    }

    fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

#[async_trait]
impl Provider for Scripted {
    fn api(&self) -> &'static str {
        "scripted"
    }

    async fn stream(
        &self,
        req: &Request,
        ctx: &CallContext,
    ) -> Result<AssistantMessage, ProviderError> {
        self.requests.lock().unwrap().push(req.clone());
        if ctx.cancel.is_cancelled() {
            return Err(ProviderError::Aborted);
        }
        self.replies
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| Err(ProviderError::Other("script exhausted".into())))
    }
}

fn reply(text: &str, total: u64) -> Result<AssistantMessage, ProviderError> {
    let mut a = assistant_msg(vec![Content::text(text)]);
    a.usage = Usage {
        input: total - 1,
        output: 1,
        total_tokens: total,
        ..Usage::default()
    };
    Ok(a)
}

fn model(max_tokens: u64, reasoning: bool) -> Model {
    Model {
        id: "m".into(),
        name: "m".into(),
        provider: "scripted".into(),
        api: "scripted".into(),
        base_url: String::new(),
        headers: Default::default(),
        reasoning,
        input: vec!["text".into()],
        context_window: 200_000,
        max_tokens,
        cost: Default::default(),
        compat: json!({}),
        prompt_cache: Default::default(),
        thinking_level_map: Default::default(),
        auth: Default::default(),
    }
}

fn no_retry(s: SummaryModel<'_>) -> SummaryModel<'_> {
    SummaryModel {
        retry: RetryPolicy {
            enabled: false,
            ..RetryPolicy::default()
        },
        ..s
    }
}

fn prompt_of(req: &Request) -> String {
    match &req.messages.iter().map(|m| m.as_ref()).collect::<Vec<_>>()[..] {
        [Message::User(u)] => match &u.content {
            UserContent::Text(s) => s.clone(),
            UserContent::Blocks(b) => text_of(b),
        },
        other => panic!("expected one user message, got {other:?}"),
    }
}

fn simple_prep() -> Preparation {
    let entries = [
        user_text("u1", "fix the parser"),
        assistant_call("a1", "read", "src/parse.rs"),
        tool_result("t1", 4000),
        user("u2", 4000),
    ];
    let path: Vec<&Entry> = entries.iter().collect();
    prepare(
        &path,
        &CompactionSettings {
            keep_recent_tokens: 1000,
            ..CompactionSettings::default()
        },
    )
    .unwrap()
}

#[tokio::test]
async fn one_call_carries_the_serialized_conversation_and_budget() {
    let prep = simple_prep();
    assert!(!prep.is_split_turn);
    let provider = Scripted::new(vec![reply("## Goal\nFix it", 120)]);
    let m = model(8192, false);
    let s = SummaryModel::new(&provider, &m, Some("key"));
    let r = compact(&s, &prep, Some("keep the tests"), CancellationToken::new())
        .await
        .unwrap();

    let reqs = provider.requests();
    assert_eq!(reqs.len(), 1);
    let req = &reqs[0];
    assert_eq!(req.system_prompt, SYSTEM_PROMPT);
    assert!(req.tools.is_empty());
    assert_eq!(req.api_key.as_deref(), Some("key"));
    // min(0.8 × 16384, 8192)
    assert_eq!(req.model.max_tokens, 8192);
    let prompt = prompt_of(req);
    let conversation = serialize_agent_messages(&prep.messages_to_summarize);
    assert!(conversation.contains("[Assistant tool calls]: read(path=\"src/parse.rs\")"));
    assert!(prompt.starts_with(&format!("<conversation>\n{conversation}\n</conversation>")));
    assert!(prompt.ends_with("Additional focus: keep the tests"));
    assert!(!prompt.contains("<previous-summary>"));

    assert_eq!(
        r.summary,
        "## Goal\nFix it\n\n<read-files>\nsrc/parse.rs\n</read-files>"
    );
    assert_eq!(r.first_kept_entry_id, "u2");
    assert_eq!(r.tokens_before, prep.tokens_before);
    assert_eq!(r.usage.as_ref().map(|u| u.total_tokens), Some(120));
    assert_eq!(r.details.read_files, ["src/parse.rs"]);
    let e = r.to_entry();
    assert_eq!(e.from_hook, Some(false));
    assert_eq!(e.details.unwrap()["readFiles"], json!(["src/parse.rs"]));
}

#[tokio::test]
async fn budget_is_the_reserve_share_when_the_model_allows_more() {
    let prep = simple_prep();
    let provider = Scripted::new(vec![reply("S", 2)]);
    let m = model(64_000, true);
    let s = SummaryModel {
        thinking: ThinkingLevel::High,
        ..SummaryModel::new(&provider, &m, None)
    };
    compact(&s, &prep, None, CancellationToken::new())
        .await
        .unwrap();
    let req = &provider.requests()[0];
    assert_eq!(req.model.max_tokens, 13107);
    assert_eq!(req.thinking, ThinkingLevel::High);
    // A model without reasoning never gets a thinking level.
    let provider = Scripted::new(vec![reply("S", 2)]);
    let m = model(0, false);
    let s = SummaryModel {
        thinking: ThinkingLevel::High,
        ..SummaryModel::new(&provider, &m, None)
    };
    compact(&s, &prep, None, CancellationToken::new())
        .await
        .unwrap();
    let req = &provider.requests()[0];
    assert_eq!(req.thinking, ThinkingLevel::Off);
    assert_eq!(req.model.max_tokens, 13107);
}

#[tokio::test]
async fn a_split_turn_makes_two_calls_and_merges_them() {
    let entries = [
        user_text("u0", "earlier work"),
        assistant_text("a0", 400),
        user_text("u1", "do the big thing"),
        assistant_call("a1", "edit", "big.rs"),
        tool_result("t1", 4000),
        assistant_call("a2", "read", "kept.rs"),
        tool_result("t2", 4000),
    ];
    let path: Vec<&Entry> = entries.iter().collect();
    let mut prep = prepare(
        &path,
        &CompactionSettings {
            keep_recent_tokens: 1500,
            ..CompactionSettings::default()
        },
    )
    .unwrap();
    assert!(prep.is_split_turn);
    prep.previous_summary = Some("OLD".into());
    let provider = Scripted::new(vec![reply("HISTORY", 100), reply("PREFIX", 50)]);
    let m = model(0, false);
    let s = SummaryModel::new(&provider, &m, None);
    let r = compact(&s, &prep, None, CancellationToken::new())
        .await
        .unwrap();

    let reqs = provider.requests();
    assert_eq!(reqs.len(), 2);
    let history = prompt_of(&reqs[0]);
    assert!(history.contains("[User]: earlier work"));
    assert!(!history.contains("do the big thing"));
    assert!(history.contains("<previous-summary>\nOLD\n</previous-summary>"));
    assert_eq!(reqs[0].model.max_tokens, 13107);
    let prefix = prompt_of(&reqs[1]);
    assert!(prefix.contains("[User]: do the big thing"));
    assert!(prefix.contains("## Original Request"));
    assert!(!prefix.contains("<previous-summary>"));
    // The turn prefix gets half the reserve.
    assert_eq!(reqs[1].model.max_tokens, 8192);

    assert_eq!(
        r.summary,
        "HISTORY\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX\n\n\
         <modified-files>\nbig.rs\n</modified-files>"
    );
    let u = r.usage.unwrap();
    assert_eq!((u.total_tokens, u.input, u.output), (150, 148, 2));
}

#[tokio::test]
async fn a_split_turn_without_history_summarizes_only_the_prefix() {
    let prep = Preparation {
        first_kept_entry_id: "a2".into(),
        messages_to_summarize: vec![],
        turn_prefix_messages: vec![AgentMessage::from(Message::user("start"))],
        is_split_turn: true,
        tokens_before: 10,
        previous_summary: None,
        file_ops: FileOps::default(),
        settings: CompactionSettings::default(),
    };
    let provider = Scripted::new(vec![reply("PREFIX", 5)]);
    let m = model(0, false);
    let r = compact(
        &SummaryModel::new(&provider, &m, None),
        &prep,
        None,
        CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(provider.requests().len(), 1);
    assert_eq!(
        r.summary,
        "No prior history.\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX"
    );
    assert_eq!(r.usage.unwrap().total_tokens, 5);
}

#[tokio::test]
async fn provider_failures_error_replies_and_empty_text_are_errors() {
    let prep = simple_prep();
    let m = model(0, false);

    let p = Scripted::new(vec![Err(ProviderError::Http {
        status: 400,
        message: "bad".into(),
        retry_after_ms: None,
    })]);
    let e = compact(
        &SummaryModel::new(&p, &m, None),
        &prep,
        None,
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert_eq!(e.to_string(), "Summarization failed: 400 bad");

    let mut failed = assistant_msg(vec![]);
    failed.stop_reason = StopReason::Error;
    let p = Scripted::new(vec![Ok(failed)]);
    let e = compact(
        &SummaryModel::new(&p, &m, None),
        &prep,
        None,
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert_eq!(e.to_string(), "Summarization failed: Unknown error");

    let p = Scripted::new(vec![reply("  \n", 3)]);
    let e = compact(
        &SummaryModel::new(&p, &m, None),
        &prep,
        None,
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert_eq!(
        e,
        CompactionError::EmptySummary {
            stage: SummaryStage::History
        }
    );
}

#[tokio::test]
async fn transient_failures_are_retried_and_cancellation_stops() {
    let prep = simple_prep();
    let m = model(0, false);
    let p = Scripted::new(vec![
        Err(ProviderError::StreamDropped("eof".into())),
        reply("S", 2),
    ]);
    let s = SummaryModel {
        retry: RetryPolicy {
            base_delay_ms: 1,
            ..RetryPolicy::default()
        },
        ..SummaryModel::new(&p, &m, None)
    };
    let r = compact(&s, &prep, None, CancellationToken::new())
        .await
        .unwrap();
    assert!(r.summary.starts_with('S'));
    assert_eq!(p.requests().len(), 2);

    // Without retries the same failure ends the compaction.
    let p = Scripted::new(vec![Err(ProviderError::StreamDropped("eof".into()))]);
    let e = compact(
        &no_retry(SummaryModel::new(&p, &m, None)),
        &prep,
        None,
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert!(matches!(e, CompactionError::Provider { .. }));

    let p = Scripted::new(vec![reply("S", 2)]);
    let cancel = CancellationToken::new();
    cancel.cancel();
    let e = compact(&SummaryModel::new(&p, &m, None), &prep, None, cancel)
        .await
        .unwrap_err();
    assert_eq!(e, CompactionError::Cancelled);
    assert!(p.requests().is_empty());
}
