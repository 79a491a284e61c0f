//! Saving a default in the user's `settings.json` (`/model` and `/thinking` with Ctrl+S,
//! `/scoped-models`' save): the file is read, the keys set, and the whole object written back
//! with every other key kept in its place, as two-space JSON like pi 1.6 writes it, through a
//! temporary file renamed over the old one (a crash leaves the old file or the new one). A file
//! that is not a JSON object is never overwritten: the change is refused and names the file.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

#[derive(Debug, thiserror::Error)]
pub enum SettingsWriteError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a JSON object ({reason}); it was left as it is", path.display())]
    NotAnObject { path: PathBuf, reason: String },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The object in the settings file at `path`: empty when there is none.
pub fn read(path: &Path) -> Result<Map<String, Value>, SettingsWriteError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(source) => {
            return Err(SettingsWriteError::Read {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    let not_object = |reason: String| SettingsWriteError::NotAnObject {
        path: path.to_path_buf(),
        reason,
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(not_object("its top level is not an object".into())),
        Err(e) => Err(not_object(e.to_string())),
    }
}

/// Sets each `(key, value)` in the settings file at `path` (`None` removes the key).
pub fn set_keys(path: &Path, keys: &[(&str, Option<Value>)]) -> Result<(), SettingsWriteError> {
    let mut obj = read(path)?;
    for (key, value) in keys {
        match value {
            Some(v) => {
                obj.insert((*key).to_string(), v.clone());
            }
            None => {
                obj.shift_remove(*key);
            }
        }
    }
    let write_err = |source| SettingsWriteError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(write_err)?;
    let mut text = serde_json::to_string_pretty(&Value::Object(obj))
        .map_err(|e| write_err(std::io::Error::other(e)))?;
    text.push('\n');
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(write_err)?;
    tmp.write_all(text.as_bytes()).map_err(write_err)?;
    tmp.persist(path).map_err(|e| write_err(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_set_in_place_and_the_rest_is_kept() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("settings.json");
        std::fs::write(&p, r#"{"theme":"dark","defaultModel":"a","zeta":{"x":1}}"#).unwrap();
        set_keys(
            &p,
            &[
                ("defaultProvider", Some(json!("openai"))),
                ("defaultModel", Some(json!("gpt"))),
                ("theme", None),
            ],
        )
        .unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(
            text,
            "{\n  \"defaultModel\": \"gpt\",\n  \"zeta\": {\n    \"x\": 1\n  },\n  \"defaultProvider\": \"openai\"\n}\n"
        );
    }

    #[test]
    fn a_file_that_does_not_parse_is_refused_and_left_alone() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("settings.json");
        std::fs::write(&p, "{ not json").unwrap();
        let e = set_keys(&p, &[("defaultModel", Some(json!("x")))]).unwrap_err();
        assert!(
            e.to_string().contains("settings.json is not a JSON object"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{ not json");
    }
}
