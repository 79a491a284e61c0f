//! Turns `src/config/catalog.json` (pi 1.6's built-in providers and models, written by
//! `tests/ts-pi/gen-catalog.mjs`) into static Rust at build time, so start-up pays nothing for
//! a catalog of some 1,700 models: each provider's head (name, api, base URL, key variables,
//! default model) is a constant, and its models stay one JSON string parsed only when that
//! provider's models are first looked at. A catalog that does not parse fails the build.

use std::error::Error;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

const CATALOG: &str = "src/config/catalog.json";

fn field<'a>(p: &'a Value, key: &str) -> Result<&'a str, Box<dyn Error>> {
    p.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{CATALOG}: a provider has no string \"{key}\": {p}").into())
}

// Cargo reads the build script's stdout for its instructions; no terminal is involved.
#[allow(clippy::disallowed_macros)]
fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo:rerun-if-changed={CATALOG}");
    let text = std::fs::read_to_string(CATALOG)?;
    let catalog: Value =
        serde_json::from_str(&text).map_err(|e| format!("{CATALOG} does not parse: {e}"))?;
    let providers = catalog
        .get("providers")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{CATALOG}: no \"providers\" array"))?;
    let mut out = String::from("pub static CATALOG: &[CatalogProvider] = &[\n");
    for p in providers {
        let vars: Vec<&str> = p
            .get("envVars")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let models = p
            .get("models")
            .filter(|m| m.is_array())
            .ok_or_else(|| format!("{CATALOG}: provider {} has no models array", p["name"]))?;
        writeln!(
            out,
            "    CatalogProvider {{ name: {:?}, display_name: {:?}, api: {:?}, base_url: {:?}, \
             env_vars: &{:?}, oauth: {}, default_model: {:?}, models: {:?} }},",
            field(p, "name")?,
            field(p, "displayName")?,
            field(p, "api")?,
            p.get("baseUrl").and_then(Value::as_str).unwrap_or_default(),
            vars,
            p.get("oauth").and_then(Value::as_bool).unwrap_or(false),
            field(p, "defaultModel")?,
            models.to_string(),
        )?;
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR")?).join("catalog.rs");
    std::fs::write(dest, out)?;
    Ok(())
}
