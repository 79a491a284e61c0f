//! The built-in themes. `dark` and `light` are 1.6's own theme files, embedded and read like
//! any other (only when chosen, so start-up does not pay for the one not used). `system` is
//! 1.6's `system` theme as it is for a terminal that reports none of its colours: ANSI
//! palette indices and the terminal's default colours, secondary text faint, no panel
//! backgrounds — it takes its look from the terminal's own palette. pi asks the terminal
//! for its colours as 1.6 does (`modes::interactive::terminal_colors`), but their answer only
//! decides light or dark here; 1.6's colours generated from the reported palette are not.

use std::sync::{Arc, OnceLock};

use super::color::Color;
use super::file::{self, ThemeSpec};

pub const SYSTEM: &str = "system";
pub const DARK_JSON: &str = include_str!("builtin/dark.json");
pub const LIGHT_JSON: &str = include_str!("builtin/light.json");

/// The built-in names, in the order `/settings` lists them.
pub const NAMES: [&str; 3] = [SYSTEM, "dark", "light"];

const SYSTEM_COLORS: &[(&str, Color)] = &[
    ("accent", Color::Indexed(5)),
    ("borderAccent", Color::Indexed(5)),
    ("customMessageLabel", Color::Indexed(5)),
    ("mdCode", Color::Indexed(5)),
    ("mdListBullet", Color::Indexed(5)),
    ("syntaxType", Color::Indexed(5)),
    ("border", Color::Indexed(4)),
    ("mdLink", Color::Indexed(4)),
    ("syntaxKeyword", Color::Indexed(4)),
    ("syntaxVariable", Color::Indexed(6)),
    ("success", Color::Indexed(2)),
    ("mdCodeBlock", Color::Indexed(2)),
    ("toolDiffAdded", Color::Indexed(2)),
    ("bashMode", Color::Indexed(2)),
    ("syntaxNumber", Color::Indexed(5)),
    ("error", Color::Indexed(1)),
    ("toolDiffRemoved", Color::Indexed(1)),
    ("warning", Color::Indexed(3)),
    ("mdHeading", Color::Indexed(3)),
    ("syntaxFunction", Color::Indexed(3)),
    ("syntaxString", Color::Indexed(2)),
    ("thinkingMinimal", Color::Indexed(4)),
    ("thinkingLow", Color::Indexed(4)),
    ("thinkingMedium", Color::Indexed(6)),
    ("thinkingHigh", Color::Indexed(5)),
    ("thinkingXhigh", Color::Indexed(13)),
    ("thinkingMax", Color::Indexed(1)),
];

const SYSTEM_DIM: &[&str] = &[
    "customMessageText",
    "syntaxOperator",
    "syntaxPunctuation",
    "muted",
    "dim",
    "thinkingText",
    "toolOutput",
    "mdLinkUrl",
    "mdQuote",
    "mdQuoteBorder",
    "mdHr",
    "mdCodeBlockBorder",
    "toolDiffContext",
    "syntaxComment",
    "scrollbarTrack",
    "scrollbarThumb",
    "searchMatchText",
    "borderMuted",
    "thinkingOff",
];

fn cached(cell: &'static OnceLock<Arc<ThemeSpec>>, make: fn() -> ThemeSpec) -> Arc<ThemeSpec> {
    cell.get_or_init(|| Arc::new(make())).clone()
}

/// The built-in theme called `name`, if there is one.
pub fn get(name: &str) -> Option<Arc<ThemeSpec>> {
    static SYS: OnceLock<Arc<ThemeSpec>> = OnceLock::new();
    static DARK: OnceLock<Arc<ThemeSpec>> = OnceLock::new();
    static LIGHT: OnceLock<Arc<ThemeSpec>> = OnceLock::new();
    match name {
        SYSTEM => Some(cached(&SYS, || {
            ThemeSpec::from_table(SYSTEM, SYSTEM_COLORS, SYSTEM_DIM)
        })),
        "dark" => Some(cached(&DARK, || embedded(DARK_JSON, "dark"))),
        "light" => Some(cached(&LIGHT, || embedded(LIGHT_JSON, "light"))),
        _ => None,
    }
}

/// An embedded theme file; a unit test proves both parse, so the fallback (the `system`
/// colours under the file's name) is never seen.
fn embedded(text: &str, name: &str) -> ThemeSpec {
    file::parse(text, name)
        .unwrap_or_else(|_| ThemeSpec::from_table(name, SYSTEM_COLORS, SYSTEM_DIM))
}

#[cfg(test)]
mod tests {
    use super::super::tokens::TOKENS;
    use super::*;
    use serde_json::Value;

    #[test]
    fn dark_and_light_have_pi_1_6s_colours_token_for_token() {
        let reference: Value =
            serde_json::from_str(include_str!("builtin/reference-1.6.json")).unwrap();
        for json in [DARK_JSON, LIGHT_JSON] {
            let spec = file::parse(json, "builtin").unwrap();
            let want = &reference[&spec.name];
            for (token, _, _) in TOKENS {
                let Color::Rgb(r, g, b) = spec.color(token) else {
                    panic!("{} {token} is not RGB", spec.name);
                };
                let got = format!("#{r:02x}{g:02x}{b:02x}");
                assert_eq!(
                    Some(got.as_str()),
                    want[token].as_str(),
                    "{} {token}",
                    spec.name
                );
            }
        }
    }

    #[test]
    fn system_is_the_terminals_palette() {
        let s = get(SYSTEM).unwrap();
        assert_eq!(s.color("accent"), Color::Indexed(5));
        assert_eq!(s.color("text"), Color::Default);
        assert_eq!(s.color("userMessageBg"), Color::Default);
        assert!(s.is_dim("muted") && !s.is_dim("text"));
    }
}
