//! `-r/--resume` and the "fork it here?" question, without a TUI: a numbered list of this
//! project's sessions on stderr and an answer read from the terminal (`/dev/tty`).
//!
//! The terminal is opened directly rather than read through stdin because stdin may already
//! have been consumed as the prompt (`echo q | pi -r -p`), and stdout must stay clean for the
//! run's output. Without a terminal there is nobody to ask, so callers get
//! [`PickerError::NoTerminal`] and explain the non-interactive alternatives. The asking logic
//! works on any reader and writer, so it is tested without a terminal.

use std::io::{BufRead, BufReader, Write};
use std::time::SystemTime;

/// Invalid answers tolerated before giving up (a stuck or scripted terminal must not spin).
const MAX_TRIES: usize = 5;

/// How much of the first user message a row shows.
const PREVIEW_CHARS: usize = 60;

/// Why a question could not be answered.
#[derive(Debug, thiserror::Error)]
pub enum PickerError {
    #[error("there is no terminal to ask on ({0})")]
    NoTerminal(#[source] std::io::Error),
    #[error("cannot talk to the terminal: {0}")]
    Io(#[from] std::io::Error),
    #[error("no valid choice after {0} tries")]
    TooManyTries(usize),
}

/// One listed session.
#[derive(Debug, Clone)]
pub struct Row {
    pub modified: SystemTime,
    pub name: Option<String>,
    pub first_message: Option<String>,
    pub message_count: usize,
}

/// A row as one line: `2026-01-02 14:03  [name]  first message…  (4 messages)`.
pub fn describe(row: &Row) -> String {
    let date = chrono::DateTime::<chrono::Local>::from(row.modified).format("%Y-%m-%d %H:%M");
    let name = row
        .name
        .as_deref()
        .map(|n| format!("[{n}]  "))
        .unwrap_or_default();
    let preview = row
        .first_message
        .as_deref()
        .map(preview)
        .unwrap_or_else(|| "(no messages)".to_string());
    let plural = if row.message_count == 1 { "" } else { "s" };
    format!(
        "{date}  {name}{preview}  ({} message{plural})",
        row.message_count
    )
}

/// The first user message on one line: whitespace runs collapsed, cut at [`PREVIEW_CHARS`].
fn preview(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= PREVIEW_CHARS {
        return flat;
    }
    let mut cut: String = flat.chars().take(PREVIEW_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// What one typed line means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    /// A zero-based index into the list.
    Pick(usize),
    Cancel,
    Invalid,
}

fn parse_answer(line: &str, count: usize) -> Answer {
    let line = line.trim();
    if line.is_empty() || line.eq_ignore_ascii_case("q") {
        return Answer::Cancel;
    }
    match line.parse::<usize>() {
        Ok(n) if (1..=count).contains(&n) => Answer::Pick(n - 1),
        _ => Answer::Invalid,
    }
}

/// Lists `rows` (newest first, numbered from 1) on `out` and asks for a number on `input`
/// until a valid one comes. `None` when the user cancels (an empty line, `q`, end of input).
pub fn pick(
    rows: &[Row],
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> Result<Option<usize>, PickerError> {
    let items: Vec<String> = rows.iter().map(describe).collect();
    let question = format!(
        "Resume which session? [1-{}, Enter to cancel]: ",
        rows.len()
    );
    choose(
        "Sessions in this directory, newest first:",
        &items,
        &question,
        input,
        out,
    )
}

/// Lists `items` under `heading`, numbered from 1, and asks `question` until a valid number
/// comes. `None` when the user cancels (an empty line, `q`, end of input).
pub fn choose(
    heading: &str,
    items: &[String],
    question: &str,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> Result<Option<usize>, PickerError> {
    writeln!(out, "{heading}")?;
    let width = items.len().to_string().len();
    for (i, item) in items.iter().enumerate() {
        writeln!(out, "  {:>width$}. {item}", i + 1)?;
    }
    for _ in 0..MAX_TRIES {
        write!(out, "{question}")?;
        out.flush()?;
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            writeln!(out)?;
            return Ok(None);
        }
        match parse_answer(&line, items.len()) {
            Answer::Pick(i) => return Ok(Some(i)),
            Answer::Cancel => return Ok(None),
            Answer::Invalid => writeln!(
                out,
                "Invalid choice {:?}: type a number from 1 to {}.",
                line.trim(),
                items.len()
            )?,
        }
    }
    Err(PickerError::TooManyTries(MAX_TRIES))
}

/// Asks a yes/no `question` (pi's `[y/N]`: anything but y/yes is no).
pub fn confirm(
    question: &str,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> Result<bool, PickerError> {
    write!(out, "{question} [y/N] ")?;
    out.flush()?;
    let mut line = String::new();
    input.read_line(&mut line)?;
    let answer = line.trim().to_ascii_lowercase();
    Ok(answer == "y" || answer == "yes")
}

/// The controlling terminal, for reading answers.
pub struct Terminal {
    input: BufReader<std::fs::File>,
}

impl Terminal {
    /// Opens `/dev/tty`; fails when the process has no controlling terminal.
    pub fn open() -> Result<Terminal, PickerError> {
        let file = std::fs::File::open("/dev/tty").map_err(PickerError::NoTerminal)?;
        Ok(Terminal {
            input: BufReader::new(file),
        })
    }

    /// [`pick`] with the list and prompts on stderr (sessions' titles and paths are shown by
    /// the terminal rule).
    pub fn pick(&mut self, rows: &[Row]) -> Result<Option<usize>, PickerError> {
        pick(rows, &mut self.input, &mut crate::term::out::stderr())
    }

    /// [`choose`] with the list and question on stderr.
    pub fn choose(
        &mut self,
        heading: &str,
        items: &[String],
        question: &str,
    ) -> Result<Option<usize>, PickerError> {
        let mut err = crate::term::out::stderr();
        choose(heading, items, question, &mut self.input, &mut err)
    }

    /// [`confirm`] with the question on stderr.
    pub fn confirm(&mut self, question: &str) -> Result<bool, PickerError> {
        confirm(question, &mut self.input, &mut crate::term::out::stderr())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;
    use std::time::Duration;

    fn row(first: Option<&str>, count: usize) -> Row {
        Row {
            modified: SystemTime::UNIX_EPOCH + Duration::from_secs(86_400 * 365),
            name: None,
            first_message: first.map(str::to_string),
            message_count: count,
        }
    }

    fn run_pick(rows: &[Row], typed: &str) -> (Result<Option<usize>, PickerError>, String) {
        let mut out = Vec::new();
        let r = pick(rows, &mut Cursor::new(typed.to_string()), &mut out);
        (r, String::from_utf8(out).unwrap())
    }

    #[test]
    fn answers_are_numbers_from_one_or_a_cancel() {
        assert_eq!(parse_answer("2\n", 3), Answer::Pick(1));
        assert_eq!(parse_answer(" 3 ", 3), Answer::Pick(2));
        assert_eq!(parse_answer("\n", 3), Answer::Cancel);
        assert_eq!(parse_answer("Q", 3), Answer::Cancel);
        for bad in ["0", "4", "-1", "two", "1.5"] {
            assert_eq!(parse_answer(bad, 3), Answer::Invalid, "{bad}");
        }
    }

    #[test]
    fn rows_show_name_preview_and_count() {
        let mut r = row(Some("fix\n  the   bug"), 4);
        r.name = Some("bugfix".into());
        let line = describe(&r);
        assert!(
            line.ends_with("[bugfix]  fix the bug  (4 messages)"),
            "{line}"
        );
        assert!(describe(&row(None, 1)).ends_with("(no messages)  (1 message)"));
        let long = "word ".repeat(40);
        let p = preview(&long);
        assert_eq!(p.chars().count(), PREVIEW_CHARS);
        assert!(p.ends_with('…'));
    }

    #[test]
    fn an_invalid_choice_is_asked_again() {
        let rows = vec![row(Some("a"), 2), row(Some("b"), 2), row(Some("c"), 2)];
        let (r, out) = run_pick(&rows, "9\nx\n2\n");
        assert_eq!(r.unwrap(), Some(1));
        assert!(out.contains("  1. "), "{out}");
        assert!(out.contains("  3. "), "{out}");
        assert_eq!(out.matches("Invalid choice").count(), 2, "{out}");
    }

    #[test]
    fn empty_line_or_end_of_input_cancels_and_endless_nonsense_stops() {
        let rows = vec![row(Some("a"), 1)];
        assert_eq!(run_pick(&rows, "\n").0.unwrap(), None);
        assert_eq!(run_pick(&rows, "").0.unwrap(), None);
        let (r, _) = run_pick(&rows, &"x\n".repeat(10));
        assert!(matches!(r, Err(PickerError::TooManyTries(MAX_TRIES))));
    }

    #[test]
    fn confirm_accepts_only_yes() {
        let ask = |typed: &str| {
            confirm(
                "Fork?",
                &mut Cursor::new(typed.to_string()),
                &mut Vec::new(),
            )
            .unwrap()
        };
        assert!(ask("y\n"));
        assert!(ask("YES\n"));
        assert!(!ask("n\n"));
        assert!(!ask("\n"));
        assert!(!ask(""));
    }
}
