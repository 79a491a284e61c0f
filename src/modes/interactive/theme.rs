//! The interactive mode's two colour themes and `NO_COLOR`. Every renderer asks the theme for
//! a role's style ("a heading", "a removed diff line") instead of naming colours, so a light
//! terminal, a dark one and a colourless one differ only here. Colours are from the 16-colour
//! ANSI set so they follow the user's terminal palette.

use crossterm::style::Color;

use super::text::Style;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThemeName {
    Dark,
    Light,
}

impl ThemeName {
    pub fn parse(s: &str) -> Option<ThemeName> {
        match s {
            "dark" => Some(ThemeName::Dark),
            "light" => Some(ThemeName::Light),
            _ => None,
        }
    }
}

/// Styles by role. Fields are public so renderers read them directly.
#[derive(Debug, Clone)]
pub struct Theme {
    pub name: ThemeName,
    /// False under `NO_COLOR`: renderers that draw with colour alone (a diff) add a marker.
    pub color: bool,
    pub text: Style,
    pub accent: Style,
    pub muted: Style,
    pub error: Style,
    pub warning: Style,
    pub success: Style,
    pub border: Style,
    pub selected: Style,
    pub user_message: Style,
    pub thinking: Style,
    pub heading: Style,
    pub bold: Style,
    pub italic: Style,
    pub strike: Style,
    pub inline_code: Style,
    pub code_block: Style,
    pub code_border: Style,
    pub quote: Style,
    pub link: Style,
    pub list_marker: Style,
    pub rule: Style,
    pub table_border: Style,
    pub tool_title: Style,
    pub tool_output: Style,
    pub diff_added: Style,
    pub diff_removed: Style,
    pub diff_context: Style,
    pub footer: Style,
    /// The syntect theme for fenced code (one of syntect's default themes).
    pub syntax_theme: &'static str,
}

impl Theme {
    pub fn new(name: ThemeName, color: bool) -> Theme {
        let p = Style::plain();
        let (fg_strong, accent, code) = match name {
            ThemeName::Dark => (Color::White, Color::Cyan, Color::Yellow),
            ThemeName::Light => (Color::Black, Color::DarkBlue, Color::DarkMagenta),
        };
        let theme = Theme {
            name,
            color,
            text: p,
            accent: p.fg(accent),
            muted: p.dim(),
            error: p.fg(Color::Red),
            warning: p.fg(Color::Yellow),
            success: p.fg(Color::Green),
            border: p.fg(Color::DarkGrey),
            selected: p.fg(accent).bold(),
            user_message: p.fg(fg_strong).bold(),
            thinking: p.dim().italic(),
            heading: p.fg(accent).bold(),
            bold: p.bold(),
            italic: p.italic(),
            strike: p.strike(),
            inline_code: p.fg(code),
            code_block: p,
            code_border: p.fg(Color::DarkGrey),
            quote: p.italic().fg(Color::DarkGrey),
            link: p.fg(Color::Blue).underline(),
            list_marker: p.fg(accent),
            rule: p.fg(Color::DarkGrey),
            table_border: p.fg(Color::DarkGrey),
            tool_title: p.bold(),
            tool_output: p.dim(),
            diff_added: p.fg(Color::Green),
            diff_removed: p.fg(Color::Red),
            diff_context: p.dim(),
            footer: p.dim(),
            syntax_theme: match name {
                ThemeName::Dark => "base16-ocean.dark",
                ThemeName::Light => "InspiredGitHub",
            },
        };
        if color {
            theme
        } else {
            theme.colorless()
        }
    }

    /// The theme for this process: `NO_COLOR` (any non-empty value, per no-color.org) turns
    /// colours off; `theme` is the settings value, dark when absent or unknown.
    pub fn from_env(theme: Option<&str>) -> Theme {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let name = theme.and_then(ThemeName::parse).unwrap_or(ThemeName::Dark);
        Theme::new(name, !no_color)
    }

    fn colorless(mut self) -> Theme {
        self.color = false;
        for s in [
            &mut self.text,
            &mut self.accent,
            &mut self.muted,
            &mut self.error,
            &mut self.warning,
            &mut self.success,
            &mut self.border,
            &mut self.selected,
            &mut self.user_message,
            &mut self.thinking,
            &mut self.heading,
            &mut self.bold,
            &mut self.italic,
            &mut self.strike,
            &mut self.inline_code,
            &mut self.code_block,
            &mut self.code_border,
            &mut self.quote,
            &mut self.link,
            &mut self.list_marker,
            &mut self.rule,
            &mut self.table_border,
            &mut self.tool_title,
            &mut self.tool_output,
            &mut self.diff_added,
            &mut self.diff_removed,
            &mut self.diff_context,
            &mut self.footer,
        ] {
            *s = s.without_colors();
        }
        self
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
        assert!(!t.color);
    }
}
