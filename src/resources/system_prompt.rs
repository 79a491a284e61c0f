//! Builds the system prompt in pi's section order: identity, `Available tools:` with each
//! active tool's snippet, the note about other custom tools, `Guidelines:`, appended text,
//! project context, skills, and the working directory. A custom prompt (`--system-prompt`)
//! replaces the first four sections and keeps the rest.
//!
//! The prompt is kept as named sections ([`SystemPrompt`]) so hooks can read them
//! (`prompt.get`) and replace, add or remove one by name (`before_agent_start`'s
//! `system_prompt_options`) without rewriting the rest; the names are part of the hook
//! protocol and stay stable.

use std::path::Path;

/// One active tool as the prompt describes it.
#[derive(Debug, Clone, Default)]
pub struct PromptTool {
    pub name: String,
    pub snippet: Option<String>,
    pub guidelines: Vec<String>,
}

/// Inputs of the prompt. Context files and skills are pre-rendered blocks so the resource
/// loaders that produce them stay independent of this builder.
#[derive(Debug, Clone, Default)]
pub struct PromptOptions {
    pub custom_prompt: Option<String>,
    pub append: Vec<String>,
    /// The MCP servers' summary, when servers are configured.
    pub mcp_servers: Option<String>,
    pub tools: Vec<PromptTool>,
    pub project_context: Option<String>,
    pub skills_block: Option<String>,
    pub cwd: String,
}

const IDENTITY: &str =
    "You are an expert coding assistant operating inside pi, a coding agent harness. \
You help users by reading files, executing commands, editing code, and writing new files.";

/// The section names, in the order the prompt has them.
pub mod names {
    pub const IDENTITY: &str = "identity";
    pub const TOOLS: &str = "tools";
    pub const CUSTOM_TOOLS: &str = "custom_tools";
    pub const GUIDELINES: &str = "guidelines";
    /// `--system-prompt` / SYSTEM.md, in place of the four above.
    pub const CUSTOM_PROMPT: &str = "custom_prompt";
    /// `--append-system-prompt` values and APPEND_SYSTEM.md.
    pub const APPEND: &str = "append_system_prompt";
    /// The MCP servers' summary (see `crate::mcp::prompt_section`).
    pub const MCP_SERVERS: &str = "mcp_servers";
    pub const PROJECT_CONTEXT: &str = "project_context";
    pub const SKILLS: &str = "skills";
    pub const CWD: &str = "cwd";
}

/// One named part of the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub text: String,
}

/// The system prompt as named sections, and its text: the sections' texts joined by a blank
/// line. Empty sections are left out, so every listed section shows in the text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SystemPrompt {
    sections: Vec<Section>,
    text: String,
}

