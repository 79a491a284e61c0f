//! The argument grammar of prompt templates: splitting `/name a "b c"` into arguments, and
//! substituting `$1`, `$@`, `$ARGUMENTS`, `${N:-default}`, `${@:-default}`,
//! `${ARGUMENTS:-default}`, `${@:N}` and `${@:N:L}` in one left-to-right pass.
//!
//! One pass is the point: inserted text (an argument or a default) is never scanned again, so
//! an argument containing `$1` stays literal. Anything that is not one of the forms above is
//! literal too; there is no escape (`$$1` is `$` followed by the first argument).

/// Splits an argument string the way pi does. Whitespace separates; `"…"` and `'…'` group
/// (quotes removed, no escapes inside, an unterminated quote runs to the end); backslashes are
/// literal; and an empty token, even a quoted `""`, is dropped. This is deliberately not
/// POSIX splitting (`shell-words`), which rejects unterminated quotes and keeps `""`.
pub fn parse_command_args(input: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for c in input.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => current.push(c),
            None if c == '"' || c == '\'' => quote = Some(c),
            None if is_js_space(c) => {
                if !current.is_empty() {
                    args.push(std::mem::take(&mut current));
                }
            }
            None => current.push(c),
        }
    }
    if !current.is_empty() {
        args.push(current);
    }
    args
}

/// JavaScript's `\s`: Unicode white space plus the byte-order mark, which Rust does not count.
pub(crate) fn is_js_space(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}'
}

/// Replaces every placeholder in `content` with its value from `args` (1-based).
pub fn substitute_args(content: &str, args: &[String]) -> String {
    let all = args.join(" ");
    let mut out = String::with_capacity(content.len());
    let mut literal_from = 0;
    let mut i = 0;
    while let Some(off) = content[i..].find('$') {
        let at = i + off;
        match placeholder(&content[at..], args, &all) {
            Some((value, len)) => {
                out.push_str(&content[literal_from..at]);
                out.push_str(&value);
                i = at + len;
                literal_from = i;
            }
            None => i = at + 1,
        }
    }
    out.push_str(&content[literal_from..]);
    out
}

/// The value and byte length of the placeholder at the start of `s` (which begins with `$`),
/// trying the braced forms first as pi's regex alternation does.
fn placeholder(s: &str, args: &[String], all: &str) -> Option<(String, usize)> {
    let rest = &s[1..];
    if let Some(inner_start) = rest.strip_prefix('{') {
        return braced(inner_start, args, all).map(|(v, inner_len)| (v, 2 + inner_len));
    }
    if rest.starts_with("ARGUMENTS") {
        return Some((all.to_string(), 1 + "ARGUMENTS".len()));
    }
    if rest.starts_with('@') {
        return Some((all.to_string(), 2));
    }
    let digits = leading_digits(rest);
    if digits.is_empty() {
        return None;
    }
    Some((
        positional(args, digits).unwrap_or_default(),
        1 + digits.len(),
    ))
}

/// A braced form, given the text after `${`; the length returned covers through the `}`.
fn braced(s: &str, args: &[String], all: &str) -> Option<(String, usize)> {
    let close = s.find('}')?;
    let inner = &s[..close];
    let len = close + 1;

    // ${N:-default}: the default (which may be empty) applies when the argument is missing
    // or empty. `[^}]*` in pi's regex means the default ends at the first `}`.
    let digits = leading_digits(inner);
    if !digits.is_empty() {
        let default = inner[digits.len()..].strip_prefix(":-")?;
        let value = positional(args, digits).filter(|v| !v.is_empty());
        return Some((value.unwrap_or_else(|| default.to_string()), len));
    }

    // ${@:-default} and ${ARGUMENTS:-default}: all arguments, or the default when there are none.
    let all_default = inner
        .strip_prefix("@:-")
        .or_else(|| inner.strip_prefix("ARGUMENTS:-"));
    if let Some(default) = all_default {
        let value = if all.is_empty() { default } else { all };
        return Some((value.to_string(), len));
    }

    // ${@:N} and ${@:N:L}: bash-style slices; N is 1-based and 0 means 1.
    let spec = inner.strip_prefix("@:")?;
    let start_digits = leading_digits(spec);
    if start_digits.is_empty() {
        return None;
    }
    let length = match &spec[start_digits.len()..] {
        "" => None,
        tail => {
            let length_digits = tail.strip_prefix(':')?;
            if length_digits.is_empty() || leading_digits(length_digits) != length_digits {
                return None;
            }
            Some(to_count(length_digits))
        }
    };
    let start = to_count(start_digits).saturating_sub(1).min(args.len());
    let from = &args[start..];
    let taken = match length {
        Some(n) => &from[..n.min(from.len())],
        None => from,
    };
    Some((taken.join(" "), len))
}

