//! The conversation is held once: after a run and after a resume, the agent's context holds
//! the very allocations the session's entries hold.

use super::*;
use crate::controller::PromptRequest;
use crate::session::AgentMessage;

async fn exchange(h: &mut Harness, text: &str) {
    h.ctl.prompt(PromptRequest::text(text)).await.unwrap();
    h.until(is_settled).await;
}

/// Asserts that every message of the agent's context is the session's own allocation.
fn assert_shared(h: &Harness, when: &str) {
    let agent = h.ctl.agent().messages();
    let session = h.ctl.session();
    let s = session.lock();
    let ctx = s.context();
    assert_eq!(agent.len(), ctx.messages.len(), "{when}");
    assert!(!agent.is_empty(), "{when}");
    for (kept, stored) in agent.iter().zip(&ctx.messages) {
        let AgentMessage::Typed(stored) = stored.message.as_ref() else {
            panic!("{when}: {stored:?} is not a typed message")
        };
        assert!(
            Arc::ptr_eq(kept, stored),
            "{when}: {kept:?} is a second copy"
        );
    }
}

#[tokio::test]
async fn the_agent_and_the_session_share_messages_after_a_run_and_after_a_resume() {
    let mut h = start(Opts {
        script: json!(["a1", "a2"]),
        ..Opts::default()
    })
    .await;
    exchange(&mut h, "q1").await;
    assert_shared(&h, "after a run");

    let file = h
        .ctl
        .session()
        .lock()
        .path()
        .map(|p| p.display().to_string())
        .expect("the session has a file");
    h.ctl.new_session(None).await.unwrap();
    h.ctl.switch_session(&file).await.unwrap();
    assert_eq!(h.user_texts(), ["q1"]);
    assert_shared(&h, "after resuming the file");

    exchange(&mut h, "q2").await;
    assert_shared(&h, "after a run on the resumed session");
    h.close().await;
}
