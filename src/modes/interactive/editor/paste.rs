//! Bracketed paste: what is kept of pasted text, and the collapsed markers a large paste is
//! shown as. The editor keeps a table from marker to full text so the prompt box stays a few
//! rows high while the submitted text carries the whole paste, as pi shows
//! `[paste #1 +312 lines]`.

/// A paste of more lines than this is collapsed.
pub const COLLAPSE_LINES: usize = 10;
/// A paste of more characters than this is collapsed.
pub const COLLAPSE_CHARS: usize = 1000;

/// Pasted text as it goes into the editor: CRLF and lone CR become LF, tabs stay, and every
/// other character the terminal rule names (escape sequences a terminal would act on, NULs,
/// bells, bidi overrides) is dropped rather than shown: what is pasted is also what is sent,
/// so a paste can neither break the box nor smuggle escapes to the screen or the model.
pub fn sanitize(text: &str) -> String {
    let unified = text.replace("\r\n", "\n").replace('\r', "\n");
    unified.chars().filter(|&c| kept(c)).collect()
}

/// Whether a pasted or typed character goes into the text.
pub fn kept(c: char) -> bool {
    c == '\n' || c == '\t' || crate::term::sanitize::stand_in(c).is_none()
}

/// The marker for paste number `id` of `text`, if the paste is large enough to collapse.
pub fn marker_for(id: usize, text: &str) -> Option<String> {
    // A paste ending in a newline has no extra line after it.
    let lines = text.strip_suffix('\n').unwrap_or(text).split('\n').count();
    if lines > COLLAPSE_LINES {
        Some(format!("[paste #{id} +{lines} lines]"))
    } else {
        let chars = text.chars().count();
        (chars > COLLAPSE_CHARS).then(|| format!("[paste #{id} {chars} chars]"))
    }
}

/// Collapsed pastes of one editor: marker → full text.
#[derive(Debug, Default, Clone)]
pub struct Pastes {
    next_id: usize,
    entries: Vec<(String, String)>,
}

impl Pastes {
    /// Record `text` (already sanitized) and return what to insert: the text itself when it
    /// is small, else a new marker standing for it.
    pub fn add(&mut self, text: String) -> (String, Option<String>) {
        let id = self.next_id + 1;
        match marker_for(id, &text) {
            Some(marker) => {
                self.next_id = id;
                self.entries.push((marker.clone(), text));
                (marker.clone(), Some(marker))
            }
            None => (text, None),
        }
    }

    /// `text` with every known marker replaced by its paste. Replacement is one pass over the
    /// original, so a paste that itself contains marker-like text is not expanded again.
    pub fn expand(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        loop {
            let next = self
                .entries
                .iter()
                .filter_map(|(m, full)| rest.find(m.as_str()).map(|i| (i, m, full)))
                .min_by_key(|(i, _, _)| *i);
            match next {
                Some((i, marker, full)) => {
                    out.push_str(&rest[..i]);
                    out.push_str(full);
                    rest = &rest[i + marker.len()..];
                }
                None => {
                    out.push_str(rest);
                    return out;
                }
            }
        }
    }

    /// Forget pastes whose marker `still_used` says is gone (after a submit, so a long
    /// session does not hold every paste it ever saw).
    pub fn retain(&mut self, still_used: impl Fn(&str) -> bool) {
        self.entries.retain(|(m, _)| still_used(m));
    }

    #[cfg(test)]
    pub fn markers(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(m, _)| m.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_unifies_line_ends_keeps_tabs_and_drops_other_controls() {
        assert_eq!(sanitize("a\r\nb\rc\td"), "a\nb\nc\td");
        assert_eq!(sanitize("x\u{1b}[31my\u{7}\u{0}z"), "x[31myz");
        assert_eq!(sanitize("a\u{9b}2J\u{202e}b"), "a2Jb");
    }

    #[test]
    fn small_pastes_are_inserted_as_is() {
        let mut p = Pastes::default();
        let (shown, marker) = p.add("one\ntwo".into());
        assert_eq!(shown, "one\ntwo");
        assert!(marker.is_none());
    }

    #[test]
    fn a_paste_over_the_line_limit_collapses_and_expands_back() {
        let mut p = Pastes::default();
        let text = (1..=312)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join("\n");
        let (shown, marker) = p.add(text.clone());
        assert_eq!(shown, "[paste #1 +312 lines]");
        assert_eq!(marker.as_deref(), Some("[paste #1 +312 lines]"));
        assert_eq!(
            p.expand(&format!("before {shown} after")),
            format!("before {text} after")
        );
    }

    #[test]
    fn a_long_single_line_paste_collapses_by_characters() {
        let mut p = Pastes::default();
        let (shown, _) = p.add("é".repeat(COLLAPSE_CHARS + 1));
        assert_eq!(shown, format!("[paste #1 {} chars]", COLLAPSE_CHARS + 1));
        let (exact, marker) = p.add("x".repeat(COLLAPSE_CHARS));
        assert!(marker.is_none(), "the limit itself is not collapsed");
        assert_eq!(exact.len(), COLLAPSE_CHARS);
    }

    #[test]
    fn paste_numbers_count_up_and_each_marker_expands_to_its_own_text() {
        let mut p = Pastes::default();
        let a = "a\n".repeat(20);
        let b = "b\n".repeat(30);
        let (ma, _) = p.add(a.clone());
        let (mb, _) = p.add(b.clone());
        assert_eq!(ma, "[paste #1 +20 lines]");
        assert_eq!(mb, "[paste #2 +30 lines]");
        assert_eq!(p.expand(&format!("{mb}{ma}")), format!("{b}{a}"));
    }

    #[test]
    fn a_paste_containing_a_marker_is_not_expanded_twice() {
        let mut p = Pastes::default();
        let inner = format!("{}[paste #1 +21 lines]", "x\n".repeat(20));
        let (m1, _) = p.add(inner.clone());
        assert_eq!(p.expand(&m1), inner);
    }

    #[test]
    fn retain_forgets_unused_pastes() {
        let mut p = Pastes::default();
        let (m, _) = p.add("z\n".repeat(11));
        p.retain(|_| false);
        assert_eq!(p.expand(&m), m);
        assert_eq!(p.markers().count(), 0);
    }
}
