//! Syntax highlighting for code in the terminal: which language a fence or a file name means,
//! and syntect token colours turned into `Style`s. Loading the syntax definitions takes tens of
//! milliseconds, so it never happens on the first-paint path: the set is loaded once, lazily,
//! on the first code block that must be highlighted (`OnceLock`), or earlier by [`warm`] on a
//! background thread. Callers that render provisional lines (a streaming tail) ask for a
//! highlighter with `wait = false` and get plain code until the set is there; lines that go to
//! scrollback once ask with `wait = true`. Syntaxes are two-face's (syntect's defaults plus
//! TypeScript, TOML, Dockerfile and the other bat syntaxes, in the set built for the pure-Rust
//! fancy-regex engine, so no C library is needed).

use std::sync::{Arc, OnceLock};

use crossterm::style::Color;
use syntect::highlighting::{FontStyle, HighlightState, Highlighter, Theme as SyntectTheme};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};

use super::text::Style;
use super::theme::Theme;

struct Assets {
    syntaxes: SyntaxSet,
}

static ASSETS: OnceLock<Assets> = OnceLock::new();

fn load() -> Assets {
    Assets {
        syntaxes: two_face::syntax::extra_newlines(),
    }
}

fn assets(wait: bool) -> Option<&'static Assets> {
    if wait {
        Some(ASSETS.get_or_init(load))
    } else {
        ASSETS.get()
    }
}

/// Load the syntax definitions now (idempotent, blocking). The app calls this on a background
/// thread right after first paint so the first code block does not wait for it. (The colours
/// are the pi theme's `syntax*` tokens: [`Theme::syntax`].)
pub fn warm() {
    let _ = assets(true);
}

/// Whether [`warm`] (or a first code block) has loaded the syntax definitions.
pub fn is_warm() -> bool {
    ASSETS.get().is_some()
}

/// Fence tokens people (and models) write that are neither a syntax's name nor one of its file
/// extensions.
const ALIASES: &[(&str, &str)] = &[
    ("shell", "bash"),
    ("console", "bash"),
    ("shellscript", "bash"),
    ("shell-session", "bash"),
    ("zsh", "bash"),
    ("c++", "cpp"),
    ("golang", "go"),
    ("py3", "python"),
    ("python3", "python"),
    ("jsonc", "json"),
    ("json5", "json"),
    ("rs", "rust"),
    ("ts", "typescript"),
    ("dockerfile", "Dockerfile"),
    ("docker", "Dockerfile"),
    ("objc", "Objective-C"),
];

/// Tokens that explicitly mean "no highlighting".
const PLAIN: &[&str] = &["text", "txt", "plain", "plaintext", "output", "none"];

fn find_syntax<'a>(set: &'a SyntaxSet, lang: &str) -> Option<&'a SyntaxReference> {
    let lang = lang.trim();
    if lang.is_empty() || PLAIN.iter().any(|p| p.eq_ignore_ascii_case(lang)) {
        return None;
    }
    let lower = lang.to_ascii_lowercase();
    let token = ALIASES
        .iter()
        .find(|(alias, _)| *alias == lower)
        .map_or(lang, |(_, to)| *to);
    set.find_syntax_by_token(token)
        .or_else(|| set.find_syntax_by_extension(&lower))
}

/// File names without a telling extension, mapped to the fence token for their language.
const FILE_NAMES: &[(&str, &str)] = &[
    ("makefile", "make"),
    ("gnumakefile", "make"),
    ("dockerfile", "dockerfile"),
    ("containerfile", "dockerfile"),
    ("cmakelists.txt", "cmake"),
    ("gemfile", "ruby"),
    ("rakefile", "ruby"),
    ("vagrantfile", "ruby"),
    (".bashrc", "bash"),
    (".bash_profile", "bash"),
    (".profile", "bash"),
    (".zshrc", "bash"),
    ("pkgbuild", "bash"),
];

