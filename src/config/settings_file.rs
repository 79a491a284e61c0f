//! Changing one key of a `settings.json` (what `/settings` and a hook's `ui.set_theme` write):
//! the file is read, the key set or removed, and the whole object written back — every other
//! key and its order kept (unknown keys included), the layout pi's own (two-space JSON, as 1.6
//! writes it), through a temporary file renamed over the old one, so a crash leaves either the
//! old file or the new. A file that is not a JSON object is never overwritten: the change is
//! refused, naming the file and where it does not parse, and nothing is lost.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

#[derive(Debug, thiserror::Error)]
pub enum SettingsFileError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path} is not valid JSON (line {line}, column {column}: {message}); it was left as it is"
    )]
    NotJson {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path} is not a JSON object; it was left as it is")]
    NotObject { path: PathBuf },
    #[error("{path}: \"{key}\" is not an object, so \"{key}.{inner}\" cannot be set; the file was left as it is")]
    NotNested {
        path: PathBuf,
        key: String,
        inner: String,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The object in `path`: empty when the file does not exist.
pub fn read_object(path: &Path) -> Result<Map<String, Value>, SettingsFileError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(source) => {
            return Err(SettingsFileError::Read {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(SettingsFileError::NotObject {
            path: path.to_path_buf(),
        }),
        Err(e) => {
            let full = e.to_string();
            let suffix = format!(" at line {} column {}", e.line(), e.column());
            Err(SettingsFileError::NotJson {
                path: path.to_path_buf(),
                line: e.line(),
                column: e.column(),
                message: full.strip_suffix(&suffix).unwrap_or(&full).to_string(),
            })
        }
    }
}

/// The value at `key` (a path of object keys) in `obj`.
pub fn get<'a>(obj: &'a Map<String, Value>, key: &[&str]) -> Option<&'a Value> {
    let (last, parents) = key.split_last()?;
    let mut cur = obj;
    for k in parents {
        cur = cur.get(*k)?.as_object()?;
    }
    cur.get(*last)
}

/// Sets `key` (a path of object keys, created as needed) to `value` in the file at `path`, or
/// removes it when `value` is `None`.
pub fn set(path: &Path, key: &[&str], value: Option<Value>) -> Result<(), SettingsFileError> {
    let mut obj = read_object(path)?;
    let Some((last, parents)) = key.split_last() else {
        return Ok(());
    };
    let mut cur = &mut obj;
    for (i, k) in parents.iter().enumerate() {
        let slot = cur
            .entry((*k).to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(inner) = slot else {
            return Err(SettingsFileError::NotNested {
                path: path.to_path_buf(),
                key: parents[..=i].join("."),
                inner: key[i + 1..].join("."),
            });
        };
        cur = inner;
    }
    match value {
        Some(v) => {
            cur.insert((*last).to_string(), v);
        }
        None => {
            cur.shift_remove(*last);
        }
    }
    write(path, &Value::Object(obj))
}

/// Sets several top-level keys at once (`None` removes one), in one atomic write, so a
/// default saved as two keys (`defaultProvider`, `defaultModel`) is never half written.
pub fn set_keys(path: &Path, keys: &[(&str, Option<Value>)]) -> Result<(), SettingsFileError> {
    let mut obj = read_object(path)?;
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
    write(path, &Value::Object(obj))
}

/// This installation's id: the global settings' `deviceId`, a new UUID saved there when it
/// has none (1.6's `getOrCreateDeviceId`; logins that register the installation send it).
pub fn device_id(path: &Path) -> Result<String, SettingsFileError> {
    // JavaScript's truthiness: 1.6 makes a new id only where there is none to read.
    let truthy = |v: &&Value| match v {
        Value::Null | Value::Bool(false) => false,
        Value::String(s) => !s.is_empty(),
        Value::Number(n) => n.as_f64() != Some(0.0),
        _ => true,
    };
    if let Some(v) = read_object(path)?.get("deviceId").filter(truthy) {
        // Whatever it is, it is the id; a login that wants a UUID refuses anything else.
        return Ok(v.as_str().map_or_else(|| v.to_string(), str::to_string));
    }
    let id = uuid::Uuid::new_v4().to_string();
    set(path, &["deviceId"], Some(Value::String(id.clone())))?;
    Ok(id)
}

fn write(path: &Path, value: &Value) -> Result<(), SettingsFileError> {
    let err = |source| SettingsFileError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(err)?;
    let mut text =
        serde_json::to_string_pretty(value).map_err(|e| err(std::io::Error::other(e)))?;
    text.push('\n');
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(err)?;
    tmp.write_all(text.as_bytes()).map_err(err)?;
    // The new file keeps the old one's permissions (a settings file may be private).
    if let Ok(meta) = std::fs::metadata(path) {
        std::fs::set_permissions(tmp.path(), meta.permissions()).map_err(err)?;
    }
    tmp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_key_is_set_and_every_other_key_is_kept_in_order() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("settings.json");
        std::fs::write(
            &p,
            r#"{"zeta": 1, "compaction": {"reserveTokens": 9, "x-unknown": [1, {"a": null}]}, "alpha": "keep"}"#,
        )
        .unwrap();
        set(&p, &["compaction", "enabled"], Some(json!(false))).unwrap();
        set(&p, &["theme"], Some(json!("light"))).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v,
            json!({"zeta": 1, "compaction": {"reserveTokens": 9, "x-unknown": [1, {"a": null}], "enabled": false},
                   "alpha": "keep", "theme": "light"})
        );
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["zeta", "compaction", "alpha", "theme"]);
        assert!(text.ends_with("}\n") && text.contains("\n  \"zeta\": 1"));
        set(&p, &["theme"], None).unwrap();
        assert!(read_object(&p).unwrap().get("theme").is_none());
    }

    #[test]
    fn the_device_id_is_made_once_and_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("settings.json");
        std::fs::write(&p, r#"{"theme": "dark", "deviceId": ""}"#).unwrap();
        let id = device_id(&p).unwrap();
        assert!(uuid::Uuid::parse_str(&id).is_ok(), "{id}");
        assert_eq!(device_id(&p).unwrap(), id);
        let v = read_object(&p).unwrap();
        assert_eq!(v["theme"], "dark");
        assert_eq!(v["deviceId"], json!(id));
    }

    #[test]
    fn a_file_that_does_not_parse_is_not_touched() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("settings.json");
        let broken = "{\n  \"theme\": \"dark\",\n  oops\n}\n";
        std::fs::write(&p, broken).unwrap();
        let e = set(&p, &["theme"], Some(json!("light"))).unwrap_err();
        assert!(e.to_string().contains("line 3, column 3"), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), broken);
        std::fs::write(&p, r#"{"compaction": true}"#).unwrap();
        let e = set(&p, &["compaction", "enabled"], Some(json!(false))).unwrap_err();
        assert!(
            e.to_string().contains("\"compaction\" is not an object"),
            "{e}"
        );
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            r#"{"compaction": true}"#
        );
    }

    #[test]
    fn a_missing_file_and_folder_are_created() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join(".pi").join("settings.json");
        set(&p, &["steeringMode"], Some(json!("all"))).unwrap();
        assert_eq!(
            read_object(&p).unwrap().get("steeringMode"),
            Some(&json!("all"))
        );
    }
}
