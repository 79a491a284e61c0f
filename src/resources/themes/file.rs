//! One theme file read into a [`ThemeSpec`]: JSON that does not parse is named with its line
//! and column; the document is then held to 1.6's strict schema — the known top-level keys
//! only, every required colour token present, no unknown colour key, each value a colour
//! (or a `vars` name that resolves to one, without cycles). Every problem is reported, each
//! with the line it is on where it can be found, and a theme with any problem is not used.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::color::{self, Color};
use super::tokens::{self, TOKENS};

/// The background a theme is designed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Appearance {
    Dark,
    Light,
}

/// A theme, resolved: a colour for every token (fallbacks applied).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThemeSpec {
    pub name: String,
    pub appearance: Option<Appearance>,
    /// By position in [`TOKENS`].
    colors: Vec<Color>,
    /// Tokens drawn faint (SGR 2) on top of their colour: only the built-in `system` theme
    /// has them, as 1.6's.
    dim: Vec<bool>,
    /// The HTML export's page, card and info backgrounds (`export.pageBg`, `cardBg`,
    /// `infoBg`), where the theme sets them.
    pub export: ExportColors,
}

/// A theme's own colours for the HTML export; the export derives what is missing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExportColors {
    pub page_bg: Option<Color>,
    pub card_bg: Option<Color>,
    pub info_bg: Option<Color>,
}

impl ThemeSpec {
    /// A theme from `(token, colour)` pairs (the built-in `system` theme); tokens left out are
    /// the terminal's default.
    pub(super) fn from_table(name: &str, colors: &[(&str, Color)], dim: &[&str]) -> ThemeSpec {
        let mut spec = ThemeSpec {
            name: name.to_string(),
            appearance: None,
            colors: vec![Color::Default; TOKENS.len()],
            dim: vec![false; TOKENS.len()],
            export: ExportColors::default(),
        };
        for (token, c) in colors {
            if let Some(i) = tokens::index(token) {
                spec.colors[i] = *c;
            }
        }
        for token in dim {
            if let Some(i) = tokens::index(token) {
                spec.dim[i] = true;
            }
        }
        spec
    }

    /// The colour of `token` (one of [`TOKENS`]; any other name is the terminal's default).
    pub fn color(&self, token: &str) -> Color {
        tokens::index(token).map_or(Color::Default, |i| self.colors[i])
    }

    /// Whether `token` is drawn faint.
    pub fn is_dim(&self, token: &str) -> bool {
        tokens::index(token).is_some_and(|i| self.dim[i])
    }
}

/// Why a theme file cannot be used: one line per problem, each naming the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", problems.join("\n"))]
pub struct ThemeError {
    pub problems: Vec<String>,
}

const TOP_LEVEL: [&str; 6] = ["$schema", "name", "appearance", "vars", "colors", "export"];
const EXPORT_KEYS: [&str; 3] = ["pageBg", "cardBg", "infoBg"];

/// Reads the theme in `text`; `label` (its path) names it in every problem.
pub fn parse(text: &str, label: &str) -> Result<ThemeSpec, ThemeError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let doc: Value = serde_json::from_str(text).map_err(|e| ThemeError {
        problems: vec![json_problem(label, &e)],
    })?;
    let mut c = Checker {
        text,
        label,
        problems: Vec::new(),
    };
    let spec = c.document(&doc);
    match spec {
        Some(spec) if c.problems.is_empty() => Ok(spec),
        _ => Err(ThemeError {
            problems: c.problems,
        }),
    }
}

/// serde_json's message with its position as "line L, column C".
fn json_problem(label: &str, e: &serde_json::Error) -> String {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = full.strip_suffix(&suffix).unwrap_or(&full);
    format!(
        "{label}: line {}, column {}: not valid JSON: {message}",
        e.line(),
        e.column()
    )
}

struct Checker<'a> {
    text: &'a str,
    label: &'a str,
    problems: Vec<String>,
}

