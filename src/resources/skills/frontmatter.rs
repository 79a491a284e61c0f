//! The YAML header of a skill file, split exactly as pi's `parseFrontmatter` does: line endings
//! are normalised to `\n`; a file that starts with `---` and later has a line starting with
//! `---` has frontmatter between them; the body is what follows, trimmed. Anything else is all
//! body. The YAML itself goes to `yaml-rust2` (YAML 1.2 core schema like pi's `yaml` package,
//! including its refusal of duplicate keys), and only the fields skills use are kept: unknown
//! fields are ignored, and a field of the wrong type counts as absent.

use yaml_rust2::{Yaml, YamlLoader};

/// Why a frontmatter block could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrontmatterError {
    #[error("invalid frontmatter YAML: {0}")]
    Yaml(String),
    #[error("frontmatter holds {0} YAML documents, expected one")]
    MultipleDocuments(usize),
}

/// The frontmatter fields skills act on. Strings are `Some` only when the YAML value is a string.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Frontmatter {
    pub name: Option<String>,
    pub description: Option<String>,
    pub compatibility: Option<String>,
    pub disable_model_invocation: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Document {
    pub frontmatter: Frontmatter,
    pub body: String,
}

/// Parses a whole file. Fails only on broken YAML; no frontmatter is an empty one.
pub(crate) fn parse(content: &str) -> Result<Document, FrontmatterError> {
    let normalized = content.replace("\r\n", "\n").replace('\r', "\n");
    let (yaml, body) = split(&normalized);
    let frontmatter = match yaml {
        // pi skips YAML parsing for an empty block (`if (!yamlString)`), not a blank one;
        // a blank block parses to nothing, which ends up the same.
        Some(yaml) if !yaml.is_empty() => fields(yaml)?,
        _ => Frontmatter::default(),
    };
    Ok(Document {
        frontmatter,
        body: body.to_string(),
    })
}

/// `(yaml, body)`; `yaml` is `None` when the file has no frontmatter, and the body is then the
/// whole (untrimmed) text.
fn split(normalized: &str) -> (Option<&str>, &str) {
    if !normalized.starts_with("---") {
        return (None, normalized);
    }
    let Some(end) = normalized[3..].find("\n---").map(|i| i + 3) else {
        return (None, normalized);
    };
    // pi slices the YAML from index 4, i.e. it drops the one character after the opening
    // `---` whatever it is; when the closing marker comes first the block is empty.
    let start = 3 + normalized[3..].chars().next().map_or(0, char::len_utf8);
    let yaml = normalized.get(start..end).unwrap_or("");
    (Some(yaml), normalized[end + 4..].trim())
}

fn fields(yaml: &str) -> Result<Frontmatter, FrontmatterError> {
    let docs =
        YamlLoader::load_from_str(yaml).map_err(|e| FrontmatterError::Yaml(e.to_string()))?;
    if docs.len() > 1 {
        return Err(FrontmatterError::MultipleDocuments(docs.len()));
    }
    // A scalar or list document has no fields; indexing it yields `BadValue`, so every field
    // reads as absent, as `frontmatter.description` would be undefined in pi.
    let Some(doc) = docs.first() else {
        return Ok(Frontmatter::default());
    };
    let string = |key: &str| doc[key].as_str().map(str::to_string);
    Ok(Frontmatter {
        name: string("name"),
        description: string("description"),
        compatibility: string("compatibility"),
        disable_model_invocation: matches!(doc["disable-model-invocation"], Yaml::Boolean(true)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_known_fields_and_ignores_others() {
        let doc = parse(
            "---\r\nname: deploy\r\ndescription: Ship it\r\nlicense: MIT\r\nmetadata:\r\n  a: 1\r\n\
             disable-model-invocation: true\r\nallowed-tools: [bash]\r\n---\r\n\r\n# Body\r\n",
        )
        .unwrap();
        assert_eq!(doc.frontmatter.name.as_deref(), Some("deploy"));
        assert_eq!(doc.frontmatter.description.as_deref(), Some("Ship it"));
        assert!(doc.frontmatter.disable_model_invocation);
        assert_eq!(doc.body, "# Body");
    }

    #[test]
    fn wrong_types_count_as_absent() {
        let doc =
            parse("---\nname: 42\ndescription: [a]\ndisable-model-invocation: \"true\"\n---\nx")
                .unwrap();
        assert_eq!(doc.frontmatter, Frontmatter::default());
    }

    #[test]
    fn no_frontmatter_keeps_the_whole_text_as_body() {
        let doc = parse("# Title\n---\nmore\n").unwrap();
        assert_eq!(doc.frontmatter, Frontmatter::default());
        assert_eq!(doc.body, "# Title\n---\nmore\n");
        // An opening marker without a closing one is not frontmatter either.
        assert_eq!(parse("---\nname: x\n").unwrap().body, "---\nname: x\n");
    }

    #[test]
    fn empty_block_and_scalar_documents_have_no_fields() {
        assert_eq!(parse("---\n---\nbody").unwrap().body, "body");
        assert_eq!(parse("---\n# only a comment\n---\nb").unwrap().body, "b");
        let scalar = parse("---\njust text\n---\nb").unwrap();
        assert_eq!(scalar.frontmatter, Frontmatter::default());
    }

    #[test]
    fn broken_yaml_and_duplicate_keys_are_errors() {
        assert!(matches!(
            parse("---\ndescription: [unclosed\n---\n"),
            Err(FrontmatterError::Yaml(_))
        ));
        assert!(matches!(
            parse("---\nname: a\nname: b\n---\n"),
            Err(FrontmatterError::Yaml(_))
        ));
    }

    #[test]
    fn multibyte_character_after_the_opening_marker_does_not_panic() {
        let doc = parse("---é\ndescription: d\n---\nbody").unwrap();
        assert_eq!(doc.body, "body");
    }
}
