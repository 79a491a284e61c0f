//! The small pieces every part of the page is made of: escaped text, long output folded after
//! its first lines, images as `data:` URIs, skill invocations. Each writes straight to the
//! output, so a large text is escaped on its way out instead of being copied first.

use std::io::{self, Write};

use super::escape::write_escaped;
use super::view::{Block, ImageView};

pub(crate) type Out<'w> = &'w mut dyn Write;

/// Writes `s` escaped.
pub(crate) fn esc(w: Out<'_>, s: &str) -> io::Result<()> {
    write_escaped(w, s)
}

/// A paragraph of message text, as written (whitespace and line breaks kept).
pub(crate) fn text(w: Out<'_>, s: &str) -> io::Result<()> {
    if s.trim().is_empty() {
        return Ok(());
    }
    w.write_all(b"<div class=\"text\">")?;
    esc(w, s)?;
    w.write_all(b"</div>\n")
}

/// `<pre>` with `s`. The parser drops a line feed right after `<pre>`, so one is written
/// first: a text that starts with an empty line keeps it.
pub(crate) fn pre(w: Out<'_>, s: &str) -> io::Result<()> {
    w.write_all(b"<pre>\n")?;
    esc(w, s)?;
    w.write_all(b"</pre>")
}

/// A note about what is (not) shown: `[image omitted: …]`, `(cancelled)`.
pub(crate) fn note(w: Out<'_>, s: &str) -> io::Result<()> {
    w.write_all(b"<div class=\"note\">")?;
    esc(w, s)?;
    w.write_all(b"</div>\n")
}

/// Tool output: the first `shown` lines, the rest folded under "… N more lines" (no copy is
/// made; the text is written once either way).
pub(crate) fn output(w: Out<'_>, s: &str, shown: usize, is_error: bool) -> io::Result<()> {
    let s = s.trim_end();
    if s.is_empty() {
        return Ok(());
    }
    w.write_all(if is_error {
        b"<div class=\"output error\">"
    } else {
        b"<div class=\"output\">"
    })?;
    match split_after_lines(s, shown) {
        (head, None) => pre(w, head)?,
        (head, Some(rest)) => {
            pre(w, head)?;
            let more = rest.matches('\n').count() + 1;
            write!(
                w,
                "<details><summary>… {more} more line{}</summary>",
                if more == 1 { "" } else { "s" }
            )?;
            pre(w, rest)?;
            w.write_all(b"</details>")?;
        }
    }
    w.write_all(b"</div>\n")
}

/// The first `n` lines of `s`, and the rest when there is more.
pub(crate) fn split_after_lines(s: &str, n: usize) -> (&str, Option<&str>) {
    match s.match_indices('\n').nth(n.saturating_sub(1)) {
        Some((i, _)) if n > 0 => (&s[..i], Some(&s[i + 1..])),
        _ => (s, None),
    }
}

/// The images among `blocks`, each as a `data:` URI; nothing when there are none.
pub(crate) fn images(w: Out<'_>, blocks: &[Block<'_>]) -> io::Result<()> {
    let mut imgs = blocks.iter().filter_map(|b| match b {
        Block::Image(i) => Some(i),
        _ => None,
    });
    let Some(first) = imgs.next() else {
        return Ok(());
    };
    w.write_all(b"<div class=\"images\">")?;
    image(w, first)?;
    for i in imgs {
        image(w, i)?;
    }
    w.write_all(b"</div>\n")
}

/// One image, embedded. Only an `image/…` type and base64 data go into the URI, so neither
/// can end the attribute or point the browser anywhere else; anything else is left out with
/// a note saying why.
pub(crate) fn image(w: Out<'_>, img: &ImageView<'_>) -> io::Result<()> {
    if !is_image_type(img.mime_type) {
        return note(
            w,
            &format!("[image omitted: {:?} is not an image type]", img.mime_type),
        );
    }
    if !is_base64(img.data) {
        return note(w, "[image omitted: its data is not base64]");
    }
    write!(
        w,
        "<img alt=\"{} image\" src=\"data:{};base64,",
        img.mime_type, img.mime_type
    )?;
    w.write_all(img.data.as_bytes())?;
    w.write_all(b"\">")
}

