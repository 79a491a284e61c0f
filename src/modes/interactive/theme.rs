//! The interactive mode's styles by role. Every renderer asks the theme for a role's style
//! ("a heading", "a removed diff line", "a finished tool's background") instead of naming
//! colours; the roles are filled from a pi theme (`resources::themes`: 1.6's JSON format, the
//! built-in `system`, `dark` and `light`), so a theme file recolours everything pi draws.
//! `NO_COLOR` keeps the emphasis (bold, italic, faint) and drops every colour.
//!
//! How 1.6's tokens map onto what we draw: text roles take the token of the same meaning
//! (`mdHeading` for headings, `toolDiffAdded` for added lines…); user messages and tool blocks
//! are panels on `userMessageBg` and `toolPendingBg`/`toolSuccessBg`/`toolErrorBg`; the
//! editor's border is the thinking level's colour (`thinkingOff`…`thinkingMax`), `bashMode`
//! for a `!` command; the footer is `dim`; code is highlighted with the `syntax*` tokens.

use std::str::FromStr;
use std::sync::Arc;

use crossterm::style::Color;
use syntect::highlighting::{
    Color as SynColor, FontStyle, ScopeSelectors, StyleModifier, Theme as SyntectTheme, ThemeItem,
    ThemeSettings,
};

use super::text::Style;
use crate::provider::ThinkingLevel;
use crate::resources::themes::{self, Catalog, ThemeSpec};

/// The built-in themes by name (tests and callers without a catalog).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThemeName {
    System,
    Dark,
    Light,
}

impl ThemeName {
    pub fn as_str(self) -> &'static str {
        match self {
            ThemeName::System => themes::SYSTEM,
            ThemeName::Dark => "dark",
            ThemeName::Light => "light",
        }
    }
}

/// Styles by role. Fields are public so renderers read them directly.
#[derive(Debug, Clone)]
pub struct Theme {
    pub name: String,
    /// False under `NO_COLOR`: renderers that draw with colour alone (a diff) add a marker.
    pub color: bool,
    pub text: Style,
    pub accent: Style,
    pub muted: Style,
    pub dim: Style,
    pub error: Style,
    pub warning: Style,
    pub success: Style,
    pub border: Style,
    pub border_accent: Style,
    pub border_muted: Style,
    pub selected: Style,
    /// A user message: its text on its panel (`userMessageBg`).
    pub user_message: Style,
    /// A hook's message: its text, its `[type]` label, on its panel.
    pub custom_message: Style,
    pub custom_label: Style,
    pub thinking: Style,
    pub heading: Style,
    pub bold: Style,
    pub italic: Style,
    pub strike: Style,
    pub inline_code: Style,
    pub code_block: Style,
    pub code_border: Style,
    pub quote: Style,
    pub quote_border: Style,
    pub link: Style,
    pub link_url: Style,
    pub list_marker: Style,
    pub rule: Style,
    pub table_border: Style,
    pub tool_title: Style,
    pub tool_output: Style,
    /// A tool block's panel while it runs, after it succeeded, after it failed.
    pub tool_pending: Style,
    pub tool_success: Style,
    pub tool_error: Style,
    pub diff_added: Style,
    pub diff_removed: Style,
    pub diff_context: Style,
    pub footer: Style,
    /// The editor's border now (see [`Theme::editor_border_for`]).
    pub editor_border: Style,
    /// The editor's border per thinking level, `off` to `max`.
    pub thinking_levels: [Style; 7],
    pub bash_mode: Style,
    /// Code highlighting with the theme's `syntax*` tokens.
    pub syntax: Arc<SyntectTheme>,
}

/// A token's colour as the terminal is told it (`None`: its default).
fn color_of(c: themes::Color) -> Option<Color> {
    match c {
        themes::Color::Default => None,
        themes::Color::Indexed(i) => Some(Color::AnsiValue(i)),
        themes::Color::Rgb(r, g, b) => Some(Color::Rgb { r, g, b }),
    }
}

