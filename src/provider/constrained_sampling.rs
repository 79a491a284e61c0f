//! JSON-schema constrained sampling for tools, as pi 1.6's `constrained-sampling.js` decides
//! it: whether a tool's `constrainedSampling` hint (`{"type": "json_schema", "strict":
//! "prefer" | "require"}`, on pi's built-in tools) is honoured by an API that can sample
//! strictly, and the strict form of its schema.
//!
//! Strict sampling takes a subset of JSON Schema: every node typed, objects closed
//! (`additionalProperties: false`) with every property required, an optional property made
//! nullable instead. A schema outside the subset is not strict: a `prefer` tool is then sent
//! as it is, a `require` tool fails the request, with 1.6's words.

use serde_json::{json, Map, Value};

use super::ToolSpec;
use crate::message::system::ToolDeclaration;

/// A tool as far as sampling goes: the request's spec, or a declaration a system message
/// makes in place.
pub trait Sampled {
    fn tool_name(&self) -> &str;
    fn tool_description(&self) -> &str;
    fn schema(&self) -> &Value;
    fn sampling(&self) -> Option<&Value>;
}

/// Both kinds carry the same four fields under the same names.
macro_rules! sampled_by_fields {
    ($($t:ty),*) => {$(
        impl Sampled for $t {
            fn tool_name(&self) -> &str {
                &self.name
            }
            fn tool_description(&self) -> &str {
                &self.description
            }
            fn schema(&self) -> &Value {
                &self.parameters
            }
            fn sampling(&self) -> Option<&Value> {
                self.constrained_sampling.as_ref()
            }
        }
    )*};
}

sampled_by_fields!(ToolSpec, ToolDeclaration);

/// Why a schema has no strict form (1.6's `UnsupportedStrictJsonSchemaError`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unsupported(String);

fn unsupported<T>(why: impl Into<String>) -> Result<T, Unsupported> {
    Err(Unsupported(why.into()))
}

/// A tool that requires strict sampling where it cannot have it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Tool \"{tool}\" requires JSON-schema constrained sampling, but {why}.")]
pub struct StrictRequired {
    pub tool: String,
    pub why: String,
}

/// Keywords the strict subset has no room for.
const UNSUPPORTED_KEYS: [&str; 16] = [
    "$ref",
    "$defs",
    "definitions",
    "allOf",
    "oneOf",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "prefixItems",
    "not",
    "if",
    "then",
    "else",
];

/// Whether `tool` goes strict on an API that can (`supports_strict`) or cannot sample
/// strictly (1.6's `resolveJsonSchemaStrictSampling`; `false` is its `undefined`).
pub fn resolve_strict<T: Sampled + ?Sized>(
    tool: &T,
    supports_strict: bool,
) -> Result<bool, StrictRequired> {
    resolve_strict_with(tool, supports_strict, None)
}

/// A keyword (and its value) an API's strict mode rejects beyond the subset's own rules.
pub type Keyword<'a> = Option<&'a dyn Fn(&str, &Value) -> bool>;

/// [`resolve_strict`] on an API whose strict mode also rejects `keyword`s (1.6's
/// `isUnsupportedKeyword`).
pub fn resolve_strict_with<T: Sampled + ?Sized>(
    tool: &T,
    supports_strict: bool,
    keyword: Keyword<'_>,
) -> Result<bool, StrictRequired> {
    let Some(config) = tool
        .sampling()
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("json_schema"))
    else {
        return Ok(false);
    };
    let required = config.get("strict").and_then(Value::as_str) == Some("require");
    let why = if supports_strict {
        match make_strict_with(tool.schema(), keyword) {
            Ok(_) => return Ok(true),
            Err(e) => e.0,
        }
    } else {
        "strict tools are unsupported".to_string()
    };
    if required {
        return Err(StrictRequired {
            tool: tool.tool_name().to_string(),
            why,
        });
    }
    Ok(false)
}

/// The schema a tool is sent with: its strict form when `strict` (1.6's
/// `getJsonSchemaToolParameters`).
pub fn tool_parameters<T: Sampled + ?Sized>(tool: &T, strict: bool) -> Value {
    if strict {
        if let Ok(s) = make_strict(tool.schema()) {
            return s;
        }
    }
    tool.schema().clone()
}

