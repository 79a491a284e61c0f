//! The themes of a running interactive mode: the catalog (built-ins, `--theme` paths, the
//! user's, a trusted project's, the hooks'), which one is in use and why, and switching —
//! from `/settings`, a hook's `ui.set_theme`, or `/reload` reading them all again. A switch
//! redraws the whole transcript in the new colours (what is in the terminal's scrollback was
//! drawn by pi, so it is drawn again), as a resize does. Problems with theme files are shown
//! in the transcript; pi keeps running with the built-in theme.

use super::app::App;
use super::screen::Frame;
use super::theme::Theme;
use crate::config::settings_file;
use crate::resources::themes::{Catalog, Origin};

#[derive(Debug, Default)]
pub struct Themes {
    pub catalog: Catalog,
    /// `--theme NAME` / `--use-theme`: the run's choice over the setting, until a theme is
    /// chosen while pi runs.
    pub cli_choice: Option<String>,
    /// The file of the theme in use, watched for saves (`theme_watch`).
    pub watch: Option<super::theme_watch::ThemeWatch>,
}

/// Where a theme comes from, for the theme list.
pub fn origin_text(catalog: &Catalog, name: &str) -> String {
    let Some(e) = catalog.get(name) else {
        return String::new();
    };
    match (e.origin, &e.path) {
        (Origin::Builtin, _) if name == "system" => "your terminal's colours".into(),
        (Origin::Builtin, _) => String::new(),
        (_, Some(p)) => tilde(p),
        (_, None) => String::new(),
    }
}

fn tilde(p: &std::path::Path) -> String {
    match dirs::home_dir().and_then(|h| p.strip_prefix(h).ok().map(|r| r.to_path_buf())) {
        Some(rest) => format!("~/{}", rest.display()),
        None => p.display().to_string(),
    }
}

/// The catalog for this run, the theme it starts with, and the lines to show about what could
/// not be used (file problems as warnings, an unknown theme as an error).
pub fn start(
    controller: &crate::controller::SessionController,
    choice: Option<&str>,
) -> (Catalog, Theme, Vec<(String, bool)>) {
    let catalog = Catalog::load(&controller.theme_sources());
    let (theme, why) = Theme::select(&catalog, choice);
    let mut lines: Vec<(String, bool)> = catalog
        .problems
        .iter()
        .map(|p| (format!("Warning: {p}"), false))
        .collect();
    lines.extend(why.map(|w| (format!("Error: {w}"), true)));
    (catalog, theme, lines)
}

impl App {
    /// Draw everything again in `theme`.
    pub fn apply_theme(&mut self, theme: Theme) {
        self.theme = theme;
        let (w, h) = (self.screen.width(), self.screen.height());
        let _ = self.screen.resize(w as u16, h as u16);
        let lines = self.transcript.reprint(w, &self.theme);
        let _ = self.screen.draw(&Frame {
            commit: lines,
            live: Vec::new(),
            cursor: None,
        });
        self.watch_theme_file();
    }

    /// Switch to the theme called `name`; the one-line reason when there is none.
    pub fn switch_theme(&mut self, name: &str) -> Result<(), String> {
        if name == self.theme.name {
            return Ok(());
        }
        let spec = self.themes.catalog.select(name)?.spec();
        self.apply_theme(Theme::from_spec(&spec, self.theme.color));
        Ok(())
    }

    /// A hook's `ui.set_theme`: as 1.6's `ctx.ui.setTheme(name)`, the theme is used at once
    /// and becomes the user's `theme` setting.
    pub fn set_theme_for_hook(&mut self, hook: &str, name: &str) -> Result<(), String> {
        self.switch_theme(name)?;
        self.themes.cli_choice = None;
        let path = crate::config::settings_path(&self.agent_dir);
        if let Err(e) = settings_file::set(&path, &["theme"], Some(name.into())) {
            let text = format!("[{hook}] theme {name} is in use but was not saved: {e}");
            self.notify(text, self.theme.warning);
        }
        Ok(())
    }

    /// `/reload`: the theme files are read again (hooks may contribute others now) and the
    /// theme in effect is chosen again from the settings as they are now.
    /// The terminal answered the colour query: its appearance decides from now on, and a
    /// `light/dark` setting whose half changed is applied (1.6's `reapplyForTerminal`).
    pub fn terminal_colors(&mut self, colors: super::terminal_colors::TerminalColors) {
        let Some(bg) = colors.background else {
            return;
        };
        let before = crate::resources::themes::current_appearance();
        let now = super::terminal_colors::appearance(bg, colors.foreground);
        crate::resources::themes::set_reported_appearance(now);
        if now == before {
            return;
        }
        let setting = self
            .themes
            .cli_choice
            .clone()
            .or_else(|| self.controller.setting_str("theme"));
        if setting.as_deref().is_some_and(|s| s.contains('/')) {
            let (theme, _) = Theme::select(&self.themes.catalog, setting.as_deref());
            self.apply_theme(theme);
        }
    }

    pub fn reload_themes(&mut self) {
        let catalog = Catalog::load(&self.controller.theme_sources());
        for p in &catalog.problems {
            self.transcript
                .notice(format!("Warning: {p}"), self.theme.warning);
        }
        self.themes.catalog = catalog;
        let setting = self
            .themes
            .cli_choice
            .clone()
            .or_else(|| self.controller.setting_str("theme"));
        let (theme, why) = Theme::select(&self.themes.catalog, setting.as_deref());
        if let Some(why) = why {
            self.transcript
                .notice(format!("Error: {why}"), self.theme.error);
        }
        self.apply_theme(theme);
    }
}
