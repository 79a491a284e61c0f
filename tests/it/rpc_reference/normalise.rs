//! Turning a live transcript into a fixture that does not change from run to run: paths of the
//! hermetic environment, the mock's address, ids, timestamps and durations become placeholders.
//! The same ids get the same placeholder throughout one transcript (`<ENTRY-3>`, `<UUID-1>`),
//! so a fixture still shows which record refers to which.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::ts_pi::Step;

/// Keys whose string values are session entry ids (8 hex digits in pi 1.6).
const ENTRY_ID_KEYS: [&str; 5] = ["id", "parentId", "leafId", "firstKeptEntryId", "entryId"];
/// Keys whose numbers vary with the clock.
const CLOCK_NUMBER_KEYS: [&str; 3] = ["timestamp", "durationMs", "wall_time_seconds"];

pub struct Normaliser {
    /// Literal text and its placeholder, longest first.
    literals: Vec<(String, String)>,
    entry_ids: BTreeMap<String, String>,
    uuids: BTreeMap<String, String>,
}

impl Normaliser {
    /// Placeholders for the given `(path or text, name)` pairs; a directory also gets its
    /// session-directory form (pi names a project's session folder `--a-b-c--` after `/a/b/c`).
    pub fn new(literals: &[(String, &str)]) -> Normaliser {
        let mut all: Vec<(String, String)> = Vec::new();
        for (text, name) in literals {
            all.push((text.clone(), format!("<{name}>")));
            if text.starts_with('/') {
                let dashed = text.trim_start_matches('/').replace('/', "-");
                all.push((dashed, format!("<{name}-DASHED>")));
            }
        }
        all.sort_by_key(|(t, _)| std::cmp::Reverse(t.len()));
        Normaliser {
            literals: all,
            entry_ids: BTreeMap::new(),
            uuids: BTreeMap::new(),
        }
    }

    pub fn steps(&mut self, steps: &[Step]) -> Vec<Step> {
        let mut values: Vec<Value> = steps.iter().map(Step::to_json).collect();
        for v in &values {
            self.collect(v, None);
        }
        for v in &mut values {
            self.rewrite(v, None);
        }
        values
            .iter()
            .map(|v| Step::from_json(v).expect("a step survives normalising"))
            .collect()
    }

    fn collect(&mut self, v: &Value, key: Option<&str>) {
        match v {
            Value::String(s) => {
                if key.is_some_and(|k| ENTRY_ID_KEYS.contains(&k)) && is_entry_id(s) {
                    let n = self.entry_ids.len() + 1;
                    self.entry_ids
                        .entry(s.clone())
                        .or_insert_with(|| format!("<ENTRY-{n}>"));
                }
                for u in find_uuids(s) {
                    let n = self.uuids.len() + 1;
                    self.uuids.entry(u).or_insert_with(|| format!("<UUID-{n}>"));
                }
            }
            Value::Array(a) => a.iter().for_each(|x| self.collect(x, None)),
            Value::Object(m) => m.iter().for_each(|(k, x)| self.collect(x, Some(k))),
            _ => {}
        }
    }

    fn rewrite(&self, v: &mut Value, key: Option<&str>) {
        match v {
            Value::Number(_) if key.is_some_and(|k| CLOCK_NUMBER_KEYS.contains(&k)) => {
                *v = Value::from(0);
            }
            Value::String(s) => *s = self.text(s),
            Value::Array(a) => a.iter_mut().for_each(|x| self.rewrite(x, None)),
            Value::Object(m) => m.iter_mut().for_each(|(k, x)| self.rewrite(x, Some(k))),
            _ => {}
        }
    }

    fn text(&self, s: &str) -> String {
        if let Some(p) = self.entry_ids.get(s) {
            return p.clone();
        }
        let mut out = s.to_string();
        for (lit, name) in &self.literals {
            if !lit.is_empty() {
                out = out.replace(lit.as_str(), name);
            }
        }
        for (u, name) in &self.uuids {
            out = out.replace(u.as_str(), name);
        }
        replace_times(&out)
    }
}

