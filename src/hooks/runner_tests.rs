//! Every semantics kind with two or three in-memory hooks at once.

use crate::hooks::events::{
    AwaitedEvent, BoundaryEvent, CancelableEvent, ChainEvent, CollectEvent, NotifyEvent,
};
use std::sync::Mutex;

use super::*;

type Reply = Box<dyn Fn(&Value) -> Result<Value, EndpointError> + Send + Sync>;

struct Fake {
    name: &'static str,
    events: Vec<&'static str>,
    tools: Option<Vec<&'static str>>,
    mode: HookMode,
    fail: FailPolicy,
    required: bool,
    /// `required_down`'s answer.
    down: Option<String>,
    reply: Reply,
    seen: Mutex<Vec<Value>>,
}

fn fake(
    name: &'static str,
    events: &[&'static str],
    reply: impl Fn(&Value) -> Result<Value, EndpointError> + Send + Sync + 'static,
) -> Fake {
    Fake {
        name,
        events: events.to_vec(),
        tools: None,
        mode: HookMode::Enforce,
        fail: FailPolicy::Closed,
        required: false,
        down: None,
        reply: Box::new(reply),
        seen: Mutex::new(Vec::new()),
    }
}

fn crash() -> Result<Value, EndpointError> {
    Err(EndpointError {
        kind: "crashed".into(),
        message: "hook exited with code 1".into(),
    })
}

#[async_trait]
impl Endpoint for Fake {
    fn name(&self) -> String {
        self.name.into()
    }
    fn wants(&self, event: &str, tool: Option<&str>) -> Option<Duration> {
        if !self.events.contains(&event) {
            return None;
        }
        match (&self.tools, tool) {
            (Some(list), Some(t)) if !list.contains(&t) => None,
            _ => Some(Duration::from_secs(1)),
        }
    }
    fn fail_policy(&self) -> FailPolicy {
        self.fail
    }
    fn mode(&self) -> HookMode {
        self.mode
    }
    fn required(&self) -> bool {
        self.required
    }
    fn required_down(&self) -> Option<String> {
        self.down.clone()
    }
    async fn request(
        &self,
        _event: &str,
        payload: Value,
        _d: Duration,
    ) -> Result<Value, EndpointError> {
        self.seen.lock().unwrap().push(payload.clone());
        (self.reply)(&payload)
    }
    fn notify(&self, _event: &str, payload: Value) {
        self.seen.lock().unwrap().push(payload);
    }
}

fn ok(_: &Value) -> Result<(), String> {
    Ok(())
}

fn runner(hooks: Vec<Arc<Fake>>) -> (Runner, mpsc::UnboundedReceiver<AgentEvent>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let hooks = hooks.into_iter().map(|h| h as Arc<dyn Endpoint>).collect();
    (Runner::new(hooks, Some(tx)), rx)
}

fn decisions(rx: &mut mpsc::UnboundedReceiver<AgentEvent>) -> Vec<HookDecision> {
    let mut v = Vec::new();
    while let Ok(e) = rx.try_recv() {
        if let AgentEvent::HookDecision(d) = e {
            v.push(d);
        }
    }
    v
}

#[tokio::test]
async fn gate_accumulates_patches_in_load_order_and_first_block_wins() {
    let a = Arc::new(fake("a", &["tool_call"], |_| {
        Ok(json!({"patch": {"command": "ls -la"}}))
    }));
    let b = Arc::new(fake("b", &["tool_call"], |p| {
        // b sees a's patch.
        assert_eq!(p["input"]["command"], "ls -la");
        Ok(json!({"block": true, "reason": "no listing"}))
    }));
    let c = Arc::new(fake("c", &["tool_call"], |_| Ok(json!({}))));
    let (r, mut rx) = runner(vec![a.clone(), b.clone(), c.clone()]);
    let v = r.gate("id1", "bash", json!({"command": "ls"}), &ok).await;
    assert_eq!(
        v,
        GateVerdict::Block {
            // The model reads the hook's own reason.
            reason: "no listing".into(),
            terminate: false,
        }
    );
    assert!(
        c.seen.lock().unwrap().is_empty(),
        "the chain stops at the first block"
    );
    let d = decisions(&mut rx);
    assert_eq!(d[0].outcome, "block");
    // The event names the hook; the model's text (above) does not.
    assert_eq!(
        d[0].reason.as_deref(),
        Some("Blocked by hook b: no listing")
    );
    assert_eq!(d[0].answers.len(), 2);
    assert_eq!(d[0].answers[0].outcome, "patch");
}

#[tokio::test]
async fn a_block_without_a_reason_reads_as_pi_1_6s_text_to_the_model() {
    let b = Arc::new(fake("b", &["tool_call"], |_| Ok(json!({"block": true}))));
    let (r, mut rx) = runner(vec![b]);
    let v = r.gate("id1", "bash", json!({"command": "ls"}), &ok).await;
    assert_eq!(
        v,
        GateVerdict::Block {
            reason: "Tool execution was blocked".into(),
            terminate: false,
        }
    );
    let d = decisions(&mut rx);
    assert_eq!(d[0].reason.as_deref(), Some("Blocked by hook b"));
}

#[tokio::test]
async fn gate_patches_merge_and_name_the_patchers() {
    let a = Arc::new(fake("a", &["tool_call"], |_| {
        Ok(json!({"patch": {"timeout": 5}}))
    }));
    let b = Arc::new(fake("b", &["tool_call"], |_| {
        Ok(json!({"patch": {"command": "echo safe"}}))
    }));
    let (r, _rx) = runner(vec![a, b]);
    let v = r
        .gate("id", "bash", json!({"command": "echo hi"}), &ok)
        .await;
    assert_eq!(
        v,
        GateVerdict::Allow {
            input: json!({"command": "echo safe", "timeout": 5}),
            patched_by: vec!["a".into(), "b".into()]
        }
    );
}

#[tokio::test]
async fn a_patch_that_breaks_the_schema_blocks_naming_that_hook() {
    let a = Arc::new(fake("fine", &["tool_call"], |_| {
        Ok(json!({"patch": {"timeout": 5}}))
    }));
    let b = Arc::new(fake("breaker", &["tool_call"], |_| {
        Ok(json!({"patch": {"command": 42}}))
    }));
    let c = Arc::new(fake("later", &["tool_call"], |_| Ok(json!({}))));
    let (r, mut rx) = runner(vec![a, b, c.clone()]);
    let must_be_string = |v: &Value| {
        if v["command"].is_string() {
            Ok(())
        } else {
            Err("command must be a string".to_string())
        }
    };
    let GateVerdict::Block { reason, .. } = r
        .gate("id", "bash", json!({"command": "ls"}), &must_be_string)
        .await
    else {
        panic!("an invalid patch must block")
    };
    assert!(
        reason.contains("hook breaker") && reason.contains("must be a string"),
        "{reason}"
    );
    assert!(c.seen.lock().unwrap().is_empty());
    let d = decisions(&mut rx);
    assert_eq!(d[0].outcome, "block");
    assert_eq!(d[0].answers[1].outcome, "block");
}

#[tokio::test]
async fn a_failing_gate_fails_closed_unless_open() {
    let closed = Arc::new(fake("strict", &["tool_call"], |_| crash()));
    let (r, mut rx) = runner(vec![closed]);
    let GateVerdict::Block { reason, .. } = r.gate("id", "bash", json!({}), &ok).await else {
        panic!("must block")
    };
    assert!(
        reason.contains("hook strict failed") && reason.contains("fails closed"),
        "{reason}"
    );
    let errors: Vec<_> = std::iter::from_fn(|| rx.try_recv().ok())
        .filter(|e| matches!(e, AgentEvent::HookError { .. }))
        .collect();
    assert_eq!(errors.len(), 1);

    let mut open = fake("lenient", &["tool_call"], |_| crash());
    open.fail = FailPolicy::Open;
    let (r, _rx) = runner(vec![Arc::new(open)]);
    assert!(matches!(
        r.gate("id", "bash", json!({}), &ok).await,
        GateVerdict::Allow { .. }
    ));
}

#[tokio::test]
async fn a_wrong_reply_shape_is_a_failure() {
    let h = Arc::new(fake("typo", &["tool_call"], |_| Ok(json!({"blok": true}))));
    let (r, _rx) = runner(vec![h]);
    let GateVerdict::Block { reason, .. } = r.gate("id", "bash", json!({}), &ok).await else {
        panic!("a misspelled reply must not allow silently")
    };
    assert!(reason.contains("expected shape"), "{reason}");
}

#[tokio::test]
async fn tool_filter_skips_the_round_trip() {
    let mut h = fake("only-write", &["tool_call"], |_| Ok(json!({"block": true})));
    h.tools = Some(vec!["write"]);
    let h = Arc::new(h);
    let (r, _rx) = runner(vec![h.clone()]);
    assert!(matches!(
        r.gate("id", "bash", json!({}), &ok).await,
        GateVerdict::Allow { .. }
    ));
    assert!(h.seen.lock().unwrap().is_empty());
    assert!(matches!(
        r.gate("id", "write", json!({}), &ok).await,
        GateVerdict::Block { .. }
    ));
}

#[tokio::test]
async fn shadow_hooks_report_would_block_without_blocking() {
    let mut h = fake("shadow", &["tool_call"], |_| {
        Ok(json!({"block": true, "reason": "x"}))
    });
    h.mode = HookMode::Shadow;
    let mut p = fake("shadow-patch", &["tool_call"], |_| {
        Ok(json!({"patch": {"command": "no"}}))
    });
    p.mode = HookMode::Shadow;
    let (r, mut rx) = runner(vec![Arc::new(h), Arc::new(p)]);
    let v = r.gate("id", "bash", json!({"command": "yes"}), &ok).await;
    assert_eq!(
        v,
        GateVerdict::Allow {
            input: json!({"command": "yes"}),
            patched_by: vec![]
        }
    );
    let d = decisions(&mut rx);
    assert_eq!(d[0].answers[0].outcome, "would_block");
    assert_eq!(d[0].answers[1].outcome, "would_patch");
}

#[tokio::test]
async fn chain_passes_the_accumulated_value_and_skips_failures() {
    let a = Arc::new(fake("a", &["input"], |p| {
        Ok(json!({"action": "transform", "text": format!("{}+a", p["text"].as_str().unwrap())}))
    }));
    let b = Arc::new(fake("b", &["input"], |_| crash()));
    let c = Arc::new(fake("c", &["input"], |p| {
        Ok(json!({"action": "transform", "text": format!("{}+c", p["text"].as_str().unwrap())}))
    }));
    let (r, mut rx) = runner(vec![a, b, c]);
    let out = r
        .chain(
            ChainEvent::Input,
            None,
            "x".to_string(),
            |t| json!({"text": t}),
            |acc, v, _| {
                if let Some(t) = v.get("text").and_then(Value::as_str) {
                    *acc = t.to_string();
                    return Ok(Step::Changed("transform"));
                }
                Ok(Step::Continue)
            },
        )
        .await;
    assert_eq!(out, "x+a+c");
    let d = decisions(&mut rx);
    let outcomes: Vec<_> = d[0].answers.iter().map(|a| a.outcome.as_str()).collect();
    assert_eq!(outcomes, vec!["transform", "error", "transform"]);
}

#[tokio::test]
async fn cancelable_stops_at_cancel_and_otherwise_last_result_wins() {
    let a = Arc::new(fake("a", &["session_before_compact"], |_| {
        Ok(json!({"compaction": {"summary": "A"}}))
    }));
    let b = Arc::new(fake("b", &["session_before_compact"], |_| {
        Ok(json!({"compaction": {"summary": "B"}}))
    }));
    let (r, _rx) = runner(vec![a.clone(), b.clone()]);
    let v = r
        .cancelable(CancelableEvent::SessionBeforeCompact, json!({}))
        .await;
    assert_eq!(v.result.unwrap()["compaction"]["summary"], "B");

    let c = Arc::new(fake("c", &["session_before_compact"], |_| {
        Ok(json!({"cancel": true}))
    }));
    let d = Arc::new(fake("d", &["session_before_compact"], |_| {
        Ok(json!({"compaction": {"summary": "D"}}))
    }));
    let (r, _rx) = runner(vec![c, d.clone()]);
    let v = r
        .cancelable(CancelableEvent::SessionBeforeCompact, json!({}))
        .await;
    assert_eq!(v.cancelled_by.as_deref(), Some("c"));
    assert!(d.seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn collect_concatenates_and_resolves_relative_paths_against_the_cwd() {
    let a = Arc::new(fake("a", &["resources_discover"], |_| {
        Ok(json!({"skill_paths": ["skills/x"]}))
    }));
    let b = Arc::new(fake("b", &["resources_discover"], |_| crash()));
    let c = Arc::new(fake("c", &["resources_discover"], |_| {
        Ok(json!({"skill_paths": ["/abs/y"], "prompt_paths": ["p"]}))
    }));
    let (r, _rx) = runner(vec![a, b, c]);
    let d = r
        .collect(CollectEvent::ResourcesDiscover, json!({"cwd": "/work"}))
        .await;
    assert_eq!(
        d.skill_paths,
        vec![PathBuf::from("/work/skills/x"), PathBuf::from("/abs/y")]
    );
    assert_eq!(d.prompt_paths, vec![PathBuf::from("/work/p")]);
}

#[tokio::test]
async fn first_decider_takes_the_first_definite_answer() {
    let a = Arc::new(fake("a", &["project_trust"], |_| {
        Ok(json!({"trusted": "undecided"}))
    }));
    let b = Arc::new(fake("b", &["project_trust"], |_| crash()));
    let c = Arc::new(fake("c", &["project_trust"], |_| {
        Ok(json!({"trusted": "no", "remember": true}))
    }));
    let d = Arc::new(fake("d", &["project_trust"], |_| {
        Ok(json!({"trusted": "yes"}))
    }));
    let (r, _rx) = runner(vec![a, b, c, d.clone()]);
    assert_eq!(r.decide_trust("/p").await, Some((false, true, "c".into())));
    assert!(d.seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn user_bash_fails_closed() {
    let a = Arc::new(fake("a", &["user_bash"], |_| crash()));
    let (r, _rx) = runner(vec![a]);
    assert!(r.user_bash(json!({"command": "ls"})).await.is_err());
    let b = Arc::new(fake("b", &["user_bash"], |_| {
        Ok(json!({"result": {"output": "x", "exit_code": 0}}))
    }));
    let (r, _rx) = runner(vec![b]);
    let (res, by) = r
        .user_bash(json!({"command": "ls"}))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(res["output"], "x");
    assert_eq!(by, "b");
}

#[tokio::test]
async fn boundary_hooks_see_the_proposal_so_far_and_a_later_one_may_replace_it() {
    let a = Arc::new(fake("a", &["turn_end"], |_| {
        Ok(json!({"messages": [{"custom_type": "note", "content": "from a"}], "continue": true}))
    }));
    let b = Arc::new(fake("b", &["turn_end"], |p| {
        assert_eq!(p["proposal"]["continue"], true);
        assert_eq!(p["proposal"]["entries"][0]["type"], "custom_message");
        assert_eq!(p["proposal"]["entries"][0]["content"], "from a");
        Ok(json!({}))
    }));
    // Replaces a's entries and overrules its `continue`.
    let c = Arc::new(fake("c", &["turn_end"], |_| {
        Ok(
            json!({"entries": [{"type": "custom", "custom_type": "state", "data": {"n": 1}}],
                  "continue": false}),
        )
    }));
    let (r, _rx) = runner(vec![a, b.clone(), c]);
    let out = r
        .boundary(BoundaryEvent::TurnEnd, json!({"turn_index": 0}))
        .await;
    assert_eq!(b.seen.lock().unwrap().len(), 1);
    assert!(!out.continue_run);
    assert_eq!(
        out.entries,
        [crate::hooks::protocol::BoundaryDraft::Custom {
            custom_type: "state".into(),
            data: Some(json!({"n": 1})),
        }]
    );
}

#[tokio::test]
async fn awaited_and_plain_notify_reach_only_subscribers() {
    let a = Arc::new(fake("a", &["session_start", "agent_start"], |_| {
        Ok(Value::Null)
    }));
    let b = Arc::new(fake("b", &[], |_| Ok(Value::Null)));
    let (r, _rx) = runner(vec![a.clone(), b.clone()]);
    r.awaited(AwaitedEvent::SessionStart, json!({"reason": "startup"}))
        .await;
    let mut built = false;
    r.notify(NotifyEvent::AgentStart, None, || {
        built = true;
        json!({})
    });
    assert!(built);
    r.notify(NotifyEvent::TurnStart, None, || {
        panic!("no subscriber: the payload is never built")
    });
    assert_eq!(a.seen.lock().unwrap().len(), 2);
    assert!(b.seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_required_hook_that_is_down_refuses_every_tool_without_asking_anyone() {
    let mut m = fake("managed", &[], |_| Ok(json!({})));
    m.required = true;
    m.down =
        Some("policy degraded: managed hook managed is not running: gone (quarantined)".into());
    let m = Arc::new(m);
    let other = Arc::new(fake("other", &["tool_call"], |_| Ok(json!({}))));
    let (r, mut rx) = runner(vec![m, other.clone()]);
    // Not subscribed to anything, yet every tool is refused.
    let v = r.gate("id1", "read", json!({"path": "x"}), &ok).await;
    let GateVerdict::Block { reason, .. } = v else {
        panic!("allowed while a required hook is down: {v:?}")
    };
    assert_eq!(
        reason,
        "Blocked: policy degraded: managed hook managed is not running: gone (quarantined). \
         No tool can run until that hook is running again."
    );
    assert!(other.seen.lock().unwrap().is_empty(), "no hook is asked");
    let mut saw_error = false;
    let mut saw_block = false;
    while let Ok(e) = rx.try_recv() {
        match e {
            AgentEvent::HookError { hook, kind, .. } => {
                saw_error |= hook == "managed" && kind == "policy_degraded"
            }
            AgentEvent::HookDecision(d) => saw_block |= d.outcome == "block",
            _ => {}
        }
    }
    assert!(saw_error && saw_block);
}

#[tokio::test]
async fn required_gates_judge_the_input_after_later_patches() {
    let mut m = fake("managed", &["tool_call"], |p| {
        if p["input"]["command"] == "rm -rf /" {
            Ok(json!({"block": true, "reason": "not that"}))
        } else {
            Ok(json!({}))
        }
    });
    m.required = true;
    let m = Arc::new(m);
    let sneaky = Arc::new(fake("sneaky", &["tool_call"], |_| {
        Ok(json!({"patch": {"command": "rm -rf /"}}))
    }));
    let (r, _rx) = runner(vec![m.clone(), sneaky]);
    let v = r.gate("id1", "bash", json!({"command": "ls"}), &ok).await;
    assert_eq!(
        v,
        GateVerdict::Block {
            reason: "not that".into(),
            terminate: false,
        }
    );
    assert_eq!(
        m.seen.lock().unwrap().len(),
        2,
        "asked again after the patch"
    );

    // Without a later patch the required hook is asked once.
    let mut m = fake("managed", &["tool_call"], |_| Ok(json!({})));
    m.required = true;
    let m = Arc::new(m);
    let plain = Arc::new(fake("plain", &["tool_call"], |_| Ok(json!({}))));
    let (r, _rx) = runner(vec![m.clone(), plain]);
    let v = r.gate("id2", "bash", json!({"command": "ls"}), &ok).await;
    assert!(matches!(v, GateVerdict::Allow { .. }), "{v:?}");
    assert_eq!(m.seen.lock().unwrap().len(), 1);
}