impl Theme {
    /// A built-in theme.
    pub fn new(name: ThemeName, color: bool) -> Theme {
        Theme::from_spec(&themes::builtin_spec(name.as_str()), color)
    }

    /// The styles of `spec`; without `color`, only emphasis: the faint secondary text of
    /// the `system` theme, since colour no longer sets it apart.
    pub fn from_spec(spec: &ThemeSpec, color: bool) -> Theme {
        let system = themes::builtin_spec(themes::SYSTEM);
        let emphasis: &ThemeSpec = if color { spec } else { &system };
        let fg = |token: &str| {
            let mut s = Style::plain();
            s.fg = color_of(spec.color(token));
            s.dim = emphasis.is_dim(token);
            s
        };
        let bg = |token: &str| {
            let mut s = Style::plain();
            s.bg = color_of(spec.color(token));
            s
        };
        let on = |text: Style, panel: Style| Style {
            bg: panel.bg,
            ..text
        };
        let levels = [
            "thinkingOff",
            "thinkingMinimal",
            "thinkingLow",
            "thinkingMedium",
            "thinkingHigh",
            "thinkingXhigh",
            "thinkingMax",
        ]
        .map(fg);
        let theme = Theme {
            name: spec.name.clone(),
            color,
            text: fg("text"),
            accent: fg("accent"),
            muted: fg("muted"),
            dim: fg("dim"),
            error: fg("error"),
            warning: fg("warning"),
            success: fg("success"),
            border: fg("border"),
            border_accent: fg("borderAccent"),
            border_muted: fg("borderMuted"),
            selected: fg("accent").bold(),
            user_message: on(fg("userMessageText").bold(), bg("userMessageBg")),
            custom_message: on(fg("customMessageText"), bg("customMessageBg")),
            custom_label: on(fg("customMessageLabel"), bg("customMessageBg")),
            thinking: fg("thinkingText").italic(),
            heading: fg("mdHeading").bold(),
            bold: Style::plain().bold(),
            italic: Style::plain().italic(),
            strike: Style::plain().strike(),
            inline_code: fg("mdCode"),
            code_block: fg("mdCodeBlock"),
            code_border: fg("mdCodeBlockBorder"),
            quote: fg("mdQuote").italic(),
            quote_border: fg("mdQuoteBorder"),
            link: fg("mdLink").underline(),
            link_url: fg("mdLinkUrl"),
            list_marker: fg("mdListBullet"),
            rule: fg("mdHr"),
            table_border: fg("mdHr"),
            tool_title: fg("toolTitle").bold(),
            tool_output: fg("toolOutput"),
            tool_pending: bg("toolPendingBg"),
            tool_success: bg("toolSuccessBg"),
            tool_error: bg("toolErrorBg"),
            diff_added: fg("toolDiffAdded"),
            diff_removed: fg("toolDiffRemoved"),
            diff_context: fg("toolDiffContext"),
            footer: fg("dim"),
            editor_border: levels[0],
            thinking_levels: levels,
            bash_mode: fg("bashMode"),
            syntax: Arc::new(syntax_theme(spec)),
        };
        if color {
            theme
        } else {
            theme.colorless()
        }
    }

    /// The theme `setting` names, from `catalog`, and what went wrong when it could not be
    /// used (the built-in `system` theme is used then). `NO_COLOR` (any non-empty value, per
    /// no-color.org) turns colours off.
    pub fn select(catalog: &Catalog, setting: Option<&str>) -> (Theme, Option<String>) {
        let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        let Some(setting) = setting else {
            return (Theme::system(catalog, color), None);
        };
        let appearance = themes::current_appearance();
        let Some(name) = themes::resolve_setting(setting, appearance) else {
            let why = format!(
                "theme setting {setting:?} is neither a theme's name nor \"light/dark\"; using system"
            );
            return (Theme::system(catalog, color), Some(why));
        };
        match catalog.select(name) {
            Ok(entry) => (Theme::from_spec(&entry.spec(), color), None),
            Err(why) => (
                Theme::system(catalog, color),
                Some(format!("{why}; using system")),
            ),
        }
    }

