//! `/skill:name args` (pi's `_expandSkillCommand`, seeds part 5): the user's explicit route to
//! a skill, which works even for `disable-model-invocation` skills. The file is read again at
//! expansion time, so edits made since discovery show; the name and path come from discovery.
//! The outcome is returned as data: the caller sends the original text on anything but
//! `Expanded`, and reports `Unreadable` (pi emits a `skill_expansion` error).

use super::{frontmatter, SkillSet};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillExpansion {
    /// The text to send instead of the command.
    Expanded(String),
    /// `/skill:` with a name no loaded skill has; pi passes the text through unchanged.
    Unknown(String),
    /// The skill exists but its file could not be read or its frontmatter no longer parses.
    Unreadable { name: String, error: String },
    /// The text does not start with `/skill:`.
    NotACommand,
}

impl SkillExpansion {
    /// What to send: the expansion, or the original text in every other case.
    pub fn into_text(self, original: &str) -> String {
        match self {
            SkillExpansion::Expanded(text) => text,
            _ => original.to_string(),
        }
    }
}

/// Expands `/skill:name` or `/skill:name args`. As in pi, the name runs up to the first space
/// (so a newline does not end it), and the arguments are the rest, trimmed.
pub fn expand_skill_command(text: &str, set: &SkillSet) -> SkillExpansion {
    let Some(rest) = text.strip_prefix("/skill:") else {
        return SkillExpansion::NotACommand;
    };
    let (name, args) = match rest.split_once(' ') {
        Some((name, args)) => (name, args.trim()),
        None => (rest, ""),
    };
    let Some(skill) = set.get(name) else {
        return SkillExpansion::Unknown(name.to_string());
    };
    let unreadable = |error: String| SkillExpansion::Unreadable {
        name: skill.name.clone(),
        error,
    };
    let raw = match std::fs::read(&skill.file_path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => return unreadable(format!("{}: {e}", skill.file_path.display())),
    };
    let body = match frontmatter::parse(&raw) {
        Ok(doc) => doc.body,
        Err(e) => return unreadable(format!("{}: {e}", skill.file_path.display())),
    };
    // Attributes are not escaped: pi writes them raw, and models see exactly pi's text.
    let block = format!(
        "<skill name=\"{}\" location=\"{}\">\nReferences are relative to {}.\n\n{}\n</skill>",
        skill.name,
        skill.file_path.display(),
        skill.base_dir.display(),
        body.trim()
    );
    if args.is_empty() {
        SkillExpansion::Expanded(block)
    } else {
        SkillExpansion::Expanded(format!("{block}\n\n{args}"))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Skill, SkillOrigin};
    use super::*;

    fn set_with(dir: &std::path::Path, body: &str, hidden: bool) -> SkillSet {
        let base = dir.join("review");
        std::fs::create_dir_all(&base).unwrap();
        std::fs::write(base.join("SKILL.md"), body).unwrap();
        SkillSet {
            skills: vec![Skill {
                name: "review".into(),
                description: "d".into(),
                file_path: base.join("SKILL.md"),
                base_dir: base,
                origin: SkillOrigin::Project,
                disable_model_invocation: hidden,
            }],
            diagnostics: vec![],
        }
    }

    #[test]
    fn expands_body_without_frontmatter_and_appends_args() {
        let t = tempfile::tempdir().unwrap();
        let set = set_with(
            t.path(),
            "---\ndescription: d\n---\n\n# Steps\n1. look\n\n",
            true,
        );
        let dir = t.path().join("review");
        let block = format!(
            "<skill name=\"review\" location=\"{}\">\nReferences are relative to {}.\n\n# Steps\n1. look\n</skill>",
            dir.join("SKILL.md").display(),
            dir.display()
        );
        assert_eq!(
            expand_skill_command("/skill:review", &set),
            SkillExpansion::Expanded(block.clone())
        );
        assert_eq!(
            expand_skill_command("/skill:review   packages/auth  now ", &set),
            SkillExpansion::Expanded(format!("{block}\n\npackages/auth  now"))
        );
    }

    #[test]
    fn rereads_the_file_at_expansion_time() {
        let t = tempfile::tempdir().unwrap();
        let set = set_with(t.path(), "old", false);
        std::fs::write(
            &set.skills[0].file_path,
            "---\ndescription: d\n---\nnew body",
        )
        .unwrap();
        let SkillExpansion::Expanded(text) = expand_skill_command("/skill:review", &set) else {
            panic!("not expanded");
        };
        assert!(text.contains("\n\nnew body\n</skill>"));
    }

    #[test]
    fn other_inputs_pass_through() {
        let t = tempfile::tempdir().unwrap();
        let set = set_with(t.path(), "b", false);
        assert_eq!(
            expand_skill_command("hello /skill:review", &set),
            SkillExpansion::NotACommand
        );
        assert_eq!(
            expand_skill_command("/skill:nope x", &set),
            SkillExpansion::Unknown("nope".into())
        );
        // The name ends at a space only, so a newline makes it a different (unknown) name.
        assert_eq!(
            expand_skill_command("/skill:review\nx", &set),
            SkillExpansion::Unknown("review\nx".into())
        );
        assert_eq!(
            expand_skill_command("/skill:nope", &set).into_text("/skill:nope"),
            "/skill:nope"
        );
    }

    #[test]
    fn missing_file_is_unreadable() {
        let t = tempfile::tempdir().unwrap();
        let set = set_with(t.path(), "b", false);
        std::fs::remove_file(&set.skills[0].file_path).unwrap();
        assert!(matches!(
            expand_skill_command("/skill:review", &set),
            SkillExpansion::Unreadable { ref name, .. } if name == "review"
        ));
    }
}
