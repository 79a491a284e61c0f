//! Colour values as pi's theme files write them — `"#0af"` / `"#00aaff"`, `oklch(62% 0.1 200)`,
//! `okhsl(250 60% 55%)`, a 256-colour index, `""` for the terminal's default — turned into what
//! a terminal can show: its default, a palette index, or sRGB. OKLCH and OKHSL are converted as
//! TypeScript pi 1.6 converts them (Björn Ottosson's spaces through `palette`; OKLCH out of the
//! sRGB gamut keeps its hue and loses chroma until it fits), so a theme looks the same in both.

use palette::{IntoColor, LinSrgb, Okhsl, Srgb};

/// A resolved colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Color {
    /// The terminal's own foreground or background (`""`).
    Default,
    /// A 256-colour palette index; 0–15 follow the terminal's palette.
    Indexed(u8),
    Rgb(u8, u8, u8),
}

impl Color {
    /// The sRGB a page can show: palette indices as xterm's default palette has them (0–15
    /// are the user's terminal's, which a page cannot know); none for the terminal's default.
    pub fn rgb(self) -> Option<(u8, u8, u8)> {
        const BASE: [(u8, u8, u8); 16] = [
            (0, 0, 0),
            (205, 0, 0),
            (0, 205, 0),
            (205, 205, 0),
            (0, 0, 238),
            (205, 0, 205),
            (0, 205, 205),
            (229, 229, 229),
            (127, 127, 127),
            (255, 0, 0),
            (0, 255, 0),
            (255, 255, 0),
            (92, 92, 255),
            (255, 0, 255),
            (0, 255, 255),
            (255, 255, 255),
        ];
        let level = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
        match self {
            Color::Default => None,
            Color::Rgb(r, g, b) => Some((r, g, b)),
            Color::Indexed(i) if i < 16 => Some(BASE[i as usize]),
            Color::Indexed(i) if i < 232 => {
                let i = i - 16;
                Some((level(i / 36), level(i / 6 % 6), level(i % 6)))
            }
            Color::Indexed(i) => {
                let v = 8 + 10 * (i - 232);
                Some((v, v, v))
            }
        }
    }
}

/// A colour string that is none of the forms.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0:?} is not a colour (#RGB or #RRGGBB, oklch(L C H), okhsl(H S L), 0-255, the name of a \
     var, or \"\" for the terminal's default)"
)]
pub struct BadColor(pub String);

/// Whether a string value is a colour itself rather than the name of a var (1.6's rule: the
/// empty string, `#…`, `oklch(…)` and `okhsl(…)` are colours; anything else names a var).
pub fn is_literal(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    s.is_empty() || s.starts_with('#') || lower.starts_with("oklch(") || lower.starts_with("okhsl(")
}

/// Parses a literal colour string (see [`is_literal`]).
pub fn parse(s: &str) -> Result<Color, BadColor> {
    let bad = || BadColor(s.to_string());
    if s.is_empty() {
        return Ok(Color::Default);
    }
    if let Some(hex) = s.strip_prefix('#') {
        return parse_hex(hex).ok_or_else(bad);
    }
    let lower = s.to_ascii_lowercase();
    if let Some(args) = function_args(&lower, "oklch") {
        let [l, c, h] = args.as_slice() else {
            return Err(bad());
        };
        let l = number_or_percent(l).ok_or_else(bad)?;
        let c = number(c).ok_or_else(bad)?;
        let h = number(h.strip_suffix("deg").unwrap_or(h)).ok_or_else(bad)?;
        if !(0.0..=1.0).contains(&l) || c < 0.0 {
            return Err(bad());
        }
        return Ok(oklch(l, c, h));
    }
    if let Some(args) = function_args(&lower, "okhsl") {
        let [h, sat, l] = args.as_slice() else {
            return Err(bad());
        };
        let h = number(h.strip_suffix("deg").unwrap_or(h)).ok_or_else(bad)?;
        let sat = number_or_percent(sat).ok_or_else(bad)?;
        let l = number_or_percent(l).ok_or_else(bad)?;
        if !(0.0..=1.0).contains(&sat) || !(0.0..=1.0).contains(&l) {
            return Err(bad());
        }
        return Ok(okhsl(h, sat, l));
    }
    Err(bad())
}

fn parse_hex(hex: &str) -> Option<Color> {
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let digit = |i: usize| u8::from_str_radix(&hex[i..i + 1], 16).ok();
    let pair = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
    match hex.len() {
        3 => Some(Color::Rgb(digit(0)? * 17, digit(1)? * 17, digit(2)? * 17)),
        6 => Some(Color::Rgb(pair(0)?, pair(2)?, pair(4)?)),
        _ => None,
    }
}