    fn system(catalog: &Catalog, color: bool) -> Theme {
        match catalog.get(themes::SYSTEM) {
            Some(e) => Theme::from_spec(&e.spec(), color),
            None => Theme::new(ThemeName::System, color),
        }
    }

    /// The theme for this process from the built-ins and the user's themes, for what is shown
    /// before the catalog is complete (the project-trust question).
    pub fn from_env(setting: Option<&str>, agent_dir: &std::path::Path) -> Theme {
        let sources = themes::Sources {
            agent_dir: agent_dir.to_path_buf(),
            ..themes::Sources::default()
        };
        Theme::select(&Catalog::load(&sources), setting).0
    }

    /// The editor border's style for the thinking level (`None`: the model does not reason)
    /// and whether the editor holds a `!` command.
    pub fn editor_border_for(&self, level: Option<ThinkingLevel>, bash: bool) -> Style {
        if bash {
            return self.bash_mode;
        }
        let i = match level {
            None | Some(ThinkingLevel::Off) => 0,
            Some(ThinkingLevel::Minimal) => 1,
            Some(ThinkingLevel::Low) => 2,
            Some(ThinkingLevel::Medium) => 3,
            Some(ThinkingLevel::High) => 4,
            Some(ThinkingLevel::Xhigh) => 5,
            Some(ThinkingLevel::Max) => 6,
        };
        self.thinking_levels[i]
    }

    fn colorless(mut self) -> Theme {
        self.color = false;
        for s in [
            &mut self.text,
            &mut self.accent,
            &mut self.muted,
            &mut self.dim,
            &mut self.error,
            &mut self.warning,
            &mut self.success,
            &mut self.border,
            &mut self.border_accent,
            &mut self.border_muted,
            &mut self.selected,
            &mut self.user_message,
            &mut self.custom_message,
            &mut self.custom_label,
            &mut self.thinking,
            &mut self.heading,
            &mut self.bold,
            &mut self.italic,
            &mut self.strike,
            &mut self.inline_code,
            &mut self.code_block,
            &mut self.code_border,
            &mut self.quote,
            &mut self.quote_border,
            &mut self.link,
            &mut self.link_url,
            &mut self.list_marker,
            &mut self.rule,
            &mut self.table_border,
            &mut self.tool_title,
            &mut self.tool_output,
            &mut self.tool_pending,
            &mut self.tool_success,
            &mut self.tool_error,
            &mut self.diff_added,
            &mut self.diff_removed,
            &mut self.diff_context,
            &mut self.footer,
            &mut self.editor_border,
            &mut self.bash_mode,
        ] {
            *s = s.without_colors();
        }
        for s in &mut self.thinking_levels {
            *s = s.without_colors();
        }
        self
    }
}

/// A token's colour in syntect's type. bat's convention, which the highlighter reads back:
/// alpha 0 is "palette index `r`"; alpha 1 here is "the terminal's default".
fn syn_color(c: themes::Color) -> SynColor {
    match c {
        themes::Color::Default => SynColor {
            r: 0,
            g: 0,
            b: 0,
            a: 1,
        },
        themes::Color::Indexed(i) => SynColor {
            r: i,
            g: 0,
            b: 0,
            a: 0,
        },
        themes::Color::Rgb(r, g, b) => SynColor { r, g, b, a: 255 },
    }
}