/// Extensions whose fence token differs from the extension itself.
const EXTENSIONS: &[(&str, &str)] = &[
    ("rs", "rust"),
    ("py", "python"),
    ("pyi", "python"),
    ("js", "javascript"),
    ("mjs", "javascript"),
    ("cjs", "javascript"),
    ("ts", "typescript"),
    ("mts", "typescript"),
    ("cts", "typescript"),
    ("rb", "ruby"),
    ("sh", "bash"),
    ("zsh", "bash"),
    ("yml", "yaml"),
    ("md", "markdown"),
    ("markdown", "markdown"),
    ("h", "c"),
    ("hpp", "cpp"),
    ("cc", "cpp"),
    ("cxx", "cpp"),
    ("kt", "kotlin"),
    ("cs", "cs"),
    ("htm", "html"),
];

/// The fence token for a file's language, by its name or extension (`src/main.rs` → `rust`),
/// for previews of files the agent reads. Unknown extensions are returned as they are, since a
/// token no syntax knows just renders as plain code; a name without extension that is not a
/// well-known build file has no language. Never loads the syntax definitions.
pub fn language_for_path(path: &str) -> Option<String> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let lower = name.to_ascii_lowercase();
    if let Some((_, lang)) = FILE_NAMES.iter().find(|(n, _)| *n == lower) {
        return Some((*lang).to_string());
    }
    let (stem, ext) = lower.rsplit_once('.')?;
    if stem.is_empty() || ext.is_empty() {
        return None;
    }
    let lang = EXTENSIONS
        .iter()
        .find(|(e, _)| *e == ext)
        .map_or(ext, |(_, l)| *l);
    Some(lang.to_string())
}

fn convert(style: syntect::highlighting::Style) -> Style {
    let c = style.foreground;
    // bat's convention, which the pi theme's syntax colours follow (`Theme::syntax`): alpha 0
    // means "palette index r", alpha 1 "the terminal's default".
    let mut out = Style::plain();
    out.fg = match c.a {
        0 => Some(Color::AnsiValue(c.r)),
        1 => None,
        _ => Some(Color::Rgb {
            r: c.r,
            g: c.g,
            b: c.b,
        }),
    };
    out.bold = style.font_style.contains(FontStyle::BOLD);
    out.italic = style.font_style.contains(FontStyle::ITALIC);
    out.underline = style.font_style.contains(FontStyle::UNDERLINE);
    out
}

struct Active {
    parse: ParseState,
    highlight: HighlightState,
    theme: Arc<SyntectTheme>,
}

impl Clone for Active {
    fn clone(&self) -> Self {
        Active {
            parse: self.parse.clone(),
            highlight: self.highlight.clone(),
            theme: self.theme.clone(),
        }
    }
}

/// Highlights one code block line by line, carrying syntect's state from line to line (a line's
/// colours depend only on the lines before it, which is what lets a streaming code block print
/// its finished lines once). Without a known language, without colour (`NO_COLOR`), or before
/// the definitions are loaded when the caller would not wait, every line comes back unstyled.
#[derive(Clone)]
pub struct CodeHighlighter {
    active: Option<Active>,
    bytes: u64,
}

impl CodeHighlighter {
    pub fn new(lang: Option<&str>, theme: &Theme, wait: bool) -> CodeHighlighter {
        let active = (|| {
            if !theme.color {
                return None;
            }
            let lang = lang?;
            let assets = assets(wait)?;
            let syntax = find_syntax(&assets.syntaxes, lang)?;
            let theme = theme.syntax.clone();
            let highlighter = Highlighter::new(&theme);
            Some(Active {
                parse: ParseState::new(syntax),
                highlight: HighlightState::new(&highlighter, ScopeStack::new()),
                theme,
            })
        })();
        CodeHighlighter { active, bytes: 0 }
    }

    /// A highlighter that never colours (indented code, unknown language).
    pub fn plain() -> CodeHighlighter {
        CodeHighlighter {
            active: None,
            bytes: 0,
        }
    }

    pub fn is_active(&self) -> bool {
        self.active.is_some()
    }