/// The strict form of `schema` (1.6's `makeStrictJsonSchema`).
pub fn make_strict(schema: &Value) -> Result<Value, Unsupported> {
    make_strict_with(schema, None)
}

fn make_strict_with(schema: &Value, keyword: Keyword<'_>) -> Result<Value, Unsupported> {
    let mut cloned = schema.clone();
    let Value::Object(root) = &mut cloned else {
        return unsupported("root schema must have type object");
    };
    strict_node(root, keyword)?;
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return unsupported("root schema must have type object");
    }
    Ok(cloned)
}

fn strict_value(v: &mut Value, keyword: Keyword<'_>) -> Result<(), Unsupported> {
    match v {
        Value::Object(o) => strict_node(o, keyword),
        _ => unsupported("boolean schemas are unsupported"),
    }
}

/// A node's `type`: its string, or its array's strings.
fn types(schema: &Map<String, Value>) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn is_structured(schema: &Value) -> bool {
    let Value::Object(o) = schema else {
        return false;
    };
    let t = types(o);
    t.contains(&"object")
        || t.contains(&"array")
        || o.contains_key("properties")
        || o.contains_key("items")
}

fn allows_null(schema: &Value) -> bool {
    let Value::Object(o) = schema else {
        return false;
    };
    types(o).contains(&"null")
        || o.get("const") == Some(&Value::Null)
        || o.get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| e.contains(&Value::Null))
        || o.get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(allows_null))
}

fn strict_node(schema: &mut Map<String, Value>, keyword: Keyword<'_>) -> Result<(), Unsupported> {
    if let Some(key) = UNSUPPORTED_KEYS.iter().find(|k| schema.contains_key(**k)) {
        return unsupported(format!("{key} schemas are unsupported"));
    }
    if let Some(rejects) = keyword {
        if let Some((k, v)) = schema.iter().find(|(k, v)| rejects(k, v)) {
            return unsupported(format!("{k}: {v} is unsupported"));
        }
    }
    // A bare enum counts as typed, a bare const does not.
    if !["type", "anyOf", "enum"]
        .iter()
        .any(|k| schema.contains_key(*k))
    {
        return unsupported("schemas without a type are unsupported");
    }
    if let Some(any_of) = schema.get_mut("anyOf") {
        let Some(variants) = any_of.as_array_mut().filter(|a| !a.is_empty()) else {
            return unsupported("anyOf must contain at least one schema");
        };
        for variant in variants {
            if is_structured(variant) {
                return unsupported("object and array unions are unsupported");
            }
            strict_value(variant, keyword)?;
        }
    }
    if let Some(items) = schema.get_mut("items") {
        if items.is_array() {
            return unsupported("tuple schemas are unsupported");
        }
        strict_value(items, keyword)?;
    }
    let is_object = schema.get("type").and_then(Value::as_str) == Some("object");
    if schema.contains_key("properties") && !is_object {
        return unsupported("properties require type object");
    }
    if !is_object {
        return Ok(());
    }
    if schema
        .get("additionalProperties")
        .is_some_and(|a| a != &Value::Bool(false))
    {
        return unsupported("schema-valued or true additionalProperties is unsupported");
    }
    strict_object(schema, keyword)
}