impl Checker<'_> {
    /// The 1-based line of `"key":` after the first `"section":` (or anywhere without one).
    fn line_of(&self, section: Option<&str>, key: &str) -> Option<usize> {
        let start = section
            .and_then(|s| self.text.find(&format!("\"{s}\"")))
            .unwrap_or(0);
        let quoted = format!("\"{key}\"");
        let mut from = start;
        while let Some(i) = self.text[from..].find(&quoted) {
            let at = from + i;
            let after = self.text[at + quoted.len()..].trim_start();
            if after.starts_with(':') {
                return Some(self.text[..at].matches('\n').count() + 1);
            }
            from = at + quoted.len();
        }
        None
    }

    fn problem(&mut self, line: Option<usize>, what: String) {
        let msg = match line {
            Some(l) => format!("{}: line {l}: {what}", self.label),
            None => format!("{}: {what}", self.label),
        };
        self.problems.push(msg);
    }

    fn document(&mut self, doc: &Value) -> Option<ThemeSpec> {
        let Some(obj) = doc.as_object() else {
            self.problem(None, "a theme must be a JSON object".into());
            return None;
        };
        for key in obj.keys() {
            if !TOP_LEVEL.contains(&key.as_str()) {
                let line = self.line_of(None, key);
                self.problem(
                    line,
                    format!("unknown key {key:?} (a theme has {})", TOP_LEVEL.join(", ")),
                );
            }
        }
        let name = self.name(obj.get("name"));
        let appearance = self.appearance(obj.get("appearance"));
        let vars = self.vars(obj.get("vars"));
        let colors = self.colors(obj.get("colors"), &vars);
        let export = self.export(obj.get("export"), &vars);
        Some(ThemeSpec {
            name: name?,
            appearance,
            colors: colors?,
            dim: vec![false; TOKENS.len()],
            export,
        })
    }

    fn name(&mut self, v: Option<&Value>) -> Option<String> {
        match v {
            Some(Value::String(s)) if s.contains('/') => {
                let line = self.line_of(None, "name");
                self.problem(
                    line,
                    format!(
                        "theme name {s:?} cannot contain \"/\" (it separates the light and \
                         dark theme in the `theme` setting)"
                    ),
                );
                None
            }
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
            _ => {
                let line = self.line_of(None, "name");
                self.problem(line, "\"name\" (a string) is required".into());
                None
            }
        }
    }

    fn appearance(&mut self, v: Option<&Value>) -> Option<Appearance> {
        match v? {
            Value::String(s) if s == "dark" => Some(Appearance::Dark),
            Value::String(s) if s == "light" => Some(Appearance::Light),
            other => {
                let line = self.line_of(None, "appearance");
                self.problem(
                    line,
                    format!("\"appearance\" must be \"dark\" or \"light\", not {other}"),
                );
                None
            }
        }
    }

    fn vars(&mut self, v: Option<&Value>) -> Map<String, Value> {
        match v {
            None => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => {
                let line = self.line_of(None, "vars");
                self.problem(line, "\"vars\" must be an object".into());
                Map::new()
            }
        }
    }

    /// `value` of `key` in `section`, its var references followed.
    fn resolve(
        &mut self,
        section: &str,
        key: &str,
        value: &Value,
        vars: &Map<String, Value>,
    ) -> Option<Color> {
        let line = self.line_of(Some(section), key);
        let mut seen: Vec<&str> = Vec::new();
        let mut v = value;
        loop {
            match v {
                Value::Number(n) => {
                    return match n.as_u64().filter(|i| *i <= 255) {
                        Some(i) => Some(Color::Indexed(i as u8)),
                        None => {
                            self.problem(
                                line,
                                format!("{key:?}: {n} is not a 256-colour index (0-255)"),
                            );
                            None
                        }
                    };
                }
                Value::String(s) if color::is_literal(s) => {
                    return match color::parse(s) {
                        Ok(c) => Some(c),
                        Err(e) => {
                            self.problem(line, format!("{key:?}: {e}"));
                            None
                        }
                    };
                }
                Value::String(name) => {
                    if seen.contains(&name.as_str()) {
                        self.problem(
                            line,
                            format!(
                                "{key:?}: the vars refer to each other in a circle ({} → {name})",
                                seen.join(" → ")
                            ),
                        );
                        return None;
                    }
                    let Some(next) = vars.get(name) else {
                        self.problem(line, format!("{key:?}: no var named {name:?}"));
                        return None;
                    };
                    seen.push(name);
                    v = next;
                }
                other => {
                    self.problem(
                        line,
                        format!("{key:?}: {other} is not a colour (a string or 0-255)"),
                    );
                    return None;
                }
            }
        }
    }

    fn colors(&mut self, v: Option<&Value>, vars: &Map<String, Value>) -> Option<Vec<Color>> {
        let Some(obj) = v.and_then(Value::as_object) else {
            let line = self.line_of(None, "colors");
            self.problem(line, "\"colors\" (an object) is required".into());
            return None;
        };
        let mut given: HashMap<&str, Color> = HashMap::new();
        let mut ok = true;
        for (key, value) in obj {
            let Some(i) = tokens::index(key) else {
                let line = self.line_of(Some("colors"), key);
                self.problem(line, format!("unknown colour key {key:?}"));
                ok = false;
                continue;
            };
            match self.resolve("colors", key, value, vars) {
                Some(c) => {
                    given.insert(TOKENS[i].0, c);
                }
                None => ok = false,
            }
        }
        let missing: Vec<&str> = TOKENS
            .iter()
            .filter(|(n, _, fallback)| fallback.is_none() && !obj.contains_key(*n))
            .map(|(n, _, _)| *n)
            .collect();
        if !missing.is_empty() {
            let line = self.line_of(None, "colors");
            self.problem(line, format!("missing colours: {}", missing.join(", ")));
            ok = false;
        }
        if !ok {
            return None;
        }
        let mut out = Vec::with_capacity(TOKENS.len());
        for (name, _, fallback) in TOKENS {
            let c = given
                .get(name)
                .or_else(|| fallback.and_then(|f| given.get(f)))
                .copied()
                .unwrap_or(Color::Default);
            out.push(c);
        }
        Some(out)
    }

    /// The HTML export's colours, checked like the others; `""` leaves one to the export.
    fn export(&mut self, v: Option<&Value>, vars: &Map<String, Value>) -> ExportColors {
        let mut out = ExportColors::default();
        let Some(v) = v else { return out };
        let Some(obj) = v.as_object() else {
            let line = self.line_of(None, "export");
            self.problem(line, "\"export\" must be an object".into());
            return out;
        };
        for (key, value) in obj {
            if EXPORT_KEYS.contains(&key.as_str()) {
                let c = self
                    .resolve("export", key, value, vars)
                    .filter(|c| *c != Color::Default);
                match key.as_str() {
                    "pageBg" => out.page_bg = c,
                    "cardBg" => out.card_bg = c,
                    _ => out.info_bg = c,
                }
            } else {
                let line = self.line_of(Some("export"), key);
                self.problem(
                    line,
                    format!(
                        "unknown export key {key:?} (export has {})",
                        EXPORT_KEYS.join(", ")
                    ),
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DARK: &str = include_str!("builtin/dark.json");

    fn problems(text: &str) -> Vec<String> {
        parse(text, "t.json").unwrap_err().problems
    }

    #[test]
    fn json_that_does_not_parse_is_named_with_its_line_and_column() {
        let p =
            problems("{\n  \"name\": \"x\",\n  \"colors\": {\n    \"accent\": \"#fff\",\n  }\n}\n");
        assert_eq!(p.len(), 1);
        assert!(
            p[0].starts_with("t.json: line 5, column 3: not valid JSON"),
            "{p:?}"
        );
    }

    #[test]
    fn unknown_keys_and_bad_values_are_named_with_their_lines() {
        let mut doc: Value = serde_json::from_str(DARK).unwrap();
        doc["colors"]["acent"] = "#00ff00".into();
        doc["colors"]["border"] = "#12".into();
        doc["colors"]["mdHr"] = 300.into();
        doc["colors"]["dim"] = "nosuchvar".into();
        doc["extra"] = true.into();
        let text = serde_json::to_string_pretty(&doc).unwrap();
        let p = problems(&text).join("\n");
        let line_of = |needle: &str| {
            text.lines()
                .position(|l| l.contains(needle))
                .map(|i| i + 1)
                .unwrap()
        };
        let acent = format!(
            "line {}: unknown colour key \"acent\"",
            line_of("\"acent\"")
        );
        assert!(p.contains(&acent), "{p}");
        assert!(p.contains("\"border\": \"#12\" is not a colour"), "{p}");
        assert!(p.contains("\"mdHr\": 300 is not a 256-colour index"), "{p}");
        assert!(p.contains("\"dim\": no var named \"nosuchvar\""), "{p}");
        assert!(p.contains("unknown key \"extra\""), "{p}");
    }

    #[test]
    fn vars_resolve_in_chains_and_circles_are_refused() {
        let mut doc: Value = serde_json::from_str(DARK).unwrap();
        doc["vars"]["a"] = "b".into();
        doc["vars"]["b"] = "a".into();
        doc["colors"]["accent"] = "a".into();
        let p = problems(&doc.to_string()).join("\n");
        assert!(p.contains("in a circle"), "{p}");
        let mut doc: Value = serde_json::from_str(DARK).unwrap();
        doc["vars"]["top"] = "violet".into();
        doc["colors"]["accent"] = "top".into();
        doc["colors"]["text"] = "".into();
        doc["colors"]["mdHeading"] = 196.into();
        let spec = parse(&doc.to_string(), "t.json").unwrap();
        assert_eq!(spec.color("accent"), Color::Rgb(0xa7, 0x98, 0xd7));
        assert_eq!(spec.color("text"), Color::Default);
        assert_eq!(spec.color("mdHeading"), Color::Indexed(196));
    }

    #[test]
    fn missing_colours_are_listed_and_optional_ones_fall_back() {
        let mut doc: Value = serde_json::from_str(DARK).unwrap();
        let colors = doc["colors"].as_object_mut().unwrap();
        colors.remove("accent");
        colors.remove("bashMode");
        let p = problems(&doc.to_string()).join("\n");
        assert!(p.contains("missing colours: accent, bashMode"), "{p}");
        let mut doc: Value = serde_json::from_str(DARK).unwrap();
        doc["colors"].as_object_mut().unwrap().remove("thinkingMax");
        let spec = parse(&doc.to_string(), "t.json").unwrap();
        assert_eq!(spec.color("thinkingMax"), spec.color("thinkingXhigh"));
    }

    #[test]
    fn a_name_with_a_slash_is_refused() {
        let mut doc: Value = serde_json::from_str(DARK).unwrap();
        doc["name"] = "a/b".into();
        assert!(problems(&doc.to_string())[0].contains("cannot contain \"/\""));
    }
}
