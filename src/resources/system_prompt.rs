//! Builds the system prompt as pi 1.6 does, so the same model behaves the same: named
//! sections in the order `preamble`, `tools`, `rules`, `docs`, `addendum`, `project_context`,
//! `skills`, `cwd`, then `mcp_servers` (where pi 1.6's MCP extension adds it) and any a hook
//! adds. Each section but the preamble is wrapped in `<name>` tags; the prompt is the wrapped
//! sections joined by a blank line. A custom prompt (`--system-prompt`, SYSTEM.md) is the
//! preamble and takes the place of `tools`, `rules` and `docs`.
//!
//! The prompt is kept as named sections ([`SystemPrompt`]) so hooks can read them
//! (`prompt.get`) and replace, add or remove one by name (`before_agent_start`'s
//! `system_prompt_options`) without rewriting the rest. Hooks read and write a section's
//! content; the tags are pi's, added when the prompt is rendered. The names are part of the
//! hook protocol.

use std::path::Path;

/// One active tool as the prompt describes it.
#[derive(Debug, Clone, Default)]
pub struct PromptTool {
    pub name: String,
    pub snippet: Option<String>,
    pub guidelines: Vec<String>,
}

/// Inputs of the prompt. Context files, skills, the docs and the MCP summary are pre-rendered
/// section contents so the loaders that produce them stay independent of this builder.
#[derive(Debug, Clone, Default)]
pub struct PromptOptions {
    pub custom_prompt: Option<String>,
    pub append: Vec<String>,
    /// The tools declared to the model, in the order they are declared.
    pub tools: Vec<PromptTool>,
    /// Where pi's documentation is (`super::prompt_docs`), when it is on disk.
    pub docs: Option<String>,
    /// The MCP servers' summary, when servers are configured.
    pub mcp_servers: Option<String>,
    pub project_context: Option<String>,
    pub skills_block: Option<String>,
    pub cwd: String,
}

const PREAMBLE: &str = "You are a coding assistant running inside pi, a coding agent harness. \
Help users inspect files, run commands, and modify code.";

/// The section names, in the order the prompt has them.
pub mod names {
    /// The default identity, or the custom prompt (`--system-prompt` / SYSTEM.md). Never
    /// wrapped in tags, and not editable by name.
    pub const PREAMBLE: &str = "preamble";
    pub const TOOLS: &str = "tools";
    pub const RULES: &str = "rules";
    pub const DOCS: &str = "docs";
    /// `--append-system-prompt` values, else APPEND_SYSTEM.md.
    pub const ADDENDUM: &str = "addendum";
    pub const PROJECT_CONTEXT: &str = "project_context";
    pub const SKILLS: &str = "skills";
    pub const CWD: &str = "cwd";
    /// The MCP servers' summary (see `crate::mcp::prompt_section`), pi 1.6's MCP section name.
    pub const MCP_SERVERS: &str = "mcp_servers";
}

/// A section edit pi refuses, as pi 1.6 refuses such a custom section.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SectionError {
    #[error(
        "invalid system prompt section name {0:?}: a name is lowercase letters, digits, `_` \
         and `-`, and starts with a letter"
    )]
    InvalidName(String),
    #[error(
        "the system prompt section `preamble` cannot be edited by name; return a whole \
         `system_prompt` to replace the prompt"
    )]
    Preamble,
}

/// Whether `name` may name a section a hook edits: `^[a-z][a-z0-9_-]*$`, not `preamble`.
pub fn check_section_name(name: &str) -> Result<(), SectionError> {
    if name == names::PREAMBLE {
        return Err(SectionError::Preamble);
    }
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    let rest_ok =
        chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    if first_ok && rest_ok {
        Ok(())
    } else {
        Err(SectionError::InvalidName(name.to_string()))
    }
}

/// One named part of the prompt: its content, without the tags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub text: String,
}

impl Section {
    /// The section as the model reads it: `<name>\n…\n</name>`, the preamble as it is.
    pub fn rendered(&self) -> String {
        if self.name == names::PREAMBLE {
            self.text.clone()
        } else {
            format!("<{0}>\n{1}\n</{0}>", self.name, self.text)
        }
    }
}

/// The system prompt as named sections, and its text: the rendered sections joined by a
/// blank line. Empty sections are left out, so every listed section shows in the text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SystemPrompt {
    sections: Vec<Section>,
    text: String,
}