/// An object node's properties made strict, all required, the object closed. Keys are set in
/// place, so the schema's key order is 1.6's.
fn strict_object(schema: &mut Map<String, Value>, keyword: Keyword<'_>) -> Result<(), Unsupported> {
    if schema.get("properties").is_some_and(|p| !p.is_object()) {
        return unsupported("object properties must be a schema map");
    }
    let required: Vec<String> = match schema.get("required") {
        None => Vec::new(),
        Some(Value::Array(a)) if a.iter().all(Value::is_string) => a
            .iter()
            .filter_map(|k| k.as_str().map(str::to_string))
            .collect(),
        Some(_) => return unsupported("object required must be a string array"),
    };
    let mut names = Vec::new();
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        if required.iter().any(|k| !properties.contains_key(k)) {
            return unsupported("required contains an unknown property");
        }
        for (key, property) in properties.iter_mut() {
            strict_value(property, keyword)?;
            if !required.contains(key) && !allows_null(property) {
                let inner = property.take();
                *property = json!({"anyOf": [inner, {"type": "null"}]});
            }
            names.push(Value::String(key.clone()));
        }
    }
    if names.is_empty() && !required.is_empty() {
        return unsupported("required contains an unknown property");
    }
    schema.insert("required".into(), Value::Array(names));
    schema.insert("additionalProperties".into(), Value::Bool(false));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each schema and what pi 1.6's `makeStrictJsonSchema` makes of it (run under node).
    #[test]
    fn strict_forms_are_pi_1_6s() {
        let cases = [
            (
                json!({"type":"object","properties":{"path":{"type":"string","description":"p"},"offset":{"type":"number"},"tags":{"type":"array","items":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}},"mode":{"anyOf":[{"type":"string"},{"type":"null"}]},"kind":{"enum":["a","b"]}},"required":["path"],"description":"x"}),
                Ok(
                    r#"{"type":"object","properties":{"path":{"type":"string","description":"p"},"offset":{"anyOf":[{"type":"number"},{"type":"null"}]},"tags":{"anyOf":[{"type":"array","items":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}},{"type":"null"}]},"mode":{"anyOf":[{"type":"string"},{"type":"null"}]},"kind":{"anyOf":[{"enum":["a","b"]},{"type":"null"}]}},"required":["path","offset","tags","mode","kind"],"description":"x","additionalProperties":false}"#,
                ),
            ),
            (
                json!({"type":"object","required":["a"],"properties":{"a":{"type":"string"}},"additionalProperties":false}),
                Ok(
                    r#"{"type":"object","required":["a"],"properties":{"a":{"type":"string"}},"additionalProperties":false}"#,
                ),
            ),
            (
                json!({"type":"object"}),
                Ok(r#"{"type":"object","required":[],"additionalProperties":false}"#),
            ),
            (
                json!({"type":"object","properties":{"a":{"$ref":"#/x"}}}),
                Err("$ref schemas are unsupported"),
            ),
            (
                json!({"type":"object","properties":{"a":{"const":"x"}}}),
                Err("schemas without a type are unsupported"),
            ),
            (
                json!({"type":"object","properties":{"a":{"type":"string"}},"required":["b"]}),
                Err("required contains an unknown property"),
            ),
            (
                json!({"type":"object","additionalProperties":true}),
                Err("schema-valued or true additionalProperties is unsupported"),
            ),
            (
                json!({"type":"string"}),
                Err("root schema must have type object"),
            ),
        ];
        for (schema, want) in cases {
            let got = make_strict(&schema)
                .map(|v| v.to_string())
                .map_err(|e| e.to_string());
            assert_eq!(
                got,
                want.map(str::to_string).map_err(str::to_string),
                "{schema}"
            );
        }
    }

    fn tool(strict: &str, parameters: Value) -> ToolSpec {
        ToolSpec {
            name: "t".into(),
            description: String::new(),
            parameters,
            constrained_sampling: Some(json!({"type": "json_schema", "strict": strict})),
        }
    }

    #[test]
    fn prefer_falls_back_and_require_fails_with_1_6s_words() {
        let closed = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        let open = json!({"type": "object", "additionalProperties": true});
        assert_eq!(
            resolve_strict(&tool("prefer", closed.clone()), true),
            Ok(true)
        );
        assert_eq!(
            resolve_strict(&tool("prefer", closed.clone()), false),
            Ok(false)
        );
        assert_eq!(
            resolve_strict(&tool("prefer", open.clone()), true),
            Ok(false)
        );
        let err = resolve_strict(&tool("require", open), true).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Tool \"t\" requires JSON-schema constrained sampling, but schema-valued or true \
             additionalProperties is unsupported."
        );
        let err = resolve_strict(&tool("require", closed.clone()), false).unwrap_err();
        assert!(err
            .to_string()
            .ends_with("but strict tools are unsupported."));
        let mut plain = tool("prefer", closed);
        plain.constrained_sampling = None;
        assert_eq!(resolve_strict(&plain, true), Ok(false));
    }
}
