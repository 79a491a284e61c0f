//! Helpers the session store's unit tests share: a finished assistant message to record, and a
//! file's lines to compare with what was written.

use std::path::Path;

use crate::message::{AssistantMessage, Content, Message};

pub(crate) fn assistant(text: &str) -> Message {
    let mut a = AssistantMessage::empty("faux", "faux", "m1");
    a.content.push(Content::text(text));
    Message::Assistant(a)
}

pub(crate) fn lines(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}
