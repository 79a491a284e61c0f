//! The skills index of the system prompt (pi 1.6's `formatSkillsForPrompt`, seeds part 4):
//! three intro lines, then `<available_skills>` with each model-visible skill's name, description
//! and file location, XML-escaped. Only metadata goes in; the model reads a body on demand.
//! Whether the block is included at all depends on the active tools ([`SkillReader::pick`]),
//! which is the prompt builder's decision.

use super::SkillSet;

/// The tool the model should use to load a skill file; it changes one intro line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillReader {
    Read,
    Bash,
    /// `read` or `bash` is there but hidden from the model: reachable through another tool,
    /// so the skills stay but the line names no tool.
    Indirect,
}

impl SkillReader {
    /// `read` if declared, else `bash`; else, when one of them is registered but hidden,
    /// [`SkillReader::Indirect`]; with neither, pi adds no skills index.
    pub fn pick<S: AsRef<str>, H: AsRef<str>>(declared: &[S], hidden: &[H]) -> Option<Self> {
        let has = |list: &[S], n: &str| list.iter().any(|t| t.as_ref() == n);
        if has(declared, "read") {
            Some(SkillReader::Read)
        } else if has(declared, "bash") {
            Some(SkillReader::Bash)
        } else if hidden
            .iter()
            .any(|t| t.as_ref() == "read" || t.as_ref() == "bash")
        {
            Some(SkillReader::Indirect)
        } else {
            None
        }
    }
}

/// The block for a session with the `read` tool; `None` when no skill is visible to the model.
pub fn prompt_block(set: &SkillSet) -> Option<String> {
    prompt_block_for(set, SkillReader::Read)
}

/// The block with the intro line for `reader`. pi prefixes it with a blank line; this returns
/// it without, since the prompt builder joins sections with blank lines itself.
pub fn prompt_block_for(set: &SkillSet, reader: SkillReader) -> Option<String> {
    let mut visible = set.visible().peekable();
    visible.peek()?;
    let how = match reader {
        SkillReader::Read => {
            "Use the read tool to load a skill's file when the task matches its description."
        }
        SkillReader::Bash => {
            "Use bash to load a skill's file when the task matches its description."
        }
        SkillReader::Indirect => "Load a skill's file when the task matches its description.",
    };
    let mut lines = vec![
        "The following skills provide specialized instructions for specific tasks.".to_string(),
        how.to_string(),
        "Resolve relative paths against the skill's directory (parent of SKILL.md). Use \
         absolute paths in tool calls."
            .to_string(),
        String::new(),
        "<available_skills>".to_string(),
    ];
    for skill in visible {
        lines.push("  <skill>".to_string());
        lines.push(format!("    <name>{}</name>", escape_xml(&skill.name)));
        lines.push(format!(
            "    <description>{}</description>",
            escape_xml(&skill.description)
        ));
        lines.push(format!(
            "    <location>{}</location>",
            escape_xml(&skill.file_path.to_string_lossy())
        ));
        lines.push("  </skill>".to_string());
    }
    lines.push("</available_skills>".to_string());
    Some(lines.join("\n"))
}

/// Escapes the five XML special characters, `&` first so nothing is escaped twice.
pub fn escape_xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{Skill, SkillOrigin};
    use super::*;
    use std::path::PathBuf;

    fn skill(name: &str, description: &str, hidden: bool) -> Skill {
        Skill {
            name: name.into(),
            description: description.into(),
            file_path: PathBuf::from(format!("/s/{name}/SKILL.md")),
            base_dir: PathBuf::from(format!("/s/{name}")),
            origin: SkillOrigin::User,
            disable_model_invocation: hidden,
        }
    }

    #[test]
    fn block_lists_visible_skills_escaped() {
        let set = SkillSet {
            skills: vec![
                skill("a", "Use <when> \"x\" & 'y'", false),
                skill("hidden", "never shown", true),
            ],
            diagnostics: vec![],
        };
        let block = prompt_block(&set).unwrap();
        assert_eq!(
            block,
            "The following skills provide specialized instructions for specific tasks.\n\
             Use the read tool to load a skill's file when the task matches its description.\n\
             Resolve relative paths against the skill's directory (parent of SKILL.md). Use \
             absolute paths in tool calls.\n\
             \n\
             <available_skills>\n  <skill>\n    <name>a</name>\n    \
             <description>Use &lt;when&gt; &quot;x&quot; &amp; &apos;y&apos;</description>\n    \
             <location>/s/a/SKILL.md</location>\n  </skill>\n</available_skills>"
        );
        let bash = prompt_block_for(&set, SkillReader::Bash).unwrap();
        assert!(bash.contains(
            "\nUse bash to load a skill's file when the task matches its description.\n"
        ));
        let indirect = prompt_block_for(&set, SkillReader::Indirect).unwrap();
        assert!(indirect.contains("\nLoad a skill's file when the task matches its description.\n"));
    }

    #[test]
    fn no_visible_skill_means_no_block() {
        let set = SkillSet {
            skills: vec![skill("hidden", "d", true)],
            diagnostics: vec![],
        };
        assert_eq!(prompt_block(&set), None);
        assert_eq!(prompt_block(&SkillSet::default()), None);
    }

    #[test]
    fn reader_prefers_read_then_bash_then_a_hidden_one() {
        let none: [&str; 0] = [];
        assert_eq!(
            SkillReader::pick(&["bash", "read"], &none),
            Some(SkillReader::Read)
        );
        assert_eq!(
            SkillReader::pick(&["bash"], &["read"]),
            Some(SkillReader::Bash)
        );
        assert_eq!(
            SkillReader::pick(&["edit"], &["read"]),
            Some(SkillReader::Indirect)
        );
        assert_eq!(SkillReader::pick(&["edit"], &["grep"]), None);
        assert_eq!(SkillReader::pick(&["edit"], &none), None);
    }
}