/// `image/png`, `image/svg+xml`: `image/` and a subtype of letters, digits and `.+-`.
pub(crate) fn is_image_type(t: &str) -> bool {
    t.strip_prefix("image/").is_some_and(|sub| {
        !sub.is_empty()
            && sub
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-'))
    })
}

/// Standard base64 (padding included); empty data is not an image.
pub(crate) fn is_base64(data: &str) -> bool {
    !data.is_empty()
        && data
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
}

/// A user message that invoked a skill: pi sends the skill's text in a `<skill …>` block
/// before what the user typed.
#[derive(Debug, PartialEq)]
pub(crate) struct SkillBlock<'a> {
    pub name: &'a str,
    pub body: &'a str,
    pub user_text: &'a str,
}

/// Reads `<skill name="N" location="L">\nBODY\n</skill>` and what follows it (pi's format).
pub(crate) fn skill_block(s: &str) -> Option<SkillBlock<'_>> {
    let rest = s.strip_prefix("<skill name=\"")?;
    let (name, rest) = rest.split_once('"')?;
    let rest = rest.strip_prefix(" location=\"")?;
    let (_location, rest) = rest.split_once('"')?;
    let rest = rest.strip_prefix(">\n")?;
    let (body, after) = rest.split_once("\n</skill>")?;
    let user_text = match after {
        "" => "",
        a => a.strip_prefix("\n\n")?.trim(),
    };
    (!name.is_empty()).then_some(SkillBlock {
        name,
        body,
        user_text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(f: impl FnOnce(Out<'_>) -> io::Result<()>) -> String {
        let mut out = Vec::new();
        f(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn long_output_folds_after_the_first_lines_and_keeps_every_line() {
        assert_eq!(split_after_lines("a\nb\nc", 2), ("a\nb", Some("c")));
        assert_eq!(split_after_lines("a\nb", 2), ("a\nb", None));
        assert_eq!(split_after_lines("a\nb\n", 2), ("a\nb", Some("")));
        let html = render(|w| output(w, "1\n2\n3\n4\n", 2, false));
        assert_eq!(
            html,
            "<div class=\"output\"><pre>\n1\n2</pre><details><summary>… 2 more lines</summary>\
             <pre>\n3\n4</pre></details></div>\n"
        );
        assert_eq!(
            render(|w| output(w, "<b>\n", 5, true)),
            "<div class=\"output error\"><pre>\n&lt;b&gt;</pre></div>\n"
        );
        assert_eq!(render(|w| output(w, " \n", 5, false)), "");
    }

    #[test]
    fn images_embed_only_image_types_and_base64_data() {
        let ok = ImageView {
            data: "iVBORw0KGgo=",
            mime_type: "image/png",
        };
        assert_eq!(
            render(|w| image(w, &ok)),
            "<img alt=\"image/png image\" src=\"data:image/png;base64,iVBORw0KGgo=\">"
        );
        let hostile_type = ImageView {
            data: "AAAA",
            mime_type: "text/html\" onerror=\"alert(1)",
        };
        let html = render(|w| image(w, &hostile_type));
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains("[image omitted: &quot;text/html\\&quot; onerror="),
            "{html}"
        );
        let hostile_data = ImageView {
            data: "AAAA\" onload=\"x",
            mime_type: "image/png",
        };
        assert_eq!(
            render(|w| image(w, &hostile_data)),
            "<div class=\"note\">[image omitted: its data is not base64]</div>\n"
        );
        assert!(is_image_type("image/svg+xml"));
        assert!(!is_image_type("image/"));
        assert!(!is_image_type("application/javascript"));
    }

    #[test]
    fn skill_blocks_are_read_in_pis_format() {
        let s = "<skill name=\"review\" location=\"/s/review/SKILL.md\">\nReferences are relative.\n\n# Steps\n</skill>\n\nPlease review.";
        assert_eq!(
            skill_block(s),
            Some(SkillBlock {
                name: "review",
                body: "References are relative.\n\n# Steps",
                user_text: "Please review."
            })
        );
        let bare = "<skill name=\"a\" location=\"b\">\nbody\n</skill>";
        assert_eq!(skill_block(bare).map(|b| b.user_text), Some(""));
        assert_eq!(skill_block("<skill name=\"a\">\nbody\n</skill>"), None);
        assert_eq!(skill_block("plain text"), None);
    }
}