/// `name( a b c )` → the whitespace-separated arguments.
fn function_args<'a>(s: &'a str, name: &str) -> Option<Vec<&'a str>> {
    let inner = s.strip_prefix(name)?.trim_start().strip_prefix('(')?;
    let inner = inner.strip_suffix(')')?;
    Some(inner.split_whitespace().collect())
}

fn number(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|n| n.is_finite())
}

/// `55%` → 0.55, `0.55` → 0.55.
fn number_or_percent(s: &str) -> Option<f64> {
    match s.strip_suffix('%') {
        Some(p) => number(p).map(|n| n / 100.0),
        None => number(s),
    }
}

/// A linear-sRGB colour as 8-bit sRGB, each channel clipped into range.
fn to_rgb(linear: LinSrgb<f64>) -> Color {
    let encoded: Srgb<f64> = Srgb::from_linear(linear);
    let channel = |v: f64| (v.clamp(0.0, 1.0) * 255.0).round() as u8;
    Color::Rgb(
        channel(encoded.red),
        channel(encoded.green),
        channel(encoded.blue),
    )
}

fn okhsl(h: f64, s: f64, l: f64) -> Color {
    let linear: LinSrgb<f64> = Okhsl::new(h, s, l).into_color();
    to_rgb(linear)
}

/// Oklab to linear sRGB, unclipped (Ottosson's matrices), so the gamut test below can see
/// how far outside a colour is.
fn oklab_to_linear(l: f64, a: f64, b: f64) -> LinSrgb<f64> {
    let l_ = (l + 0.396_337_777_376_174_9 * a + 0.215_803_757_309_913_6 * b).powi(3);
    let m_ = (l - 0.105_561_345_815_658_6 * a - 0.063_854_172_825_813_3 * b).powi(3);
    let s_ = (l - 0.089_484_177_529_811_9 * a - 1.291_485_548_019_409_2 * b).powi(3);
    LinSrgb::new(
        4.076_741_636_075_958 * l_ - 3.307_711_539_258_063 * m_ + 0.230_969_903_182_104_3 * s_,
        -1.268_437_973_285_031_5 * l_ + 2.609_757_349_287_688 * m_ - 0.341_319_376_002_657 * s_,
        -0.004_196_076_138_675_6 * l_ - 0.703_418_617_935_936_2 * m_ + 1.707_614_694_074_611_7 * s_,
    )
}

/// OKLCH, gamut-mapped: the hue and lightness stay and the chroma shrinks (bisection) until
/// the colour is inside sRGB; the grey of that lightness when no chroma fits.
fn oklch(l: f64, c: f64, h: f64) -> Color {
    let (sin, cos) = h.to_radians().sin_cos();
    let at = |chroma: f64| oklab_to_linear(l, chroma * cos, chroma * sin);
    let inside = |x: &LinSrgb<f64>| {
        [x.red, x.green, x.blue]
            .iter()
            .all(|v| (-1e-7..=1.0 + 1e-7).contains(v))
    };
    let direct = at(c);
    if inside(&direct) {
        return to_rgb(direct);
    }
    let (mut low, mut high) = (0.0, c);
    let mut best = at(0.0);
    for _ in 0..20 {
        let mid = (low + high) / 2.0;
        let candidate = at(mid);
        if inside(&candidate) {
            low = mid;
            best = candidate;
        } else {
            high = mid;
        }
    }
    to_rgb(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(c: Color) -> String {
        match c {
            Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn the_forms_parse_as_pi_1_6_converts_them() {
        // Expected values from pi 1.6's own converter (`parseColor` + `colorToHex`).
        let cases = [
            ("#0af", "#00aaff"),
            ("#00AAFF", "#00aaff"),
            ("okhsl(234 3% 89%)", "#dee0e1"),
            ("okhsl(20 99% 63%)", "#fe5462"),
            ("okhsl(83deg 0.99 0.47)", "#8f6802"),
            ("oklch(62% 0.1 200)", "#1c989e"),
            ("oklch(100% 0.3 150)", "#ffffff"),
            ("OKLCH(0.5 0.4 30)", "#bb0c00"),
        ];
        for (text, want) in cases {
            assert_eq!(hex(parse(text).unwrap()), want, "{text}");
        }
        assert_eq!(parse(""), Ok(Color::Default));
    }

    #[test]
    fn bad_values_are_refused_with_the_value() {
        for text in [
            "#12",
            "#ggg",
            "okhsl(1 2)",
            "okhsl(20 120% 50%)",
            "oklch(x 1 2)",
            "rgb(1,2,3)",
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.to_string().contains(text), "{e}");
        }
        assert!(is_literal("#fff") && is_literal("") && is_literal("OKHSL(1 1 1)"));
        assert!(!is_literal("primary"));
    }
}