impl SystemPrompt {
    pub fn from_sections(sections: impl IntoIterator<Item = (String, String)>) -> Self {
        let sections: Vec<Section> = sections
            .into_iter()
            .filter(|(_, text)| !text.trim().is_empty())
            .map(|(name, text)| Section { name, text })
            .collect();
        let text = sections
            .iter()
            .map(|s| s.text.as_str())
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

    /// Applies edits by name, in order: `Some(text)` replaces a section in place or adds a
    /// new one at the end, `None` removes it (a name the prompt lacks is no change). An empty
    /// text removes the section too, as an empty section is never listed.
    pub fn edit(&mut self, edits: impl IntoIterator<Item = (String, Option<String>)>) {
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
    }
}

impl From<&str> for SystemPrompt {
    /// A prompt given whole (tests, a front end's own): one `custom_prompt` section.
    fn from(text: &str) -> Self {
        SystemPrompt::from_sections([(names::CUSTOM_PROMPT.to_string(), text.to_string())])
    }
}

pub fn build(opts: &PromptOptions) -> SystemPrompt {
    let mut parts: Vec<(String, String)> = Vec::new();
    let mut push = |name: &str, text: String| parts.push((name.to_string(), text));
    match &opts.custom_prompt {
        Some(custom) => push(names::CUSTOM_PROMPT, custom.trim_end().to_string()),
        None => {
            push(names::IDENTITY, IDENTITY.to_string());
            push(names::TOOLS, tools_section(&opts.tools));
            push(
                names::CUSTOM_TOOLS,
                "In addition to the tools above, you may have access to other custom tools depending on the project."
                    .to_string(),
            );
            push(names::GUIDELINES, guidelines_section(&opts.tools));
        }
    }
    let append: Vec<&str> = opts
        .append
        .iter()
        .filter(|a| !a.trim().is_empty())
        .map(|a| a.trim_end())
        .collect();
    push(names::APPEND, append.join("\n\n"));
    if let Some(mcp) = &opts.mcp_servers {
        push(names::MCP_SERVERS, mcp.trim_end().to_string());
    }
    if let Some(ctx) = &opts.project_context {
        push(names::PROJECT_CONTEXT, ctx.trim_end().to_string());
    }
    // The caller renders the block only when a tool can load skills (read, else bash).
    if let Some(skills) = &opts.skills_block {
        push(names::SKILLS, skills.trim_end().to_string());
    }
    push(
        names::CWD,
        format!("Current working directory: {}", opts.cwd),
    );
    SystemPrompt::from_sections(parts)
}

fn tools_section(tools: &[PromptTool]) -> String {
    let lines: Vec<String> = tools
        .iter()
        .filter_map(|t| t.snippet.as_ref().map(|s| format!("- {}: {}", t.name, s)))
        .collect();
    if lines.is_empty() {
        "Available tools:\n(none)".to_string()
    } else {
        format!("Available tools:\n{}", lines.join("\n"))
    }
}

fn guidelines_section(tools: &[PromptTool]) -> String {
    let has = |n: &str| tools.iter().any(|t| t.name == n);
    let mut lines: Vec<String> = Vec::new();
    if has("bash") && !has("grep") && !has("find") && !has("ls") {
        lines.push("Use bash for file operations like ls, rg, find".to_string());
    }
    for t in tools {
        for g in &t.guidelines {
            if !lines.contains(g) {
                lines.push(g.clone());
            }
        }
    }
    lines.push("Be concise in your responses".to_string());
    lines.push("Show file paths clearly when working with files".to_string());
    let body: Vec<String> = lines.into_iter().map(|l| format!("- {l}")).collect();
    format!("Guidelines:\n{}", body.join("\n"))
}

/// `--system-prompt` / `--append-system-prompt` values: the contents of a file if the value
/// names one, else the text itself (as pi).
pub fn text_or_file(value: &str, cwd: &Path) -> String {
    let p = cwd.join(value);
    if value.len() < 4096 && p.is_file() {
        if let Ok(s) = std::fs::read_to_string(&p) {
            return s;
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

    #[test]
    fn default_prompt_lists_tools_and_guidelines_in_order() {
        let prompt = build(&PromptOptions {
            tools: vec![
                tool("read", "Read file contents", &["Use read to examine files"]),
                tool("bash", "Run commands", &["Use read to examine files"]),
            ],
            append: vec!["EXTRA".into()],
            cwd: "/proj".into(),
            ..Default::default()
        });
        let p = prompt.text();
        let i_tools = p
            .find("Available tools:\n- read: Read file contents\n- bash: Run commands")
            .unwrap();
        let i_guide = p.find("Guidelines:").unwrap();
        let i_extra = p.find("EXTRA").unwrap();
        assert!(i_tools < i_guide && i_guide < i_extra);
        assert!(p.contains("- Use bash for file operations like ls, rg, find"));
        assert_eq!(p.matches("Use read to examine files").count(), 1);
        assert!(p.ends_with("Current working directory: /proj"));
    }

    #[test]
    fn custom_prompt_replaces_identity_tools_and_guidelines() {
        let prompt = build(&PromptOptions {
            custom_prompt: Some("Be a pirate.".into()),
            tools: vec![tool("read", "Read", &[])],
            cwd: "/x".into(),
            ..Default::default()
        });
        let p = prompt.text();
        assert!(p.starts_with("Be a pirate."));
        assert!(!p.contains("Available tools"));
        assert!(p.contains("Current working directory: /x"));
    }

    #[test]
    fn no_tools_says_none() {
        let p = build(&PromptOptions::default());
        assert!(p.text().contains("Available tools:\n(none)"));
    }

    #[test]
    fn sections_are_named_in_order_and_make_the_text() {
        let p = build(&PromptOptions {
            append: vec!["A1".into(), "  ".into(), "A2\n".into()],
            mcp_servers: Some("MCP".into()),
            project_context: Some("CTX".into()),
            cwd: "/p".into(),
            ..Default::default()
        });
        let names: Vec<&str> = p.sections().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "identity",
                "tools",
                "custom_tools",
                "guidelines",
                "append_system_prompt",
                "mcp_servers",
                "project_context",
                "cwd"
            ]
        );
        assert_eq!(p.sections()[4].text, "A1\n\nA2");
        let joined: Vec<&str> = p.sections().iter().map(|s| s.text.as_str()).collect();
        assert_eq!(p.text(), joined.join("\n\n"));
    }

    #[test]
    fn edits_replace_add_and_remove_by_name() {
        let mut p = build(&PromptOptions {
            cwd: "/p".into(),
            ..Default::default()
        });
        p.edit([
            (
                "identity".to_string(),
                Some("You are a reviewer.".to_string()),
            ),
            ("house_rules".to_string(), Some("Never push.".to_string())),
            ("custom_tools".to_string(), None),
            ("nonexistent".to_string(), None),
        ]);
        let names: Vec<&str> = p.sections().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            ["identity", "tools", "guidelines", "cwd", "house_rules"]
        );
        assert!(p
            .text()
            .starts_with("You are a reviewer.\n\nAvailable tools:"));
        assert!(p
            .text()
            .ends_with("Current working directory: /p\n\nNever push."));
    }
}
