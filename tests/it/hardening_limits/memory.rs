//! Item 6: a hook cannot exhaust pi's memory — call floods meet backpressure, log floods the
//! per-second budget, and recursion through `tools.execute` the nesting limit — and pi keeps
//! working meanwhile.

use std::time::Instant;

use serde_json::json;

use super::*;

/// 100 000 `tools.execute` calls of a tool that never finishes: pi serves a bounded number at
/// a time and stops reading the flooding hook meanwhile (its gate reply, behind the flood, is
/// never read: the gate times out and fails closed), its memory stays bounded, and the run
/// still ends normally.
#[tokio::test]
async fn a_call_flood_is_held_back_and_memory_stays_bounded() {
    let agent = TestAgent::new();
    let flood = limits_hook(
        &agent,
        "flood",
        json!({"subscriptions": gate_on_bash(),
               "flood": {"kind": "calls", "count": 100_000,
                         "call": {"method": "tools.execute",
                                  "params": {"tool": "stall", "arguments": {}}}}}),
    );
    let mut stall = scripted(
        &agent,
        "stall",
        json!({"tools": [{"name": "stall", "description": "Never finishes.",
                          "parameters": {"type": "object"}}],
               "tool": {"stall": {"fault": "hang"}}}),
    );
    // Not recorded: a failing host would send it 100 000 requests.
    stall["config"]
        .as_object_mut()
        .expect("config")
        .remove("record");
    use_hooks(&agent, vec![flood, stall]);
    let pi = Running::start(
        &agent,
        bash_then_final("touch tool-ran"),
        &["--mode", "json", "go"],
    );
    let (out, peak) = pi.finish().await;
    out.assert_ok();
    assert!(
        peak < MEMORY_BOUND_KB,
        "pi's peak memory reached {peak} kB under a call flood\n{}",
        out.stderr
    );
    assert_eq!(final_text(&out.events()), "final text", "{out}");
    let end = only_tool_end(&out);
    assert!(
        end.text.starts_with("Blocked: hook flood failed") && end.text.contains("did not reply"),
        "the flooding hook's gate reply should wait behind its flood: {:?}",
        end.text
    );
    assert!(!agent.cwd.join("tool-ran").exists(), "{out}");
    for h in ["flood", "stall"] {
        assert_hook_gone(&agent, h);
    }
}

/// A million `log` frames: pi reads them all (the gate reply behind them arrives), its
/// memory stays bounded, and `--verbose` shows no more of them than the per-second budget
/// allows for the time the run took, and says how many it dropped.
#[tokio::test]
async fn a_log_flood_is_rate_limited_and_memory_stays_bounded() {
    let agent = TestAgent::new();
    let mut flood = limits_hook(
        &agent,
        "flood",
        json!({"subscriptions": gate_on_bash(),
               "flood": {"kind": "logs", "count": 1_000_000}}),
    );
    flood["timeout_ms"] = json!(60_000);
    use_hooks(&agent, vec![flood]);
    let started = Instant::now();
    let pi = Running::start(
        &agent,
        bash_then_final("touch tool-ran"),
        &["--mode", "json", "--verbose", "go"],
    );
    // Reading a million frames takes a debug build several seconds, more on a busy machine.
    let (out, peak) = pi.finish_within(crate::common::RUN_TIMEOUT).await;
    let took = started.elapsed();
    out.assert_ok();
    assert!(
        agent.cwd.join("tool-ran").exists(),
        "the gate's reply behind the flood was lost\n{}",
        out.stdout
    );
    assert!(
        peak < MEMORY_BOUND_KB,
        "pi's peak memory reached {peak} kB under a log flood"
    );
    let shown = out
        .stderr
        .lines()
        .filter(|l| l.contains("flood line"))
        .count();
    // 200 frames per second (the budget), each shown twice (as a log record and as the
    // hook's notice), over every one-second window the run touched.
    let budget = 2 * LOGS_PER_SEC * (took.as_secs() as usize + 2);
    assert!(
        shown <= budget,
        "--verbose showed {shown} of the flood's log lines in {took:?} (budget {budget})"
    );
    assert!(
        out.stderr.contains("log frames dropped"),
        "no summary of the dropped log frames:\n{}",
        out.stderr
            .lines()
            .rev()
            .take(20)
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_hook_gone(&agent, "flood");
}

/// A hook tool that runs itself through `tools.execute`, forever: the host refuses the call
/// past the nesting limit with an error result naming it, the refusal unwinds to the model,
/// and the run goes on.
#[tokio::test]
async fn nested_tools_execute_stops_at_the_depth_limit() {
    let agent = TestAgent::new();
    use_hooks(
        &agent,
        vec![limits_hook(&agent, "recurse", json!({"recurse": 1000}))],
    );
    let steps = json!([
        {"toolCalls": [{"name": "recurse", "arguments": {}, "id": "call-rec"}]},
        "final text"
    ]);
    let out = run_pi(
        &agent,
        &[
            agent.faux_args(steps),
            vec!["--mode".into(), "json".into(), "go".into()],
        ]
        .concat(),
    )
    .await;
    out.assert_ok();
    let end = only_tool_end(&out);
    assert!(end.is_error, "{out}");
    assert!(
        end.text.contains("nesting limit of 8"),
        "the refusal should name the limit: {:?}",
        end.text
    );
    let executes = recorded(&agent, "recurse")
        .iter()
        .filter(|m| m["type"] == "tool_execute")
        .count();
    // The model's call and eight nested levels ran; the ninth was refused.
    assert_eq!(executes, 9, "{out}");
    assert_eq!(final_text(&out.events()), "final text", "{out}");
    assert_hook_gone(&agent, "recurse");
}

/// A hook that floods calls of its own tool before reading anything could hold every call
/// slot waiting on replies it will never read; the nesting limit refuses all but a few at once,
/// so pi keeps reading, the hook's gate reply arrives and the run completes.
#[tokio::test]
async fn calls_waiting_on_the_calling_hook_itself_do_not_deadlock_it() {
    let agent = TestAgent::new();
    let mut selfish = limits_hook(
        &agent,
        "selfish",
        json!({"subscriptions": gate_on_bash(), "self_flood": 5000}),
    );
    // The reply is expected: a deadline only to turn a deadlock into a failed gate.
    selfish["timeout_ms"] = json!(20_000);
    use_hooks(&agent, vec![selfish]);
    let out = run_pi(
        &agent,
        &[
            agent.faux_args(bash_then_final("touch tool-ran")),
            vec!["--mode".into(), "json".into(), "go".into()],
        ]
        .concat(),
    )
    .await;
    out.assert_ok();
    assert!(
        agent.cwd.join("tool-ran").exists(),
        "the gate reply was never read\n{out}"
    );
    let received = recorded(&agent, "selfish");
    let executes = received
        .iter()
        .filter(|m| m["type"] == "tool_execute")
        .count();
    assert!(
        (1..=8).contains(&executes),
        "{executes} calls of the hook's own tool were nested at once"
    );
    let refused = received
        .iter()
        .filter(|m| m["type"] == "result")
        .filter(|m| {
            m["value"]["is_error"] == true
                && m["value"]["content"][0]["text"]
                    .as_str()
                    .is_some_and(|t| t.contains("nesting limit of 8"))
        })
        .count();
    assert!(
        refused > 0,
        "no call was refused at the nesting limit\n{out}"
    );
    assert_eq!(tool_ends(&out.events()).len(), 1, "{out}");
    assert_hook_gone(&agent, "selfish");
}