    /// Bytes handed to syntect so far: a cost meter for tests.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The styled pieces of one line (`line` has no newline). Pieces carry only colours and
    /// font styles; the caller patches them onto its code style.
    pub fn line(&mut self, line: &str) -> Vec<(Style, String)> {
        let Some(active) = self.active.as_mut() else {
            return vec![(Style::plain(), line.to_string())];
        };
        let Some(assets) = ASSETS.get() else {
            return vec![(Style::plain(), line.to_string())];
        };
        // The "newlines" syntax set expects each line with its terminator.
        let mut owned = String::with_capacity(line.len() + 1);
        owned.push_str(line);
        owned.push('\n');
        self.bytes += owned.len() as u64;
        let ops = match active.parse.parse_line(&owned, &assets.syntaxes) {
            Ok(ops) => ops,
            Err(_) => {
                // A grammar that fails mid-block: the rest of the block is plain, not lost.
                self.active = None;
                return vec![(Style::plain(), line.to_string())];
            }
        };
        let highlighter = Highlighter::new(&active.theme);
        let pieces = syntect::highlighting::HighlightIterator::new(
            &mut active.highlight,
            &ops,
            &owned,
            &highlighter,
        );
        let mut out: Vec<(Style, String)> = Vec::new();
        for (style, text) in pieces {
            let text = text.strip_suffix('\n').unwrap_or(text);
            if text.is_empty() {
                continue;
            }
            out.push((convert(style), text.to_string()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::theme::ThemeName;

    #[test]
    fn language_for_path_maps_extensions_and_build_files() {
        assert_eq!(language_for_path("src/main.rs").as_deref(), Some("rust"));
        assert_eq!(language_for_path("a/b/App.TSX").as_deref(), Some("tsx"));
        assert_eq!(language_for_path("Makefile").as_deref(), Some("make"));
        assert_eq!(
            language_for_path("x/Dockerfile").as_deref(),
            Some("dockerfile")
        );
        assert_eq!(language_for_path("C:\\w\\x.py").as_deref(), Some("python"));
        assert_eq!(language_for_path("README"), None);
        assert_eq!(language_for_path(".gitignore"), None);
        assert_eq!(language_for_path("trailing."), None);
    }

    #[test]
    fn known_languages_get_colours_and_unknown_ones_stay_plain() {
        let theme = Theme::new(ThemeName::Dark, true);
        let mut rust = CodeHighlighter::new(Some("rust"), &theme, true);
        assert!(rust.is_active());
        let pieces = rust.line("fn main() { let x = 1; }");
        assert!(pieces.len() > 1, "{pieces:?}");
        assert!(pieces.iter().any(|(s, _)| s.fg.is_some()));
        let text: String = pieces.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(text, "fn main() { let x = 1; }");
        for lang in ["toml", "typescript", "ts", "shell", "Python", "dockerfile"] {
            assert!(
                CodeHighlighter::new(Some(lang), &theme, true).is_active(),
                "{lang}"
            );
        }
        assert!(!CodeHighlighter::new(Some("no-such-lang"), &theme, true).is_active());
        assert!(!CodeHighlighter::new(Some("text"), &theme, true).is_active());
        assert!(!CodeHighlighter::new(None, &theme, true).is_active());
    }

    #[test]
    fn no_color_theme_never_highlights() {
        let theme = Theme::new(ThemeName::Dark, false);
        let mut h = CodeHighlighter::new(Some("rust"), &theme, true);
        assert!(!h.is_active());
        assert!(h.line("fn main() {}").iter().all(|(s, _)| s.fg.is_none()));
    }

    #[test]
    fn light_theme_is_found_too() {
        let theme = Theme::new(ThemeName::Light, true);
        assert!(CodeHighlighter::new(Some("rust"), &theme, true).is_active());
    }

    #[test]
    fn state_carries_across_lines_of_a_block_comment() {
        let theme = Theme::new(ThemeName::Dark, true);
        let mut h = CodeHighlighter::new(Some("c"), &theme, true);
        let code_style = h.line("int x;")[0].0;
        h.line("/* open");
        let inside = h.line("int y;");
        // Inside the comment the whole line has the comment's style, not the keyword's.
        assert_eq!(inside.len(), 1, "{inside:?}");
        assert_ne!(inside[0].0, code_style);
    }
}
