//! Long MCP text results: over [`LIMIT`] bytes, the model gets the beginning and the end with
//! the middle cut out, and the whole text goes to a temp file whose path the cut names, so the
//! model can `read` what it missed. A server returning a megabyte of JSON would otherwise fill
//! the context in one call (pi cuts at the same size).

use std::io::Write;
use std::path::PathBuf;

use crate::tools::truncate::full_text_file;

/// Text results longer than this (in bytes) are cut.
pub const LIMIT: usize = 20 * 1024;

/// `text` as the model should see it: unchanged when short, else head and tail around a note
/// saying how much was cut and where the full text is. When the full text cannot be saved, the
/// note says so instead of naming a file.
pub fn middle_cut(text: &str) -> String {
    if text.len() <= LIMIT {
        return text.to_string();
    }
    let saved = save(text);
    cut_with_note(text, LIMIT, saved.as_ref().ok())
}

fn cut_with_note(text: &str, limit: usize, saved: Option<&PathBuf>) -> String {
    let half = limit / 2;
    let head_end = floor_char(text, half);
    let tail_start = ceil_char(text, text.len() - half);
    let cut = tail_start - head_end;
    let where_ = match saved {
        Some(p) => format!("the full text is in {} (use read to see it)", p.display()),
        None => "the full text could not be saved".to_string(),
    };
    format!(
        "{}\n\n[… {cut} bytes cut from the middle of {} bytes; {where_} …]\n\n{}",
        &text[..head_end],
        text.len(),
        &text[tail_start..]
    )
}

fn save(text: &str) -> std::io::Result<PathBuf> {
    let (mut f, path) = full_text_file("pi-mcp-", ".txt")?;
    if let Err(e) = f.write_all(text.as_bytes()) {
        // A part-written file would pass for the whole text: the note says it was not saved.
        let _ = std::fs::remove_file(&path);
        return Err(e);
    }
    Ok(path)
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_untouched() {
        let t = "x".repeat(LIMIT);
        assert_eq!(middle_cut(&t), t);
    }

    #[test]
    fn long_text_keeps_head_and_tail_and_saves_the_whole() {
        let text = format!("HEAD{}TAIL", "é".repeat(LIMIT));
        let out = middle_cut(&text);
        assert!(
            out.starts_with("HEAD") && out.ends_with("TAIL"),
            "{}",
            &out[..40]
        );
        assert!(out.len() < LIMIT + 300);
        let path = out
            .split("the full text is in ")
            .nth(1)
            .and_then(|r| r.split(" (use read").next())
            .expect("names the file");
        assert_eq!(std::fs::read_to_string(path).unwrap(), text);
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn cut_never_splits_a_character() {
        let text = "日本語".repeat(100);
        let out = cut_with_note(&text, 101, None);
        assert!(out.contains("could not be saved"));
        assert!(out.starts_with("日本語"));
    }
}