fn is_entry_id(s: &str) -> bool {
    s.len() == 8 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Every `8-4-4-4-12` hex group in `s`.
fn find_uuids(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let shape = [8, 4, 4, 4, 12];
    let mut out = Vec::new();
    let mut i = 0;
    while i + 36 <= b.len() {
        let mut at = i;
        let fits = shape.iter().enumerate().all(|(g, &n)| {
            let ok =
                b[at..at + n].iter().all(u8::is_ascii_hexdigit) && (g == 4 || b[at + n] == b'-');
            at += n + 1;
            ok
        });
        if fits {
            out.push(s[i..i + 36].to_string());
            i += 36;
        } else {
            i += 1;
        }
    }
    out
}

/// Replaces ISO-8601 times (`2026-01-02T03:04:05.678Z`, and the `03-04-05-678Z` form pi uses
/// in session file names) with `<TIME>`.
fn replace_times(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut copied = 0;
    while i + 11 <= b.len() {
        let date = b[i..i + 10].iter().enumerate().all(|(k, c)| {
            if k == 4 || k == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        });
        if date && b[i + 10] == b'T' {
            let mut j = i + 11;
            while j < b.len() && (b[j].is_ascii_digit() || b":.-".contains(&b[j])) {
                j += 1;
            }
            if j < b.len() && b[j] == b'Z' {
                out.push_str(&s[copied..i]);
                out.push_str("<TIME>");
                i = j + 1;
                copied = i;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&s[copied..]);
    out
}

/// Where the fixture `name` lives.
pub fn fixture_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/rpc/ts-pi-1.6")
        .join(format!("{name}.jsonl"))
}

pub fn write_fixture(name: &str, steps: &[Step]) {
    let mut text = String::new();
    for s in steps {
        text.push_str(&s.to_json().to_string());
        text.push('\n');
    }
    let p = fixture_path(name);
    std::fs::create_dir_all(p.parent().expect("fixture dir")).expect("create fixture dir");
    std::fs::write(&p, text).unwrap_or_else(|e| panic!("write {}: {e}", p.display()));
}

/// The fixture's steps; panics naming the file and line that is not a step.
pub fn read_fixture(path: &Path) -> Vec<Step> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (record it with tests/ts-pi/record-rpc-fixtures.sh)",
            path.display()
        )
    });
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l)
                .ok()
                .as_ref()
                .and_then(Step::from_json)
                .unwrap_or_else(|| panic!("{}:{}: not a step: {l:.200}", path.display(), i + 1))
        })
        .collect()
}

#[test]
fn ids_times_and_paths_become_stable_placeholders() {
    let mut n = Normaliser::new(&[("/tmp/x/project".to_string(), "CWD")]);
    let steps = vec![
        Step::Out(serde_json::json!({"id": "0a1b2c3d", "parentId": null,
            "timestamp": "2026-11-30T22:48:35.200Z", "cwd": "/tmp/x/project/sub",
            "sessionFile": "/s/--tmp-x-project--/2026-11-30T22-47-52-151Z_01a22ea4-a656-7797-91ce-e42a43e8f9f9.jsonl",
            "durationMs": 23})),
        Step::Out(serde_json::json!({"leafId": "0a1b2c3d",
            "sessionId": "01a22ea4-a656-7797-91ce-e42a43e8f9f9", "timestamp": 1796078872218u64})),
    ];
    let out: Vec<Value> = n.steps(&steps).iter().map(Step::to_json).collect();
    assert_eq!(
        out,
        vec![
            serde_json::json!({"out": {"id": "<ENTRY-1>", "parentId": null, "timestamp": "<TIME>",
                "cwd": "<CWD>/sub", "sessionFile": "/s/--<CWD-DASHED>--/<TIME>_<UUID-1>.jsonl",
                "durationMs": 0}}),
            serde_json::json!({"out": {"leafId": "<ENTRY-1>", "sessionId": "<UUID-1>",
                "timestamp": 0}}),
        ]
    );
}
