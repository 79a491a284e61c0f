//! The theme in use, carried into the HTML export as pi 1.6 carries it: the page, card and
//! info backgrounds are the theme's `export` colours, or derived from its `userMessageBg` by
//! 1.6's rule (`deriveExportColors`: darker shades of it on a dark theme, a lighter page on a
//! light one); the page's other colours are the theme's own tokens. The built-in `system`
//! theme is the terminal's palette, which a page cannot know, so its export keeps the page's
//! own light and dark looks (as 1.6's export of `system` uses no colours of its own).
//!
//! The result is one extra `:root` rule after the page's style, pinned to the theme's
//! appearance (`color-scheme`), so the browser's light or dark preference cannot mix a dark
//! theme with the page's light defaults: every variable the page uses is set.

use std::fmt::Write as _;

use crate::resources::themes::{Appearance, Color, ThemeSpec, SYSTEM};

type Rgb = (u8, u8, u8);

/// 1.6's fallback when a theme leaves `userMessageBg` to the terminal.
const USER_BG_FALLBACK: Rgb = (0x34, 0x35, 0x41);

/// 1.6's guess at a terminal's own colours, for tokens a theme leaves to the terminal.
fn guessed(appearance: Appearance) -> (Rgb, Rgb) {
    match appearance {
        Appearance::Dark => ((0xe5, 0xe5, 0xe7), (0, 0, 0)),
        Appearance::Light => ((0, 0, 0), (0xff, 0xff, 0xff)),
    }
}

fn luminance((r, g, b): Rgb) -> f64 {
    let lin = |c: u8| {
        let s = f64::from(c) / 255.0;
        if s <= 0.03928 {
            s / 12.92
        } else {
            ((s + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
}

fn scaled((r, g, b): Rgb, factor: f64) -> Rgb {
    let s = |c: u8| (f64::from(c) * factor).round().clamp(0.0, 255.0) as u8;
    (s(r), s(g), s(b))
}

/// 1.6's `deriveExportColors`: page, card and info backgrounds from the user message's.
fn derived(base: Rgb) -> [Rgb; 3] {
    let (r, g, b) = base;
    if luminance(base) > 0.5 {
        [
            scaled(base, 0.96),
            base,
            (
                r.saturating_add(10),
                g.saturating_add(5),
                b.saturating_sub(20),
            ),
        ]
    } else {
        [
            scaled(base, 0.7),
            scaled(base, 0.85),
            (r.saturating_add(20), g.saturating_add(15), b),
        ]
    }
}

fn hex((r, g, b): Rgb) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// The rule that dresses the page in `spec`, or none for `system`.
pub(crate) fn css(spec: &ThemeSpec) -> Option<String> {
    if spec.name == SYSTEM {
        return None;
    }
    let user_bg = spec
        .color("userMessageBg")
        .rgb()
        .unwrap_or(USER_BG_FALLBACK);
    let appearance = spec.appearance.unwrap_or(if luminance(user_bg) > 0.5 {
        Appearance::Light
    } else {
        Appearance::Dark
    });
    let (fg, _) = guessed(appearance);
    let [page, card, info] = derived(user_bg);
    let own = |c: Option<Color>, or: Rgb| c.and_then(Color::rgb).unwrap_or(or);
    let token = |name: &str, or: Rgb| spec.color(name).rgb().unwrap_or(or);
    let text = token("text", fg);
    let page = own(spec.export.page_bg, page);
    let card = own(spec.export.card_bg, card);
    let vars = [
        ("bg", page),
        ("card", card),
        ("notice", own(spec.export.info_bg, info)),
        ("fg", text),
        ("muted", token("muted", text)),
        ("border", token("border", text)),
        ("accent", token("accent", text)),
        ("user", user_bg),
        ("thinking", token("customMessageBg", card)),
        ("code", token("selectedBg", page)),
        ("ok", token("success", text)),
        ("error", token("error", text)),
        ("warn", token("warning", text)),
        ("added", token("toolSuccessBg", card)),
        ("removed", token("toolErrorBg", card)),
    ];
    let scheme = match appearance {
        Appearance::Dark => "dark",
        Appearance::Light => "light",
    };
    let mut out = format!("\n:root:root {{\n  color-scheme: {scheme};");
    for (name, rgb) in vars {
        let _ = write!(out, " --{name}: {};", hex(rgb));
    }
    out.push_str("\n}\n");
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::themes::builtin_spec;

    #[test]
    fn dark_uses_its_export_colours_and_tokens_and_pins_the_dark_scheme() {
        let css = css(&builtin_spec("dark")).unwrap();
        let spec = builtin_spec("dark");
        let page = hex(spec.export.page_bg.and_then(Color::rgb).unwrap());
        assert!(css.contains("color-scheme: dark;"), "{css}");
        assert!(css.contains(&format!("--bg: {page};")), "{css}");
        let accent = hex(spec.color("accent").rgb().unwrap());
        assert!(css.contains(&format!("--accent: {accent};")), "{css}");
    }

    #[test]
    fn without_export_colours_they_are_derived_from_the_user_message_as_1_6_does() {
        // 1.6: a dark base is shaded to 70 % and 85 %; a light one keeps the card and
        // lightens the page to 96 %.
        assert_eq!(
            derived((100, 120, 140)),
            [(70, 84, 98), (85, 102, 119), (120, 135, 140)]
        );
        assert_eq!(
            derived((240, 240, 250)),
            [(230, 230, 240), (240, 240, 250), (250, 245, 230)]
        );
    }

    #[test]
    fn system_keeps_the_pages_own_looks() {
        assert_eq!(css(&builtin_spec(SYSTEM)), None);
    }

    #[test]
    fn palette_indices_are_xtermss_colours() {
        assert_eq!(Color::Indexed(196).rgb(), Some((255, 0, 0)));
        assert_eq!(Color::Indexed(244).rgb(), Some((128, 128, 128)));
        assert_eq!(Color::Indexed(1).rgb(), Some((205, 0, 0)));
        assert_eq!(Color::Default.rgb(), None);
    }
}