impl SystemPrompt {
    pub fn from_sections(sections: impl IntoIterator<Item = (String, String)>) -> Self {
        let sections: Vec<Section> = sections
            .into_iter()
            .filter(|(_, text)| !text.is_empty())
            .map(|(name, text)| Section { name, text })
            .collect();
        let text = sections
            .iter()
            .map(Section::rendered)
            .collect::<Vec<_>>()
            .join("\n\n");
        SystemPrompt { sections, text }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn sections(&self) -> &[Section] {
        &self.sections
    }

    /// Applies edits by name, in order: `Some(text)` replaces a section's content in place or
    /// adds a new section at the end, `None` removes it (a name the prompt lacks is no change).
    /// An empty text removes the section too, as an empty section is never listed. A name
    /// [`check_section_name`] refuses fails the whole edit, which then changes nothing.
    pub fn edit(
        &mut self,
        edits: impl IntoIterator<Item = (String, Option<String>)>,
    ) -> Result<(), SectionError> {
        let edits: Vec<(String, Option<String>)> = edits.into_iter().collect();
        for (name, _) in &edits {
            check_section_name(name)?;
        }
        let mut sections: Vec<(String, String)> =
            self.sections.drain(..).map(|s| (s.name, s.text)).collect();
        for (name, text) in edits {
            let at = sections.iter().position(|(n, _)| *n == name);
            match (at, text) {
                (Some(i), Some(t)) => sections[i].1 = t,
                (None, Some(t)) => sections.push((name, t)),
                (Some(i), None) => {
                    sections.remove(i);
                }
                (None, None) => {}
            }
        }
        *self = SystemPrompt::from_sections(sections);
        Ok(())
    }
}

impl From<&str> for SystemPrompt {
    /// A prompt given whole (tests, a front end's own): the preamble alone.
    fn from(text: &str) -> Self {
        SystemPrompt::from_sections([(names::PREAMBLE.to_string(), text.to_string())])
    }
}

pub fn build(opts: &PromptOptions) -> SystemPrompt {
    let mut parts: Vec<(String, String)> = Vec::new();
    let mut push = |name: &str, text: String| parts.push((name.to_string(), text));
    match opts.custom_prompt.as_deref().filter(|c| !c.is_empty()) {
        Some(custom) => push(names::PREAMBLE, custom.to_string()),
        None => {
            push(names::PREAMBLE, PREAMBLE.to_string());
            push(names::TOOLS, tools_section(&opts.tools));
            push(names::RULES, rules_section(&opts.tools));
            if let Some(docs) = &opts.docs {
                push(names::DOCS, docs.clone());
            }
        }
    }
    // As pi 1.6: every non-empty piece, as written, a blank line between them.
    let append: Vec<&str> = opts
        .append
        .iter()
        .map(String::as_str)
        .filter(|a| !a.is_empty())
        .collect();
    push(names::ADDENDUM, append.join("\n\n"));
    if let Some(ctx) = &opts.project_context {
        push(names::PROJECT_CONTEXT, ctx.clone());
    }
    // The caller renders the block only when a tool can load skills (read, else bash).
    if let Some(skills) = &opts.skills_block {
        push(names::SKILLS, skills.trim().to_string());
    }
    push(names::CWD, opts.cwd.replace('\\', "/"));
    if let Some(mcp) = &opts.mcp_servers {
        push(names::MCP_SERVERS, mcp.clone());
    }
    SystemPrompt::from_sections(parts)
}

/// A tool's snippet on one line, as pi 1.6 normalises it; `None` when nothing is left.
fn one_line(snippet: &str) -> Option<String> {
    let line = snippet.split_whitespace().collect::<Vec<_>>().join(" ");
    (!line.is_empty()).then_some(line)
}

fn tools_section(tools: &[PromptTool]) -> String {
    let lines: Vec<String> = tools
        .iter()
        .filter_map(|t| {
            let snippet = one_line(t.snippet.as_deref()?)?;
            Some(format!("- {}: {snippet}", t.name))
        })
        .collect();
    let list = if lines.is_empty() {
        "(none)".to_string()
    } else {
        lines.join("\n")
    };
    format!("{list}\n\nAdditional tools may be available.")
}

/// The rules: the file-operations hint when only a shell can list and search, each declared
/// tool's guidelines in tool order, then pi's two; trimmed, each once.
fn rules_section(tools: &[PromptTool]) -> String {
    let has = |n: &str| tools.iter().any(|t| t.name == n);
    let shell_only = has("bash") && !has("grep") && !has("find") && !has("ls");
    let hint = shell_only.then_some("Use bash for file operations like ls, rg, find");
    let guidelines = tools
        .iter()
        .flat_map(|t| t.guidelines.iter().map(String::as_str));
    let closing = [
        "Be concise in your responses",
        "Show file paths clearly when working with files",
    ];
    let mut seen = std::collections::HashSet::new();
    hint.into_iter()
        .chain(guidelines)
        .chain(closing)
        .map(str::trim)
        .filter(|r| !r.is_empty() && seen.insert(*r))
        .map(|r| format!("- {r}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `--system-prompt` / `--append-system-prompt` values: the contents of a file if the value
/// names one, else the text itself (as pi).
pub fn text_or_file(value: &str, cwd: &Path) -> String {
    let p = cwd.join(value);
    if value.len() < 4096 && p.is_file() {
        if let Ok(s) = std::fs::read_to_string(&p) {
            return s.strip_prefix('\u{feff}').map(String::from).unwrap_or(s);
        }
    }
    value.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, snippet: &str, g: &[&str]) -> PromptTool {
        PromptTool {
            name: name.into(),
            snippet: Some(snippet.into()),
            guidelines: g.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn names_of(p: &SystemPrompt) -> Vec<&str> {
        p.sections().iter().map(|s| s.name.as_str()).collect()
    }

    #[test]
    fn default_prompt_is_pi_1_6s_sections_wrapped_in_tags() {
        let prompt = build(&PromptOptions {
            tools: vec![
                tool(
                    "read",
                    "Read file contents",
                    &["Use read to examine files."],
                ),
                tool(
                    "bash",
                    "Run\n  commands ",
                    &[" Use read to examine files. "],
                ),
            ],
            append: vec!["EXTRA\n".into()],
            cwd: "C:\\proj".into(),
            ..Default::default()
        });
        assert_eq!(
            prompt.text(),
            "You are a coding assistant running inside pi, a coding agent harness. Help users \
             inspect files, run commands, and modify code.\n\n\
             <tools>\n- read: Read file contents\n- bash: Run commands\n\n\
             Additional tools may be available.\n</tools>\n\n\
             <rules>\n- Use bash for file operations like ls, rg, find\n\
             - Use read to examine files.\n- Be concise in your responses\n\
             - Show file paths clearly when working with files\n</rules>\n\n\
             <addendum>\nEXTRA\n\n</addendum>\n\n<cwd>\nC:/proj\n</cwd>"
        );
    }

    #[test]
    fn custom_prompt_is_the_preamble_in_place_of_tools_rules_and_docs() {
        let prompt = build(&PromptOptions {
            custom_prompt: Some("Be a pirate.\n".into()),
            tools: vec![tool("read", "Read", &[])],
            docs: Some("DOCS".into()),
            cwd: "/x".into(),
            ..Default::default()
        });
        assert_eq!(prompt.text(), "Be a pirate.\n\n\n<cwd>\n/x\n</cwd>");
        assert_eq!(names_of(&prompt), ["preamble", "cwd"]);
    }

    #[test]
    fn no_tools_says_none() {
        let p = build(&PromptOptions::default());
        assert!(p
            .text()
            .contains("<tools>\n(none)\n\nAdditional tools may be available.\n</tools>"));
    }

    #[test]
    fn sections_are_named_in_order_and_make_the_text() {
        let p = build(&PromptOptions {
            append: vec!["A1".into(), String::new(), "A2".into()],
            docs: Some("DOCS".into()),
            mcp_servers: Some("MCP".into()),
            project_context: Some("CTX".into()),
            skills_block: Some("\n\nSKILLS".into()),
            cwd: "/p".into(),
            ..Default::default()
        });
        assert_eq!(
            names_of(&p),
            [
                "preamble",
                "tools",
                "rules",
                "docs",
                "addendum",
                "project_context",
                "skills",
                "cwd",
                "mcp_servers"
            ]
        );
        assert_eq!(p.sections()[4].text, "A1\n\nA2");
        assert_eq!(p.sections()[6].text, "SKILLS");
        let joined: Vec<String> = p.sections().iter().map(Section::rendered).collect();
        assert_eq!(p.text(), joined.join("\n\n"));
    }

    #[test]
    fn edits_replace_add_and_remove_by_name() {
        let mut p = build(&PromptOptions {
            cwd: "/p".into(),
            ..Default::default()
        });
        p.edit([
            ("rules".to_string(), Some("- Review only.".to_string())),
            ("house_rules".to_string(), Some("Never push.".to_string())),
            ("tools".to_string(), None),
            ("nonexistent".to_string(), None),
        ])
        .unwrap();
        assert_eq!(names_of(&p), ["preamble", "rules", "cwd", "house_rules"]);
        assert!(p
            .text()
            .contains("\n\n<rules>\n- Review only.\n</rules>\n\n"));
        assert!(p
            .text()
            .ends_with("<cwd>\n/p\n</cwd>\n\n<house_rules>\nNever push.\n</house_rules>"));
    }

    #[test]
    fn a_bad_section_name_is_refused_and_changes_nothing() {
        let mut p = build(&PromptOptions::default());
        let before = p.clone();
        for bad in ["House", "1st", "", "a b", "ünï", "-x"] {
            let err = p
                .edit([
                    ("fine".to_string(), Some("x".to_string())),
                    (bad.to_string(), Some("y".to_string())),
                ])
                .unwrap_err();
            assert_eq!(err, SectionError::InvalidName(bad.to_string()));
            assert!(err
                .to_string()
                .contains("invalid system prompt section name"));
        }
        let err = p
            .edit([("preamble".to_string(), Some("x".to_string()))])
            .unwrap_err();
        assert_eq!(err, SectionError::Preamble);
        assert_eq!(p, before);
        for good in ["a", "house_rules", "x-1"] {
            assert_eq!(check_section_name(good), Ok(()));
        }
    }
}
