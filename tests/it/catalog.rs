//! The built-in catalog (`src/config/catalog.json`): it is pi 1.6.0's, regenerated from the
//! pinned packages and compared; every provider whose API pi speaks is listed once a key is
//! set, with 1.6's default model; a provider whose API pi does not speak yet is named as such.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::common::ts_pi::TsPi;
use crate::common::TestAgent;

fn catalog() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/config/catalog.json");
    let text = std::fs::read_to_string(path).expect("catalog.json");
    serde_json::from_str(&text).expect("catalog.json parses")
}

/// The wire APIs pi speaks (models.json's `api`); a catalog provider on any other is left out.
const SPOKEN: &[&str] = &[
    "openai-completions",
    "openai-responses",
    "azure-openai-responses",
    "openai-codex-responses",
    "anthropic-messages",
    "google-generative-ai",
    "mistral-conversations",
    "google-vertex",
    "bedrock-converse-stream",
    "pi-messages",
];

#[tokio::test]
async fn the_catalog_is_pi_1_6s_as_generated_from_the_pinned_packages() {
    let Some(ts) = TsPi::find_v1_6() else { return };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ts-pi/gen-catalog.mjs");
    let out = tokio::process::Command::new(ts.node())
        .arg(script)
        .output()
        .await
        .expect("run gen-catalog.mjs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let committed = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src/config/catalog.json"
    ))
    .expect("catalog.json");
    assert!(
        String::from_utf8_lossy(&out.stdout) == committed,
        "src/config/catalog.json differs from what tests/ts-pi/gen-catalog.mjs writes; \
         regenerate it"
    );
}

#[test]
fn every_catalog_api_is_spoken_or_named_as_missing() {
    let cat = catalog();
    let providers = cat["providers"].as_array().expect("providers");
    assert!(providers.len() >= 40, "pi 1.6 ships 40-odd providers");
    let apis: BTreeSet<&str> = providers
        .iter()
        .flat_map(|p| {
            let models = p["models"].as_array().expect("models");
            std::iter::once(p["api"].as_str().expect("api"))
                .chain(models.iter().filter_map(|m| m["api"].as_str()))
        })
        .collect();
    let missing: Vec<&str> = apis
        .iter()
        .copied()
        .filter(|a| !SPOKEN.contains(a))
        .collect();
    // Every API of 1.6's catalog is spoken: a regenerated catalog that brings a new one fails
    // here until it is (and its providers say which API they need meanwhile).
    assert!(missing.is_empty(), "{missing:?}");
    for p in providers {
        let default = p["defaultModel"].as_str().expect("defaultModel");
        let models = p["models"].as_array().expect("models");
        assert!(
            models.iter().any(|m| m["id"] == default),
            "{}: default model {default} is not among its models",
            p["name"]
        );
    }
}

#[tokio::test]
async fn a_key_lists_that_providers_catalog_models_and_picks_its_default() {
    let mut agent = TestAgent::new();
    agent.env("GROQ_API_KEY", "gsk-test");
    let out = agent.run(&["--list-models"]).await;
    out.assert_ok();
    let groq: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("groq "))
        .collect();
    let cat = catalog();
    let expected = cat["providers"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == "groq"))
        .and_then(|p| p["models"].as_array())
        .map(Vec::len)
        .expect("groq in the catalog");
    assert_eq!(groq.len(), expected, "{out}");
    assert!(
        !out.stdout.lines().any(|l| l.starts_with("anthropic ")),
        "no key, not listed: {out}"
    );
    // No model asked for: 1.6's default for the one provider with a key.
    let mut rpc = agent.rpc(&[] as &[&str]);
    let state = rpc.request(json!({"id": "s", "type": "get_state"})).await;
    assert_eq!(state["data"]["model"]["provider"], "groq", "{state:#}");
    assert_eq!(state["data"]["model"]["id"], "openai/gpt-oss-120b");
    rpc.close().await;
}
