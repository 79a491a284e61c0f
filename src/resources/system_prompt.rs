//! Builds the system prompt in pi's section order: identity, `Available tools:` with each
//! active tool's snippet, the note about other custom tools, `Guidelines:`, appended text,
//! project context, skills, and the working directory. A custom prompt (`--system-prompt`)
//! replaces the first four sections and keeps the rest.

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
    pub tools: Vec<PromptTool>,
    pub project_context: Option<String>,
    pub skills_block: Option<String>,
    pub cwd: String,
}

const IDENTITY: &str =
    "You are an expert coding assistant operating inside pi, a coding agent harness. \
You help users by reading files, executing commands, editing code, and writing new files.";

pub fn build(opts: &PromptOptions) -> String {
    let mut parts: Vec<String> = Vec::new();
    match &opts.custom_prompt {
        Some(custom) => parts.push(custom.trim_end().to_string()),
        None => {
            parts.push(IDENTITY.to_string());
            parts.push(tools_section(&opts.tools));
            parts.push(
                "In addition to the tools above, you may have access to other custom tools depending on the project."
                    .to_string(),
            );
            parts.push(guidelines_section(&opts.tools));
        }
    }
    for a in &opts.append {
        if !a.trim().is_empty() {
            parts.push(a.trim_end().to_string());
        }
    }
    if let Some(ctx) = &opts.project_context {
        parts.push(ctx.trim_end().to_string());
    }
    // The caller renders the block only when a tool can load skills (read, else bash).
    if let Some(skills) = &opts.skills_block {
        parts.push(skills.trim_end().to_string());
    }
    parts.push(format!("Current working directory: {}", opts.cwd));
    parts.join("\n\n")
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
        let p = build(&PromptOptions {
            tools: vec![
                tool("read", "Read file contents", &["Use read to examine files"]),
                tool("bash", "Run commands", &["Use read to examine files"]),
            ],
            append: vec!["EXTRA".into()],
            cwd: "/proj".into(),
            ..Default::default()
        });
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
        let p = build(&PromptOptions {
            custom_prompt: Some("Be a pirate.".into()),
            tools: vec![tool("read", "Read", &[])],
            cwd: "/x".into(),
            ..Default::default()
        });
        assert!(p.starts_with("Be a pirate."));
        assert!(!p.contains("Available tools"));
        assert!(p.contains("Current working directory: /x"));
    }

    #[test]
    fn no_tools_says_none() {
        let p = build(&PromptOptions::default());
        assert!(p.contains("Available tools:\n(none)"));
    }
}
