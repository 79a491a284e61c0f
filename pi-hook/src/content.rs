//! Content blocks as the protocol carries them in the objects a hook writes: a hook's injected
//! messages (`string` or text/image blocks) and its tool output. They keep pi's shape
//! (`{"type":"text","text":…}`, `{"type":"image","data":…,"mimeType":…}`), so they convert to
//! the host's own message types without loss.

use serde::{Deserialize, Serialize};

/// One text or image block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ContentBlock {
    Text {
        text: String,
    },
    Image {
        /// Base64 of the image bytes.
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

impl ContentBlock {
    pub fn text(s: impl Into<String>) -> Self {
        ContentBlock::Text { text: s.into() }
    }
}

/// A message's content: a plain string or a list of blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UserContent {
    Text(String),
    Blocks(Vec<ContentBlock>),
}

impl From<&str> for UserContent {
    fn from(s: &str) -> Self {
        UserContent::Text(s.to_string())
    }
}

impl From<String> for UserContent {
    fn from(s: String) -> Self {
        UserContent::Text(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_keep_pis_shape() {
        let c: UserContent = serde_json::from_str(
            r#"[{"type":"text","text":"hi"},{"type":"image","data":"AAA=","mimeType":"image/png"}]"#,
        )
        .unwrap();
        let UserContent::Blocks(b) = &c else { panic!() };
        assert_eq!(b[0], ContentBlock::text("hi"));
        let back = serde_json::to_value(&c).unwrap();
        assert_eq!(back[1]["mimeType"], "image/png");
        assert!(serde_json::from_str::<UserContent>(r#"[{"type":"thinking"}]"#).is_err());
    }
}