/// The 1-based argument `digits` names; `$0` and out-of-range numbers name nothing.
fn positional(args: &[String], digits: &str) -> Option<String> {
    let n: usize = digits.parse().ok()?;
    args.get(n.checked_sub(1)?).cloned()
}

/// A decimal count; one too large for `usize` is as good as infinite here.
fn to_count(digits: &str) -> usize {
    digits.parse().unwrap_or(usize::MAX)
}

fn leading_digits(s: &str) -> &str {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(template: &str, args: &[&str]) -> String {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        substitute_args(template, &args)
    }

    fn parse(s: &str) -> Vec<String> {
        parse_command_args(s)
    }

    // ---- $@, $ARGUMENTS, $N -------------------------------------------------------------

    #[test]
    fn all_args_forms() {
        assert_eq!(sub("Test: $ARGUMENTS", &["a", "b", "c"]), "Test: a b c");
        assert_eq!(sub("Test: $@", &["a", "b", "c"]), "Test: a b c");
        assert_eq!(
            sub("$@ and $ARGUMENTS", &["x", "y", "z"]),
            sub("$ARGUMENTS and $@", &["x", "y", "z"])
        );
        assert_eq!(sub("$ARGUMENTS and $ARGUMENTS", &["a", "b"]), "a b and a b");
        assert_eq!(sub("$@ and $@", &["a", "b"]), "a b and a b");
        assert_eq!(sub("Test: $ARGUMENTS", &["only"]), "Test: only");
        assert_eq!(sub("Test: $@", &["only"]), "Test: only");
    }

    #[test]
    fn empty_args() {
        assert_eq!(sub("Test: $ARGUMENTS", &[]), "Test: ");
        assert_eq!(sub("Test: $@", &[]), "Test: ");
        assert_eq!(sub("Test: $1", &[]), "Test: ");
    }

    #[test]
    fn no_recursion_into_argument_values() {
        assert_eq!(sub("$ARGUMENTS", &["$1", "$ARGUMENTS"]), "$1 $ARGUMENTS");
        assert_eq!(sub("$@", &["$100", "$1"]), "$100 $1");
        assert_eq!(sub("$ARGUMENTS", &["$100", "$1"]), "$100 $1");
        assert_eq!(sub("$1 $2", &["$2", "x"]), "$2 x");
        assert_eq!(sub("$2 $1", &["${@:1}", "$@"]), "$@ ${@:1}");
        assert_eq!(sub("${1:-d}", &["$2", "b"]), "$2");
    }

    #[test]
    fn positional_mixed_with_all() {
        assert_eq!(
            sub("$1: $ARGUMENTS", &["prefix", "a", "b"]),
            "prefix: prefix a b"
        );
        assert_eq!(sub("$1: $@", &["prefix", "a", "b"]), "prefix: prefix a b");
        assert_eq!(
            sub("$1: $@ ($ARGUMENTS)", &["first", "second", "third"]),
            "first: first second third (first second third)"
        );
        assert_eq!(sub("$1 $2 $@", &["a", "b", "c"]), "a b a b c");
        assert_eq!(sub("$1 $2 $3", &["a", "b", "c"]), "a b c");
    }

    #[test]
    fn out_of_range_and_zero_become_empty() {
        assert_eq!(sub("$1 $2 $3 $4 $5", &["a", "b"]), "a b   ");
        assert_eq!(sub("$0", &["a", "b"]), "");
        assert_eq!(sub("[$99999999999999999999999]", &["a"]), "[]");
    }

    #[test]
    fn multi_digit_numbers_are_greedy() {
        let args: Vec<String> = (0..15).map(|i| format!("val{i}")).collect();
        assert_eq!(substitute_args("$10 $12 $15", &args), "val9 val11 val14");
        // $10 with fewer than ten args is missing, not "$1" + "0".
        assert_eq!(sub("$10", &["a"]), "");
        assert_eq!(sub("$01", &["a"]), "a");
    }

    #[test]
    fn adjacent_text() {
        assert_eq!(sub("$1abc", &["x"]), "xabc");
        assert_eq!(sub("$1$2", &["a", "b"]), "ab");
        assert_eq!(sub("$1.5", &["a"]), "a.5");
        assert_eq!(sub("pre$ARGUMENTS", &["a", "b"]), "prea b");
        assert_eq!(sub("pre$@", &["a", "b"]), "prea b");
        assert_eq!(sub("$ARGUMENTSX", &["a"]), "aX");
        assert_eq!(sub("$@@", &["a"]), "a@");
    }

    #[test]
    fn non_matching_dollars_stay_literal() {
        assert_eq!(sub("$A $$ $ $ARGS", &["a"]), "$A $$ $ $ARGS");
        assert_eq!(
            sub("$arguments $Arguments $ARGUMENTS", &["a", "b"]),
            "$arguments $Arguments a b"
        );
        assert_eq!(sub("cost: $", &["a"]), "cost: $");
        assert_eq!(sub("$", &[]), "$");
        // No escape: `$$1` is a literal `$` then the first argument.
        assert_eq!(sub("$$1", &["x"]), "$x");
        // A backslash does not escape either.
        assert_eq!(sub("Price: \\$100", &[]), "Price: \\");
    }

    #[test]
    fn unsupported_braced_forms_stay_literal() {
        assert_eq!(sub("${1}", &["a"]), "${1}");
        assert_eq!(sub("${@}", &["a"]), "${@}");
        assert_eq!(sub("${ARGUMENTS}", &["a"]), "${ARGUMENTS}");
        assert_eq!(sub("${HOME}", &["a"]), "${HOME}");
        assert_eq!(sub("${1-d}", &["a"]), "${1-d}");
        assert_eq!(sub("${@:}", &["a"]), "${@:}");
        assert_eq!(sub("${@:x}", &["a"]), "${@:x}");
        assert_eq!(sub("${@:1:}", &["a"]), "${@:1:}");
        assert_eq!(sub("${@:1:2:3}", &["a"]), "${@:1:2:3}");
        assert_eq!(sub("${@:-1}", &[]), "1"); // an all-args default, not a negative slice
                                              // Unclosed: the `$` is literal, but a later placeholder still expands.
        assert_eq!(sub("${1:-open $1", &["a"]), "${1:-open a");
    }

    #[test]
    fn unicode_and_whitespace_in_values() {
        assert_eq!(
            sub("$ARGUMENTS", &["日本語", "🎉", "café"]),
            "日本語 🎉 café"
        );
        assert_eq!(
            sub("$1 $2", &["line1\nline2", "tab\tthere"]),
            "line1\nline2 tab\tthere"
        );
        assert_eq!(sub("é$1ü", &["ß"]), "éßü");
        assert_eq!(sub("$ARGUMENTS", &["a", "", "c"]), "a  c");
        assert_eq!(
            sub("$ARGUMENTS", &["  leading  ", "trailing  "]),
            "  leading   trailing  "
        );
        assert_eq!(
            sub("Prefix $ARGUMENTS suffix", &["ARGUMENTS"]),
            "Prefix ARGUMENTS suffix"
        );
        assert_eq!(
            sub("$1 $2: $ARGUMENTS", &["arg100", "@user"]),
            "arg100 @user: arg100 @user"
        );
    }

    #[test]
    fn plain_text_and_long_lists() {
        assert_eq!(sub("Just plain text", &["a", "b"]), "Just plain text");
        assert_eq!(sub("", &["a"]), "");
        let args: Vec<String> = (0..100).map(|i| format!("arg{i}")).collect();
        assert_eq!(substitute_args("$ARGUMENTS", &args), args.join(" "));
    }

    // ---- ${N:-default} ------------------------------------------------------------------

    #[test]
    fn positional_defaults() {
        assert_eq!(sub("${1:-main}", &[]), "main");
        assert_eq!(sub("${1:-main}", &["dev"]), "dev");
        assert_eq!(sub("${2:-none}", &["a"]), "none");
        assert_eq!(sub("${1:-main}", &[""]), "main"); // empty counts as missing
        assert_eq!(sub("${1:-}", &[]), "");
        assert_eq!(sub("${1:-}", &["x"]), "x");
        assert_eq!(sub("${0:-zero}", &["a"]), "zero");
        assert_eq!(sub("${10:-ten}", &["a"]), "ten");
        assert_eq!(sub("x${1:-d}y", &[]), "xdy");
    }

    #[test]
    fn defaults_are_literal_text() {
        assert_eq!(sub("${1:-the default value}", &[]), "the default value");
        assert_eq!(sub("${1:- padded }", &[]), " padded ");
        assert_eq!(sub("${1:-a:-b}", &[]), "a:-b");
        assert_eq!(sub("${1:-line\nbreak}", &[]), "line\nbreak");
        // Not rescanned: a `$2` or `$@` in a default stays as written.
        assert_eq!(sub("${1:-$2}", &["", "b"]), "$2");
        assert_eq!(sub("${1:-$@}", &[]), "$@");
        // The default ends at the first `}`.
        assert_eq!(sub("${1:-{x}}", &[]), "{x}");
        assert_eq!(sub("${1:-a}b}", &[]), "ab}");
    }

    #[test]
    fn all_args_defaults() {
        assert_eq!(sub("${@:-everything}", &[]), "everything");
        assert_eq!(sub("${@:-everything}", &["a", "b"]), "a b");
        assert_eq!(sub("${ARGUMENTS:-all}", &[]), "all");
        assert_eq!(sub("${ARGUMENTS:-all}", &["x"]), "x");
        assert_eq!(sub("${@:-}", &[]), "");
        assert_eq!(sub("${@:-d}", &["$1"]), "$1");
        assert_eq!(sub("${@:-lint the repo}", &[]), "lint the repo");
    }

    // ---- ${@:N} and ${@:N:L} ------------------------------------------------------------

    #[test]
    fn slices_from_index() {
        assert_eq!(sub("${@:2}", &["a", "b", "c", "d"]), "b c d");
        assert_eq!(sub("${@:1}", &["a", "b", "c"]), "a b c");
        assert_eq!(sub("${@:3}", &["a", "b", "c", "d"]), "c d");
        assert_eq!(sub("${@:0}", &["a", "b", "c"]), "a b c");
    }

    #[test]
    fn slices_with_length() {
        assert_eq!(sub("${@:2:2}", &["a", "b", "c", "d"]), "b c");
        assert_eq!(sub("${@:1:1}", &["a", "b", "c"]), "a");
        assert_eq!(sub("${@:3:1}", &["a", "b", "c", "d"]), "c");
        assert_eq!(sub("${@:2:3}", &["a", "b", "c", "d", "e"]), "b c d");
        assert_eq!(sub("${@:0:2}", &["a", "b", "c"]), "a b");
    }

    #[test]
    fn slices_out_of_range() {
        assert_eq!(sub("${@:99}", &["a", "b"]), "");
        assert_eq!(sub("${@:5}", &["a", "b"]), "");
        assert_eq!(sub("${@:10:5}", &["a", "b"]), "");
        assert_eq!(sub("${@:2:0}", &["a", "b", "c"]), "");
        assert_eq!(sub("${@:1:0}", &["a", "b"]), "");
        assert_eq!(sub("${@:2:99}", &["a", "b", "c"]), "b c");
        assert_eq!(sub("${@:1:10}", &["a", "b"]), "a b");
        assert_eq!(sub("${@:2}", &[]), "");
        assert_eq!(sub("${@:1}", &[]), "");
        assert_eq!(sub("${@:1}", &["only"]), "only");
        assert_eq!(sub("${@:2}", &["only"]), "");
        assert_eq!(sub("${@:99999999999999999999999}", &["a"]), "");
        assert_eq!(sub("${@:1:99999999999999999999999}", &["a", "b"]), "a b");
        let args: Vec<String> = (1..=10).map(|i| format!("arg{i}")).collect();
        assert_eq!(
            substitute_args("${@:5:100}", &args),
            "arg5 arg6 arg7 arg8 arg9 arg10"
        );
    }

    #[test]
    fn slices_mixed_with_other_forms() {
        assert_eq!(sub("${@:2} vs $@", &["a", "b", "c"]), "b c vs a b c");
        assert_eq!(
            sub("First: ${@:1:1}, All: $@", &["x", "y", "z"]),
            "First: x, All: x y z"
        );
        assert_eq!(
            sub("$1: ${@:2}", &["cmd", "arg1", "arg2"]),
            "cmd: arg1 arg2"
        );
        assert_eq!(sub("$1 $2 ${@:3}", &["a", "b", "c", "d"]), "a b c d");
        assert_eq!(
            sub("Process ${@:2} with $1", &["tool", "file1", "file2"]),
            "Process file1 file2 with tool"
        );
        assert_eq!(sub("${@:1:1} and ${@:2}", &["a", "b", "c"]), "a and b c");
        assert_eq!(
            sub("${@:1:2} vs ${@:3:2}", &["a", "b", "c", "d", "e"]),
            "a b vs c d"
        );
        assert_eq!(
            sub("prefix${@:2}suffix", &["a", "b", "c"]),
            "prefixb csuffix"
        );
        assert_eq!(
            sub(
                "Run $1 on ${@:2:2}, then process $@",
                &["eslint", "file1.ts", "file2.ts", "file3.ts"]
            ),
            "Run eslint on file1.ts file2.ts, then process eslint file1.ts file2.ts file3.ts"
        );
    }

    #[test]
    fn slices_do_not_recurse() {
        assert_eq!(sub("${@:1}", &["${@:2}", "test"]), "${@:2} test");
        assert_eq!(sub("${@:2}", &["a", "${@:3}", "c"]), "${@:3} c");
        assert_eq!(
            sub("${@:2}", &["cmd", "$100", "@user", "#tag"]),
            "$100 @user #tag"
        );
        assert_eq!(
            sub("${@:2}", &["cmd", "first arg", "second arg"]),
            "first arg second arg"
        );
        assert_eq!(sub("${@:1}", &["日本語", "🎉", "café"]), "日本語 🎉 café");
    }

    // ---- argument splitting -------------------------------------------------------------

    #[test]
    fn splits_on_whitespace() {
        assert_eq!(parse("a b c"), ["a", "b", "c"]);
        assert_eq!(parse("a  b   c"), ["a", "b", "c"]);
        assert_eq!(parse("a\tb\tc"), ["a", "b", "c"]);
        assert_eq!(parse("a\nb"), ["a", "b"]);
        assert_eq!(parse("   a b c   "), ["a", "b", "c"]);
        assert_eq!(parse("a\u{a0}b\u{feff}c"), ["a", "b", "c"]);
        assert!(parse("").is_empty());
        assert!(parse("   ").is_empty());
    }

    #[test]
    fn quotes_group_and_are_removed() {
        assert_eq!(parse("\"first arg\" second"), ["first arg", "second"]);
        assert_eq!(parse("'first arg' second"), ["first arg", "second"]);
        assert_eq!(
            parse("\"double\" 'single' \"double again\""),
            ["double", "single", "double again"]
        );
        assert_eq!(parse("\"it's\" 'say \"hi\"'"), ["it's", "say \"hi\""]);
        assert_eq!(parse("a\"b c\"d"), ["ab cd"]);
        assert_eq!(parse("\"line1\nline2\" second"), ["line1\nline2", "second"]);
    }

    #[test]
    fn quote_edge_cases() {
        // Empty tokens are dropped, even quoted ones.
        assert_eq!(parse("\"\" \" \""), [" "]);
        assert_eq!(parse("a '' b"), ["a", "b"]);
        // No escapes: the backslash is literal and the quote still closes.
        assert_eq!(parse("\"quoted \\\"text\\\"\""), ["quoted \\text\\"]);
        assert_eq!(parse("a\\ b"), ["a\\", "b"]);
        // An unterminated quote runs to the end.
        assert_eq!(parse("one \"two three"), ["one", "two three"]);
    }

    #[test]
    fn splits_specials_and_unicode() {
        assert_eq!(parse("$100 @user #tag"), ["$100", "@user", "#tag"]);
        assert_eq!(parse("日本語 🎉 café"), ["日本語", "🎉", "café"]);
    }

    #[test]
    fn split_then_substitute() {
        let args = parse("Button \"onClick handler\" \"disabled support\"");
        assert_eq!(
            substitute_args("Create component $1 with features: $ARGUMENTS", &args),
            "Create component Button with features: Button onClick handler disabled support"
        );
        let args = parse("feature1 feature2 feature3");
        assert_eq!(
            substitute_args("Implement: $@", &args),
            substitute_args("Implement: $ARGUMENTS", &args)
        );
        let args = parse("'' main");
        assert_eq!(substitute_args("${1:-x} ${2:-y}", &args), "main y");
    }
}
