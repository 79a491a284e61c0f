//! Prompt templates: markdown files that become `/name` commands (pi's `prompt-templates.ts`).
//!
//! Discovery reads each given directory non-recursively (a `.md` file may also be given
//! directly), in the caller's precedence order, and the first template of a name wins; later
//! ones are reported as collisions. Expansion replaces a `/name args…` input with the
//! template body, arguments substituted by the grammar in [`args`].

mod args;
mod frontmatter;

use std::fs;
use std::path::{Path, PathBuf};

pub use args::{parse_command_args, substitute_args};
pub use frontmatter::FrontmatterError;

/// Where a template directory came from: shown next to the command, and decides whether a
/// missing directory is worth a diagnostic (the default locations usually do not exist).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `~/.pi/agent/prompts`.
    User,
    /// `.pi/prompts` of a trusted project.
    Project,
    /// A package's `prompts/` or `pi.prompts`.
    Package,
    /// The `prompts` setting.
    Settings,
    /// `--prompt-template`.
    Cli,
    /// Contributed by a hook through `resources_discover`.
    Hook,
}

impl Origin {
    fn is_default_location(self) -> bool {
        matches!(self, Origin::User | Origin::Project)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// The command name, without the slash: the file name minus `.md`.
    pub name: String,
    pub description: String,
    pub argument_hint: Option<String>,
    /// The text after the frontmatter, trimmed when there was frontmatter.
    pub body: String,
    pub path: PathBuf,
    pub origin: Origin,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiagnosticKind {
    Warning,
    Error,
    Collision,
}

/// A problem found during discovery, for the caller to show; nothing here prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub kind: DiagnosticKind,
    pub message: String,
    pub path: PathBuf,
    /// For a collision: the template that was kept.
    pub winner: Option<PathBuf>,
}

/// The description used when frontmatter has none: the first non-blank body line, cut to this
/// many characters with `...` appended.
const DESCRIPTION_FALLBACK_CHARS: usize = 60;

/// Loads the templates of `sources` in order; the first of each name wins.
pub fn discover_templates(sources: &[(PathBuf, Origin)]) -> (Vec<Template>, Vec<Diagnostic>) {
    let mut templates: Vec<Template> = Vec::new();
    let mut diagnostics = Vec::new();
    for (path, origin) in sources {
        for t in load_source(path, *origin, &mut diagnostics) {
            match templates.iter().find(|w| w.name == t.name) {
                Some(winner) => diagnostics.push(Diagnostic {
                    kind: DiagnosticKind::Collision,
                    message: format!("name \"/{}\" collision", t.name),
                    path: t.path,
                    winner: Some(winner.path.clone()),
                }),
                None => templates.push(t),
            }
        }
    }
    (templates, diagnostics)
}

fn load_source(path: &Path, origin: Origin, diagnostics: &mut Vec<Diagnostic>) -> Vec<Template> {
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(_) if origin.is_default_location() => return Vec::new(),
        Err(_) => {
            diagnostics.push(diagnostic(
                DiagnosticKind::Error,
                "Prompt template path does not exist".into(),
                path,
            ));
            return Vec::new();
        }
    };
    if meta.is_file() {
        return if is_markdown(path) {
            load_file(path, origin, diagnostics).into_iter().collect()
        } else {
            diagnostics.push(diagnostic(
                DiagnosticKind::Warning,
                "Prompt template path is not a .md file".into(),
                path,
            ));
            Vec::new()
        };
    }
    let entries = match fs::read_dir(path) {
        Ok(entries) => entries,
        Err(e) => {
            diagnostics.push(diagnostic(
                DiagnosticKind::Warning,
                format!(
                    "Failed to load prompt templates from directory {}: {e}",
                    path.display()
                ),
                path,
            ));
            return Vec::new();
        }
    };
    // Sorted so the winner of a same-directory question never depends on directory order.
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        // `metadata` follows symlinks: a link to a file counts, a broken link is skipped.
        .filter(|p| is_markdown(p) && fs::metadata(p).is_ok_and(|m| m.is_file()))
        .collect();
    files.sort();
    files
        .iter()
        .filter_map(|f| load_file(f, origin, diagnostics))
        .collect()
}

fn is_markdown(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".md"))
}

fn load_file(path: &Path, origin: Origin, diagnostics: &mut Vec<Diagnostic>) -> Option<Template> {
    let loaded = fs::read(path).map_err(|e| e.to_string()).and_then(|bytes| {
        frontmatter::parse(&String::from_utf8_lossy(&bytes)).map_err(|e| e.to_string())
    });
    let parsed = match loaded {
        Ok(parsed) => parsed,
        Err(e) => {
            diagnostics.push(diagnostic(
                DiagnosticKind::Warning,
                format!(
                    "Failed to load prompt template file {}: {e}",
                    path.display()
                ),
                path,
            ));
            return None;
        }
    };
    let file_name = path.file_name()?.to_string_lossy();
    let name = file_name
        .strip_suffix(".md")
        .unwrap_or(&file_name)
        .to_string();
    let description = match parsed.fields.get("description") {
        Some(d) if !d.is_empty() => d.clone(),
        _ => fallback_description(&parsed.body),
    };
    let argument_hint = parsed
        .fields
        .get("argument-hint")
        .filter(|h| !h.is_empty())
        .cloned();
    Some(Template {
        name,
        description,
        argument_hint,
        body: parsed.body,
        path: path.to_path_buf(),
        origin,
    })
}

