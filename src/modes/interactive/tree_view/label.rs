//! The tree selector's labels, as 1.6 edits and shows them: Shift+L opens "Label (empty to
//! remove):" on the chosen entry with its label to edit, Enter saves (the selector keeps
//! going and the app writes the label entry), Esc leaves it as it was; Shift+T shows when
//! each label was set, taken from the session's own label entries.

use std::collections::HashMap;

use chrono::{DateTime, Datelike, Local};
use crossterm::event::{KeyCode, KeyEvent};
use serde_json::Value;

use super::flat::Node;
use crate::modes::interactive::line_input::{InputOutcome, LineInput};
use crate::modes::interactive::text::Line;
use crate::modes::interactive::theme::Theme;

/// A label being typed for one entry.
pub struct LabelEdit {
    pub target: String,
    input: LineInput,
}

/// What a key did to the label being typed.
pub enum EditKey {
    Typing,
    /// Enter: the label to set (`None` removes it).
    Save(Option<String>),
    Cancel,
}

impl LabelEdit {
    pub fn new(target: String, current: Option<&str>) -> LabelEdit {
        let mut input = LineInput::new();
        if let Some(label) = current {
            input.set_text(label);
        }
        LabelEdit { target, input }
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> EditKey {
        match key.code {
            KeyCode::Esc => EditKey::Cancel,
            // A label is one line: Shift+Enter saves too rather than adding a line.
            KeyCode::Enter => EditKey::Save(self.value()),
            _ => match self.input.handle_key(key) {
                InputOutcome::Submit { .. } => EditKey::Save(self.value()),
                InputOutcome::None => EditKey::Typing,
            },
        }
    }

    fn value(&self) -> Option<String> {
        let v = self.input.text().trim();
        (!v.is_empty()).then(|| v.to_string())
    }

    /// 1.6's three lines in place of the rows.
    pub fn render(&self, width: usize, theme: &Theme) -> Vec<Line> {
        let (mut input, _) = self.input.render("  ", theme.text, width);
        let mut out = vec![Line::styled("  Label (empty to remove):", theme.muted)];
        out.append(&mut input);
        out.push(Line::styled("  enter save  esc cancel", theme.muted));
        out.into_iter().map(|l| l.truncated(width)).collect()
    }
}

/// When each entry's current label was set: the timestamp of the last label entry naming it.
pub fn label_times(nodes: &[Node]) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut labels: Vec<&Value> = nodes
        .iter()
        .map(|n| &n.entry)
        .filter(|e| e["type"] == "label")
        .collect();
    // Entries are shown branch-first, not in time order; ISO timestamps sort as text.
    labels.sort_by(|a, b| a["timestamp"].as_str().cmp(&b["timestamp"].as_str()));
    for e in labels {
        if let (Some(target), Some(at)) = (e["targetId"].as_str(), e["timestamp"].as_str()) {
            out.insert(target.to_string(), at.to_string());
        }
    }
    out
}

/// 1.6's short time: `HH:MM` today, `M/D HH:MM` this year, `YY/M/D HH:MM` before, in local
/// time.
pub fn short_time(iso: &str, now: DateTime<Local>) -> Option<String> {
    let at = DateTime::parse_from_rfc3339(iso)
        .ok()?
        .with_timezone(&Local);
    let time = at.format("%H:%M").to_string();
    if at.date_naive() == now.date_naive() {
        return Some(time);
    }
    if at.year() == now.year() {
        return Some(format!("{}/{} {time}", at.month(), at.day()));
    }
    Some(format!(
        "{:02}/{}/{} {time}",
        at.year() % 100,
        at.month(),
        at.day()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn label_times_read_as_16_shows_them() {
        let now = Local.with_ymd_and_hms(2026, 12, 5, 18, 0, 0).unwrap();
        let local = |y, m, d, h, min| {
            Local
                .with_ymd_and_hms(y, m, d, h, min, 0)
                .unwrap()
                .to_rfc3339()
        };
        assert_eq!(short_time(&local(2026, 12, 5, 9, 7), now).unwrap(), "09:07");
        assert_eq!(
            short_time(&local(2026, 3, 1, 14, 30), now).unwrap(),
            "3/1 14:30"
        );
        assert_eq!(
            short_time(&local(2025, 3, 1, 14, 30), now).unwrap(),
            "25/3/1 14:30"
        );
        assert_eq!(short_time("not a time", now), None);
    }
}
