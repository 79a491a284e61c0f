//! The colour tokens of pi's theme format, in the order 1.6's theme files and schema use:
//! each token's name, whether it colours text or a background, and the token an optional
//! one falls back to. The names are the file format, so they are exactly 1.6's.

/// What a token colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// Text (SGR 38).
    Fg,
    /// A background (SGR 48).
    Bg,
}

/// `(name, slot, fallback)`: a token with a fallback may be left out of a theme file.
pub const TOKENS: &[(&str, Slot, Option<&str>)] = &[
    ("accent", Slot::Fg, None),
    ("border", Slot::Fg, None),
    ("borderAccent", Slot::Fg, None),
    ("borderMuted", Slot::Fg, None),
    ("success", Slot::Fg, None),
    ("error", Slot::Fg, None),
    ("warning", Slot::Fg, None),
    ("muted", Slot::Fg, None),
    ("dim", Slot::Fg, None),
    ("text", Slot::Fg, None),
    ("thinkingText", Slot::Fg, None),
    ("scrollbarTrack", Slot::Fg, Some("muted")),
    ("scrollbarThumb", Slot::Fg, Some("text")),
    ("selectedBg", Slot::Bg, None),
    ("searchMatchBg", Slot::Bg, Some("selectedBg")),
    ("searchMatchText", Slot::Fg, Some("text")),
    ("userMessageBg", Slot::Bg, None),
    ("userMessageText", Slot::Fg, None),
    ("customMessageBg", Slot::Bg, None),
    ("customMessageText", Slot::Fg, None),
    ("customMessageLabel", Slot::Fg, None),
    ("toolPendingBg", Slot::Bg, None),
    ("toolSuccessBg", Slot::Bg, None),
    ("toolErrorBg", Slot::Bg, None),
    ("toolTitle", Slot::Fg, None),
    ("toolOutput", Slot::Fg, None),
    ("mdHeading", Slot::Fg, None),
    ("mdLink", Slot::Fg, None),
    ("mdLinkUrl", Slot::Fg, None),
    ("mdCode", Slot::Fg, None),
    ("mdCodeBlock", Slot::Fg, None),
    ("mdCodeBlockBorder", Slot::Fg, None),
    ("mdQuote", Slot::Fg, None),
    ("mdQuoteBorder", Slot::Fg, None),
    ("mdHr", Slot::Fg, None),
    ("mdListBullet", Slot::Fg, None),
    ("toolDiffAdded", Slot::Fg, None),
    ("toolDiffRemoved", Slot::Fg, None),
    ("toolDiffContext", Slot::Fg, None),
    ("syntaxComment", Slot::Fg, None),
    ("syntaxKeyword", Slot::Fg, None),
    ("syntaxFunction", Slot::Fg, None),
    ("syntaxVariable", Slot::Fg, None),
    ("syntaxString", Slot::Fg, None),
    ("syntaxNumber", Slot::Fg, None),
    ("syntaxType", Slot::Fg, None),
    ("syntaxOperator", Slot::Fg, None),
    ("syntaxPunctuation", Slot::Fg, None),
    ("thinkingOff", Slot::Fg, None),
    ("thinkingMinimal", Slot::Fg, None),
    ("thinkingLow", Slot::Fg, None),
    ("thinkingMedium", Slot::Fg, None),
    ("thinkingHigh", Slot::Fg, None),
    ("thinkingXhigh", Slot::Fg, None),
    ("thinkingMax", Slot::Fg, Some("thinkingXhigh")),
    ("bashMode", Slot::Fg, None),
];

/// The token's position in [`TOKENS`].
pub fn index(name: &str) -> Option<usize> {
    TOKENS.iter().position(|(n, _, _)| *n == name)
}

/// Whether a theme file must give `name` (it has no fallback).
pub fn required(name: &str) -> bool {
    TOKENS
        .iter()
        .any(|(n, _, fallback)| *n == name && fallback.is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fallbacks_name_tokens_of_the_same_slot() {
        for (name, slot, fallback) in TOKENS {
            if let Some(f) = fallback {
                let i = index(f).unwrap_or_else(|| panic!("{name} falls back to unknown {f}"));
                assert_eq!(TOKENS[i].1, *slot, "{name}");
                assert!(required(f), "{name} falls back to an optional token");
            }
        }
        assert_eq!(TOKENS.len(), 56);
    }
}