/// The first non-blank line, untrimmed as pi leaves it, cut to 60 characters plus `...`.
fn fallback_description(body: &str) -> String {
    let Some(line) = body.split('\n').find(|l| !l.trim().is_empty()) else {
        return String::new();
    };
    if line.chars().count() <= DESCRIPTION_FALLBACK_CHARS {
        return line.to_string();
    }
    let cut: String = line.chars().take(DESCRIPTION_FALLBACK_CHARS).collect();
    format!("{cut}...")
}

fn diagnostic(kind: DiagnosticKind, message: String, path: &Path) -> Diagnostic {
    Diagnostic {
        kind,
        message,
        path: path.to_path_buf(),
        winner: None,
    }
}

/// The expansion of `text` if it is `/name` or `/name args…` for a known template, else `None`
/// (the caller then sends the text as typed). The name runs to the first whitespace.
pub fn expand_template(text: &str, templates: &[Template]) -> Option<String> {
    let rest = text.strip_prefix('/')?;
    let name_end = rest.find(args::is_js_space).unwrap_or(rest.len());
    let (name, args_text) = rest.split_at(name_end);
    if name.is_empty() {
        return None;
    }
    let template = templates.iter().find(|t| t.name == name)?;
    Some(substitute_args(
        &template.body,
        &parse_command_args(args_text),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tempfile::TempDir;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        fs::create_dir_all(dir).unwrap();
        let p = dir.join(name);
        fs::write(&p, text).unwrap();
        p
    }

    fn one(dir: &Path) -> (Vec<Template>, Vec<Diagnostic>) {
        discover_templates(&[(dir.to_path_buf(), Origin::User)])
    }

    fn template(name: &str, body: &str) -> Template {
        Template {
            name: name.into(),
            description: String::new(),
            argument_hint: None,
            body: body.into(),
            path: PathBuf::from(format!("/t/{name}.md")),
            origin: Origin::User,
        }
    }

    #[test]
    fn reads_frontmatter_description_and_argument_hint() {
        let tmp = TempDir::new().unwrap();
        write(
            tmp.path(),
            "review.md",
            "---\ndescription: Code review\nargument-hint: \"[file | #PR | PR-URL]\"\n---\nReview the code for $1",
        );
        write(
            tmp.path(),
            "ship.md",
            "---\ndescription: Ship current work\n---\nShip it",
        );
        let (ts, diags) = one(tmp.path());
        assert!(diags.is_empty());
        let names: Vec<&str> = ts.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["review", "ship"]);
        assert_eq!(ts[0].description, "Code review");
        assert_eq!(
            ts[0].argument_hint.as_deref(),
            Some("[file | #PR | PR-URL]")
        );
        assert_eq!(ts[0].body, "Review the code for $1");
        assert_eq!(ts[0].path, tmp.path().join("review.md"));
        assert_eq!(ts[1].argument_hint, None);
    }

    #[test]
    fn description_falls_back_to_first_line() {
        let tmp = TempDir::new().unwrap();
        write(tmp.path(), "a.md", "\n\n  First line here\nsecond");
        write(tmp.path(), "b.md", &format!("{}\n", "x".repeat(61)));
        write(tmp.path(), "c.md", &"y".repeat(60));
        write(tmp.path(), "d.md", "---\ndescription: \"\"\n---\nfrom body");
        write(tmp.path(), "e.md", "");
        write(tmp.path(), "f.md", &"é".repeat(70));
        let (ts, _) = one(tmp.path());
        let d: Vec<&str> = ts.iter().map(|t| t.description.as_str()).collect();
        assert_eq!(d[0], "  First line here");
        assert_eq!(d[1], format!("{}...", "x".repeat(60)));
        assert_eq!(d[2], "y".repeat(60));
        assert_eq!(d[3], "from body");
        assert_eq!(d[4], "");
        assert_eq!(d[5], format!("{}...", "é".repeat(60)));
    }

    #[test]
    fn non_recursive_md_only_and_symlinks_followed() {
        let tmp = TempDir::new().unwrap();
        let dir = tmp.path().join("prompts");
        write(&dir, "top.md", "top");
        write(&dir, "notes.txt", "no");
        write(&dir, "UPPER.MD", "no");
        write(&dir.join("sub"), "deep.md", "no");
        fs::create_dir_all(dir.join("dir.md")).unwrap();
        let target = write(tmp.path(), "elsewhere.md", "linked");
        std::os::unix::fs::symlink(&target, dir.join("link.md")).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("missing"), dir.join("broken.md")).unwrap();
        let (ts, diags) = one(&dir);
        let names: Vec<&str> = ts.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["link", "top"]);
        assert_eq!(ts[0].body, "linked");
        assert!(diags.is_empty());
    }

    #[test]
    fn first_wins_on_collision_with_a_diagnostic() {
        let tmp = TempDir::new().unwrap();
        let user = tmp.path().join("user");
        let project = tmp.path().join("project");
        write(&user, "fix.md", "user fix");
        write(&project, "fix.md", "project fix");
        write(&project, "other.md", "other");
        let (ts, diags) = discover_templates(&[
            (user.clone(), Origin::User),
            (project.clone(), Origin::Project),
        ]);
        assert_eq!(ts.len(), 2);
        assert_eq!(ts[0].body, "user fix");
        assert_eq!(ts[1].origin, Origin::Project);
        assert_eq!(
            diags,
            vec![Diagnostic {
                kind: DiagnosticKind::Collision,
                message: "name \"/fix\" collision".into(),
                path: project.join("fix.md"),
                winner: Some(user.join("fix.md")),
            }]
        );
    }

    #[test]
    fn explicit_files_and_missing_paths() {
        let tmp = TempDir::new().unwrap();
        let file = write(tmp.path(), "one.md", "single");
        let txt = write(tmp.path(), "one.txt", "nope");
        let (ts, diags) = discover_templates(&[
            (tmp.path().join("no-such-user-dir"), Origin::User),
            (tmp.path().join("no-such-project-dir"), Origin::Project),
            (file.clone(), Origin::Cli),
            (tmp.path().join("gone"), Origin::Cli),
            (txt, Origin::Settings),
        ]);
        assert_eq!(ts.len(), 1);
        assert_eq!(ts[0].name, "one");
        assert_eq!(ts[0].origin, Origin::Cli);
        let kinds: Vec<DiagnosticKind> = diags.iter().map(|d| d.kind).collect();
        assert_eq!(kinds, [DiagnosticKind::Error, DiagnosticKind::Warning]);
        assert_eq!(diags[0].path, tmp.path().join("gone"));
    }

    #[test]
    fn bad_frontmatter_skips_the_template_with_a_warning() {
        let tmp = TempDir::new().unwrap();
        write(tmp.path(), "bad.md", "---\ndescription: \"open\n---\nbody");
        write(tmp.path(), "good.md", "body");
        let (ts, diags) = one(tmp.path());
        assert_eq!(ts.len(), 1);
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].kind, DiagnosticKind::Warning);
        assert!(diags[0].message.contains("bad.md"), "{}", diags[0].message);
    }

    #[test]
    fn body_without_frontmatter_is_kept_verbatim() {
        let tmp = TempDir::new().unwrap();
        write(tmp.path(), "raw.md", "\u{feff}  indented\r\nline\n");
        let (ts, _) = one(tmp.path());
        assert_eq!(ts[0].body, "  indented\nline\n");
    }

    #[test]
    fn expands_name_and_arguments() {
        let ts = vec![
            template("review", "Review $1 for ${2:-bugs}: $@"),
            template("plain", "No args."),
        ];
        assert_eq!(
            expand_template("/review src/main.rs", &ts).unwrap(),
            "Review src/main.rs for bugs: src/main.rs"
        );
        assert_eq!(
            expand_template("/review \"a b\" style", &ts).unwrap(),
            "Review a b for style: a b style"
        );
        assert_eq!(expand_template("/plain", &ts).unwrap(), "No args.");
        assert_eq!(
            expand_template("/plain ignored args", &ts).unwrap(),
            "No args."
        );
        assert_eq!(
            expand_template("/review\n$1 multi\nline", &ts).unwrap(),
            "Review $1 for multi: $1 multi line"
        );
    }

    #[test]
    fn non_template_input_is_not_expanded() {
        let ts = vec![template("review", "R")];
        assert_eq!(expand_template("review", &ts), None);
        assert_eq!(expand_template(" /review", &ts), None);
        assert_eq!(expand_template("/", &ts), None);
        assert_eq!(expand_template("/ review", &ts), None);
        assert_eq!(expand_template("/unknown x", &ts), None);
        assert_eq!(expand_template("/reviewer", &ts), None);
        assert_eq!(expand_template("/home/user/file.txt", &ts), None);
    }

    #[test]
    fn expansion_is_not_recursive() {
        let ts = vec![template("a", "A:$1"), template("b", "/a $1")];
        assert_eq!(expand_template("/b x", &ts).unwrap(), "/a x");
        assert_eq!(expand_template("/a /b", &ts).unwrap(), "A:/b");
    }
}
