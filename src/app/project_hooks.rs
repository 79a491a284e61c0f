//! The second phase of hook loading: a trusted project's own hooks — the `hooks` list of
//! `.pi/settings.json` and the executables in `.pi/hooks/`. They are gathered and started only
//! after the trust decision, so an untrusted repository never gets a process of its own
//! started (not even a handshake), and they join the hooks already running from the first
//! phase, which are never started twice.

use std::path::Path;
use std::sync::Arc;

use tokio::sync::mpsc;

use super::hooks::LoadedHooks;
use crate::agent::events::AgentEvent;
use crate::config::Settings;
use crate::hooks::host::{self, InstanceEndpoint};
use crate::hooks::instance::HostContext;
use crate::hooks::runner::{Endpoint, Runner};
use crate::hooks::sources::{self, SourceError};
use crate::hooks::spec::{HookSource, HookSpec};

/// The project's hook specs, in load order: `.pi/settings.json` `hooks`, then `.pi/hooks/`.
/// `project` is the project file alone (not merged): the user's own `hooks` list is not the
/// project's, whatever a deep merge would make of the two arrays.
pub fn specs(project: &Settings, cwd: &Path) -> Result<Vec<HookSpec>, SourceError> {
    let dir = cwd.join(".pi");
    let mut out = Vec::new();
    if let Some(list) = project.get("hooks") {
        let file = dir.join("settings.json").display().to_string();
        // Paths in project settings are relative to `.pi`, as pi resolves them.
        out.extend(sources::from_settings(
            list,
            &file,
            &dir,
            HookSource::Project,
        )?);
    }
    out.extend(sources::from_dir(&dir.join("hooks"), HookSource::Project)?);
    Ok(out)
}

/// Start `specs` and add them after the first phase's hooks; the runner is rebuilt over all
/// of them in load order.
pub async fn start(
    loaded: &mut LoadedHooks,
    specs: Vec<HookSpec>,
    ctx: HostContext,
    events: mpsc::UnboundedSender<AgentEvent>,
) -> Result<Vec<String>, crate::hooks::instance::StartError> {
    if specs.is_empty() {
        return Ok(Vec::new());
    }
    let (ntx, nrx) = mpsc::unbounded_channel();
    host::forward_notices(nrx, events.clone());
    let (started, warnings) = host::start_all(specs, ctx, loaded.calls.clone(), ntx).await?;
    loaded.instances.extend(started);
    let endpoints: Vec<Arc<dyn Endpoint>> = loaded
        .instances
        .iter()
        .map(|i| Arc::new(InstanceEndpoint(i.clone())) as Arc<dyn Endpoint>)
        .collect();
    loaded.runner = Arc::new(Runner::new(endpoints, Some(events)));
    Ok(warnings)
}
