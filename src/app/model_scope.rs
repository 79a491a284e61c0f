//! The model scope from the command line or the settings (`--models`, else `enabledModels`),
//! and the model a new session starts on when there is one: as pi 1.6, the saved default if
//! the scope has it, else the scope's first model (with its `:thinking` level).

use crate::cli::Cli;
use crate::config::{self, ModelRegistry, ScopedModel, Settings};

/// The scope's patterns: `--models`, else the `enabledModels` setting.
fn patterns(cli: &Cli, settings: &Settings) -> Vec<String> {
    cli.model_patterns().unwrap_or_else(|| {
        settings
            .get("enabledModels")
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|p| p.as_str())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default()
    })
}

/// The scope, and a warning for each pattern that names nothing or several providers.
pub fn resolve(
    cli: &Cli,
    settings: &Settings,
    registry: &ModelRegistry,
) -> (Vec<ScopedModel>, Vec<String>) {
    let patterns = patterns(cli, settings);
    if patterns.is_empty() {
        return (Vec::new(), Vec::new());
    }
    config::resolve_scope(registry, &patterns)
}

/// The scoped model a new session starts on: the settings' default when the scope has it,
/// else the scope's first.
pub fn start_model<'a>(scope: &'a [ScopedModel], settings: &Settings) -> Option<&'a ScopedModel> {
    let saved = settings.default_provider().zip(settings.default_model());
    saved
        .and_then(|(p, id)| scope.iter().find(|s| s.provider == p && s.id == id))
        .or(scope.first())
}
