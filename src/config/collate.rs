//! String order as pi 1.6 sorts model lists: JavaScript's `localeCompare` under Node's ICU
//! with the default (`en-US`, i.e. CLDR root) collation. For the ASCII that provider and
//! model ids are made of, that collation is a fixed table — space, punctuation and symbols,
//! then digits, then letters with case a tie-breaker (lower first) — so it is written out here
//! rather than pulling in ICU's collation data (megabytes) for one sort. Anything beyond ASCII
//! falls back to code-point order after every ASCII character.

use std::cmp::Ordering;

/// The ASCII printable characters in CLDR root collation order, case-insensitive; read from
/// Node 22 (`[...chars].sort((a, b) => a.localeCompare(b))`).
const ORDER: &[u8] = b" _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz";

/// The primary weight of `c`: its place in [`ORDER`], or after all of ASCII.
fn primary(c: char) -> u32 {
    let folded = c.to_ascii_lowercase();
    match ORDER.iter().position(|&b| char::from(b) == folded) {
        Some(i) => i as u32,
        None => ORDER.len() as u32 + c as u32,
    }
}

/// `a` against `b` as `a.localeCompare(b)` orders them: letters, digits and punctuation by
/// their collation weights, then (only when those are all equal) lowercase before uppercase.
pub fn locale_cmp(a: &str, b: &str) -> Ordering {
    let weights = |s: &str| s.chars().map(primary).collect::<Vec<_>>();
    weights(a).cmp(&weights(b)).then_with(|| {
        let case = |s: &str| {
            s.chars()
                .map(|c| c.is_ascii_uppercase())
                .collect::<Vec<_>>()
        };
        case(a).cmp(&case(b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(items: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = items.iter().map(|s| s.to_string()).collect();
        v.sort_by(|a, b| locale_cmp(a, b));
        v
    }

    #[test]
    fn punctuation_and_symbols_sort_before_digits_and_letters() {
        // As Node 22 sorts them.
        assert_eq!(
            sorted(&["ab", "a9", "a10", "a1", "a.b", "a-b", "a_b", "a b"]),
            ["a b", "a_b", "a-b", "a.b", "a1", "a10", "a9", "ab"]
        );
        assert_eq!(
            sorted(&[
                "claude-5",
                "~claude-latest",
                "claude-5:batch",
                "claude-5-mini"
            ]),
            [
                "~claude-latest",
                "claude-5",
                "claude-5-mini",
                "claude-5:batch"
            ]
        );
    }

    #[test]
    fn case_breaks_ties_only() {
        assert_eq!(sorted(&["B", "a", "A", "b"]), ["a", "A", "b", "B"]);
        assert_eq!(sorted(&["Ab", "aC"]), ["Ab", "aC"]);
        assert_eq!(locale_cmp("x", "x"), Ordering::Equal);
    }
}
