//! The footer: where you are (cwd, session name), what answers (model, thinking level), and
//! what it has cost (context use, tokens, dollars). Pure: the app gathers the numbers.

use super::text::Line;
use super::theme::Theme;

#[derive(Debug, Clone, Default)]
pub struct FooterInfo {
    pub cwd: String,
    /// The git branch of the cwd's repository (`detached` on a detached HEAD), as pi 1.6's
    /// footer shows it after the directory.
    pub git_branch: Option<String>,
    pub session_name: Option<String>,
    pub model: String,
    pub thinking: Option<String>,
    pub context_percent: Option<f64>,
    pub context_window: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost: f64,
}

pub fn render(info: &FooterInfo, width: usize, theme: &Theme) -> Vec<Line> {
    let mut first = info.cwd.clone();
    if let Some(branch) = &info.git_branch {
        first.push_str(&format!(" ({branch})"));
    }
    if let Some(name) = &info.session_name {
        first.push_str(" • ");
        first.push_str(name);
    }
    let mut left = format!(
        "↑{} ↓{}",
        count(info.input_tokens),
        count(info.output_tokens)
    );
    if info.cost > 0.0 {
        left.push_str(&format!(" ${:.3}", info.cost));
    }
    match info.context_percent {
        Some(p) => left.push_str(&format!(" {p:.1}%/{}", count(info.context_window))),
        None if info.context_window > 0 => {
            left.push_str(&format!(" ?/{}", count(info.context_window)))
        }
        None => {}
    }
    let mut right = info.model.clone();
    if let Some(t) = &info.thinking {
        right.push_str(" • ");
        right.push_str(t);
    }
    let lw = unicode_width::UnicodeWidthStr::width(left.as_str());
    let rw = unicode_width::UnicodeWidthStr::width(right.as_str());
    let second = if lw + rw + 2 <= width {
        format!("{left}{}{right}", " ".repeat(width - lw - rw))
    } else {
        format!("{left}  {right}")
    };
    vec![
        Line::styled(first, theme.footer).truncated(width),
        Line::styled(second, theme.footer).truncated(width),
    ]
}

/// 1234 → "1.2k", as pi's footer shows counts.
fn count(n: u64) -> String {
    if n < 1000 {
        n.to_string()
    } else if n < 1_000_000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        format!("{:.1}M", n as f64 / 1_000_000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::theme::ThemeName;

    #[test]
    fn footer_shows_place_model_and_usage() {
        let info = FooterInfo {
            cwd: "~/proj".into(),
            git_branch: Some("main".into()),
            session_name: Some("refactor".into()),
            model: "faux-1".into(),
            thinking: Some("medium".into()),
            context_percent: Some(12.34),
            context_window: 200_000,
            input_tokens: 1234,
            output_tokens: 56,
            cost: 0.0123,
        };
        let rows: Vec<String> = render(&info, 60, &Theme::new(ThemeName::Dark, false))
            .iter()
            .map(Line::text)
            .collect();
        assert_eq!(rows[0], "~/proj (main) • refactor");
        assert!(
            rows[1].starts_with("↑1.2k ↓56 $0.012 12.3%/200.0k"),
            "{}",
            rows[1]
        );
        assert!(rows[1].ends_with("faux-1 • medium"), "{}", rows[1]);
    }
}