/// TextMate scopes by the token that colours them, as 1.6 maps highlight.js's classes
/// (keywords, built-in types, literals, strings, comments, functions, types, variables,
/// operators, punctuation, tags and attributes, diff lines).
const SCOPES: &[(&str, &str)] = &[
    ("comment, punctuation.definition.comment", "syntaxComment"),
    ("keyword, storage.type, storage.modifier", "syntaxKeyword"),
    ("keyword.operator", "syntaxOperator"),
    (
        "entity.name.function, support.function, meta.function-call variable.function",
        "syntaxFunction",
    ),
    ("variable, variable.parameter, entity.other.attribute-name", "syntaxVariable"),
    ("string, constant.character, string.regexp", "syntaxString"),
    ("constant.numeric, constant.language", "syntaxNumber"),
    (
        "entity.name.type, entity.name.class, support.type, support.class, entity.name.struct, entity.name.enum",
        "syntaxType",
    ),
    ("punctuation, entity.name.tag", "syntaxPunctuation"),
    ("markup.inserted", "toolDiffAdded"),
    ("markup.deleted", "toolDiffRemoved"),
];

fn syntax_theme(spec: &ThemeSpec) -> SyntectTheme {
    let mut scopes: Vec<ThemeItem> = SCOPES
        .iter()
        .filter_map(|(selector, token)| {
            Some(ThemeItem {
                scope: ScopeSelectors::from_str(selector).ok()?,
                style: StyleModifier {
                    foreground: Some(syn_color(spec.color(token))),
                    background: None,
                    font_style: None,
                },
            })
        })
        .collect();
    for (selector, font) in [
        ("markup.bold", FontStyle::BOLD),
        ("markup.italic", FontStyle::ITALIC),
        ("markup.underline", FontStyle::UNDERLINE),
    ] {
        if let Ok(scope) = ScopeSelectors::from_str(selector) {
            scopes.push(ThemeItem {
                scope,
                style: StyleModifier {
                    foreground: None,
                    background: None,
                    font_style: Some(font),
                },
            });
        }
    }
    SyntectTheme {
        name: Some(spec.name.clone()),
        author: None,
        settings: ThemeSettings {
            foreground: Some(syn_color(spec.color("text"))),
            ..ThemeSettings::default()
        },
        scopes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colorless_theme_has_no_colour_anywhere_but_keeps_emphasis() {
        let t = Theme::new(ThemeName::Dark, false);
        assert!(t.heading.fg.is_none() && t.heading.bold);
        assert!(t.diff_added.fg.is_none());
        assert!(t.tool_success.bg.is_none());
        assert!(!t.color);
    }

    #[test]
    fn dark_draws_with_its_tokens_and_system_with_the_terminals_palette() {
        let dark = Theme::new(ThemeName::Dark, true);
        // pi 1.6's dark: mdHeading #cd9a22 (yellow), userMessageBg #213b49.
        assert_eq!(
            dark.heading.fg,
            Some(Color::Rgb {
                r: 0xcd,
                g: 0x9a,
                b: 0x22
            })
        );
        assert_eq!(
            dark.user_message.bg,
            Some(Color::Rgb {
                r: 0x21,
                g: 0x3b,
                b: 0x49
            })
        );
        let system = Theme::new(ThemeName::System, true);
        assert_eq!(system.accent.fg, Some(Color::AnsiValue(5)));
        assert!(system.muted.fg.is_none() && system.muted.dim);
        assert!(system.tool_success.bg.is_none());
        assert_eq!(
            system
                .editor_border_for(Some(ThinkingLevel::Xhigh), false)
                .fg,
            Some(Color::AnsiValue(13))
        );
        assert_eq!(
            system.editor_border_for(None, true).fg,
            Some(Color::AnsiValue(2))
        );
    }

    #[test]
    fn an_unknown_setting_falls_back_to_system_saying_what_exists() {
        let (t, why) = Theme::select(&Catalog::builtin(), Some("nosuch"));
        assert_eq!(t.name, "system");
        assert_eq!(
            why.as_deref(),
            Some("theme \"nosuch\" not found; available: system, dark, light; using system")
        );
        let (t, why) = Theme::select(&Catalog::builtin(), Some("light"));
        assert_eq!((t.name.as_str(), why), ("light", None));
    }
}
