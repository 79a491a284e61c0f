//! `export_html`: the session as one self-contained HTML page, with what only the live
//! session knows (its system prompt and the tools the model is given). The page itself is
//! `crate::export`'s; this is the controller's door to it, shared by RPC and (later) `/export`.

use std::path::Path;
use std::sync::Arc;

use super::{ControllerError, ExportPath, SessionController};
use crate::export::{export_html_with, ExportExtras};
use crate::resources::themes::{self, Catalog, ThemeSpec};

impl SessionController {
    /// `export_html {outputPath?}`: writes the page (to pi's default file name in the working
    /// directory without a path), dressed in `theme`, and returns where. The session stays
    /// locked while it is written: the page is streamed from the session's own entries, never
    /// copied.
    pub fn export_html(
        &self,
        output_path: Option<&str>,
        theme: Option<&ThemeSpec>,
    ) -> Result<ExportPath, ControllerError> {
        let config = self.core.handle.config();
        let tools = self.core.handle.tools().specs();
        let extras = ExportExtras {
            system_prompt: Some(config.system_prompt.text()),
            tools: &tools,
            theme,
        };
        let session = self.core.session.lock();
        // Relative paths (and the answer) are the working directory's, as pi answers.
        let path = export_html_with(&session, output_path.map(Path::new), &extras)?;
        Ok(ExportPath {
            path: path.display().to_string(),
        })
    }

    /// The theme the `theme` setting names, as 1.6's `exportToHtml` takes it when no front end
    /// says which is in use (RPC): none when the setting is unset or names no theme.
    pub fn settings_theme(&self) -> Option<Arc<ThemeSpec>> {
        let setting = self.setting_str("theme")?;
        let catalog = Catalog::load(&self.theme_sources());
        let appearance = themes::current_appearance();
        let name = themes::resolve_setting(&setting, appearance)?;
        catalog.get(name).map(themes::Entry::spec)
    }
}
