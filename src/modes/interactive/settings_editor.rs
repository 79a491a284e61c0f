//! `/settings`: the editor of the settings pi reads, in place of the prompt editor, as 1.6's
//! (a list of settings with their values, Enter or Space to change one, type to search, Esc to
//! close; the theme as a list of its own that previews each theme as the cursor reaches it).
//! Unlike 1.6, which writes only the user's file, Tab switches between the user's settings and
//! a trusted project's `.pi/settings.json`; each scope shows what its file sets, or what is in
//! effect without it. This module is the editor's state and picture; it writes nothing: each
//! change comes back as an [`Action`] for `commands::settings` to write and apply.

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Map, Value};

use super::line_input::LineInput;
use super::text::{wrap, Line};
use super::theme::Theme;
use crate::config::settings_file;

/// Rows of settings shown at once (1.6's).
const VISIBLE: usize = 10;

/// Which file a change goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    User,
    Project,
}

/// How a setting's value is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bool,
    /// A string, one of the values.
    Choice,
    /// A theme's name, chosen from the themes there are.
    Theme,
}

/// One setting the editor offers.
#[derive(Debug, PartialEq, Eq)]
pub struct SettingItem {
    pub label: &'static str,
    pub description: &'static str,
    /// Where it is in `settings.json` (`["compaction", "enabled"]`).
    pub key: &'static [&'static str],
    pub kind: Kind,
    /// `(stored, shown)`, in the order Enter cycles through them.
    pub values: &'static [(&'static str, &'static str)],
    /// The value in effect when no file sets it.
    pub default: &'static str,
    /// Read from the user's settings only (a project cannot set it).
    pub user_only: bool,
}

const BOOL: &[(&str, &str)] = &[("true", "true"), ("false", "false")];
const QUEUE: &[(&str, &str)] = &[("one-at-a-time", "one-at-a-time"), ("all", "all")];

/// The settings this pi reads that 1.6's `/settings` offers, in 1.6's order, and the default
/// thinking level (1.6 sets it per model there; pi reads the one setting).
pub const ITEMS: &[SettingItem] = &[
    SettingItem {
        label: "Auto-compact",
        description: "Automatically compact context when it gets too large",
        key: &["compaction", "enabled"],
        kind: Kind::Bool,
        values: BOOL,
        default: "true",
        user_only: false,
    },
    SettingItem {
        label: "Steering mode",
        description: "Enter while streaming queues steering messages. 'one-at-a-time': deliver \
                      one, wait for response. 'all': deliver all at once.",
        key: &["steeringMode"],
        kind: Kind::Choice,
        values: QUEUE,
        default: "one-at-a-time",
        user_only: false,
    },
    SettingItem {
        label: "Follow-up mode",
        description: "Alt+Enter queues follow-up messages until agent stops. 'one-at-a-time': \
                      deliver one, wait for response. 'all': deliver all at once.",
        key: &["followUpMode"],
        kind: Kind::Choice,
        values: QUEUE,
        default: "one-at-a-time",
        user_only: false,
    },
    SettingItem {
        label: "Cache warming",
        description: "off; streaming while the agent runs; idle also between runs while \
                      continuation stays profitable (from the next start or /reload)",
        key: &["cacheWarming"],
        kind: Kind::Choice,
        values: &[("off", "off"), ("streaming", "streaming"), ("idle", "idle")],
        default: "idle",
        user_only: true,
    },
    SettingItem {
        label: "Hide thinking",
        description: "Hide thinking blocks in assistant responses",
        key: &["hideThinkingBlock"],
        kind: Kind::Bool,
        values: BOOL,
        default: "false",
        user_only: false,
    },
    SettingItem {
        label: "Default project trust",
        description: "Fallback behavior when no extension or saved trust decision decides \
                      project trust (from the next start)",
        key: &["defaultProjectTrust"],
        kind: Kind::Choice,
        values: &[
            ("ask", "Ask"),
            ("always", "Always trust"),
            ("never", "Never trust"),
        ],
        default: "ask",
        user_only: true,
    },
    SettingItem {
        label: "Default thinking level",
        description: "The thinking level a new session starts with when no --thinking or \
                      model suffix says otherwise (from the next session)",
        key: &["defaultThinkingLevel"],
        kind: Kind::Choice,
        values: &[
            ("off", "off"),
            ("minimal", "minimal"),
            ("low", "low"),
            ("medium", "medium"),
            ("high", "high"),
            ("xhigh", "xhigh"),
            ("max", "max"),
        ],
        default: "off",
        user_only: false,
    },
    SettingItem {
        label: "Theme",
        description: "Color theme for the interface",
        key: &["theme"],
        kind: Kind::Theme,
        values: &[],
        default: "system",
        user_only: false,
    },
];

/// What a key asks of the app.
#[derive(Debug, PartialEq)]
pub enum Action {
    None,
    Close,
    /// Store `value` for `item` in `scope`'s file (and apply it).
    Set {
        item: &'static SettingItem,
        scope: Scope,
        value: Value,
    },
    /// Show this theme while the theme list is open (nothing is stored).
    Preview(String),
}

/// The theme list, open over the settings.
struct ThemeMenu {
    /// (name, where it comes from).
    themes: Vec<(String, String)>,
    selected: usize,
    /// The theme in use when the list opened, shown again on Esc.
    original: String,
}

pub struct SettingsEditor {
    scope: Scope,
    files: [(PathBuf, Map<String, Value>); 2],
    trusted: bool,
    filter: LineInput,
    selected: usize,
    /// The last change's outcome, or why a key did nothing: (text, is an error).
    message: Option<(String, bool)>,
    menu: Option<ThemeMenu>,
    /// The themes there are, with where each comes from, for the theme list.
    themes: Vec<(String, String)>,
    /// The theme in use (which may differ from what the files say: `--theme`, a fallback).
    active_theme: String,
}

impl SettingsEditor {
    /// Over the user's file and the project's (`None` when the project is not trusted). A
    /// file that cannot be read shows as empty, and the problem is said at once.
    pub fn new(
        user: PathBuf,
        project: Option<PathBuf>,
        themes: Vec<(String, String)>,
        active_theme: String,
    ) -> SettingsEditor {
        let mut message = None;
        let mut read = |p: &PathBuf| match settings_file::read_object(p) {
            Ok(m) => m,
            Err(e) => {
                message = Some((e.to_string(), true));
                Map::new()
            }
        };
        let user_map = read(&user);
        let trusted = project.is_some();
        let project = project.unwrap_or_default();
        let project_map = if trusted { read(&project) } else { Map::new() };
        SettingsEditor {
            scope: Scope::User,
            files: [(user, user_map), (project, project_map)],
            trusted,
            filter: LineInput::new(),
            selected: 0,
            message,
            menu: None,
            themes,
            active_theme,
        }
    }

    pub fn scope(&self) -> Scope {
        self.scope
    }

    fn file(&self, scope: Scope) -> &(PathBuf, Map<String, Value>) {
        match scope {
            Scope::User => &self.files[0],
            Scope::Project => &self.files[1],
        }
    }

    /// The path `scope` writes to.
    pub fn path(&self, scope: Scope) -> &std::path::Path {
        &self.file(scope).0
    }

    /// A change was written: the editor shows the new value.
    pub fn stored(&mut self, item: &SettingItem, scope: Scope, value: Value) {
        let idx = usize::from(scope == Scope::Project);
        set_in(&mut self.files[idx].1, item.key, value);
    }

    /// What the last change means, under the list.
    pub fn say(&mut self, note: String) {
        self.message = Some((note, false));
    }

    pub fn active_theme(&self) -> &str {
        &self.active_theme
    }

    /// The theme the files choose: a trusted project's, else the user's, else `system`.
    pub fn theme_in_files(&self) -> String {
        let Some(item) = ITEMS.iter().find(|i| i.kind == Kind::Theme) else {
            return "system".into();
        };
        let project = self
            .trusted
            .then(|| self.own(item, Scope::Project))
            .flatten();
        project
            .or_else(|| self.own(item, Scope::User))
            .unwrap_or_else(|| item.default.to_string())
    }

    /// A change could not be written (nothing changed).
    pub fn failed(&mut self, why: String) {
        self.message = Some((why, true));
    }

    pub fn set_active_theme(&mut self, name: &str) {
        self.active_theme = name.to_string();
    }

    /// The value `scope`'s file sets for `item`, as stored.
    fn own(&self, item: &SettingItem, scope: Scope) -> Option<String> {
        settings_file::get(&self.file(scope).1, item.key).map(stored_text)
    }

    /// The value pi uses: the trusted project's over the user's over the default (the theme:
    /// the one in use).
    pub fn effective(&self, item: &SettingItem) -> String {
        if item.kind == Kind::Theme {
            return self.active_theme.clone();
        }
        let project = (!item.user_only && self.trusted)
            .then(|| self.own(item, Scope::Project))
            .flatten();
        project
            .or_else(|| self.own(item, Scope::User))
            .unwrap_or_else(|| item.default.to_string())
    }

    /// What the editor shows for `item` in the current scope: (value, where it comes from).
    fn shown(&self, item: &SettingItem) -> (String, Option<&'static str>) {
        if self.scope == Scope::Project && item.user_only {
            return (String::new(), Some("user settings only"));
        }
        if let Some(v) = self.own(item, self.scope) {
            return (v, None);
        }
        if item.kind == Kind::Theme {
            return (self.active_theme.clone(), Some("in use"));
        }
        match self.scope {
            Scope::Project => match self.own(item, Scope::User) {
                Some(v) => (v, Some("from user settings")),
                None => (item.default.to_string(), Some("default")),
            },
            Scope::User => (item.default.to_string(), Some("default")),
        }
    }

    fn matching(&self) -> Vec<&'static SettingItem> {
        let f = self.filter.text().to_lowercase();
        ITEMS
            .iter()
            .filter(|i| subsequence(&f, &i.label.to_lowercase()))
            .collect()
    }

    /// A key; what the app should do about it.
    pub fn handle_key(&mut self, key: KeyEvent) -> Action {
        if self.menu.is_some() {
            return self.menu_key(key);
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let items = self.matching();
        match key.code {
            KeyCode::Esc => return Action::Close,
            KeyCode::Char('c') if ctrl => return Action::Close,
            KeyCode::Up if !items.is_empty() => {
                self.selected = (self.selected + items.len() - 1) % items.len();
            }
            KeyCode::Down if !items.is_empty() => {
                self.selected = (self.selected + 1) % items.len();
            }
            KeyCode::Tab | KeyCode::BackTab => self.switch_scope(),
            KeyCode::Enter => return self.activate(),
            KeyCode::Char(' ') if self.filter.is_empty() => return self.activate(),
            _ => {
                let before = self.filter.text().to_string();
                self.filter.handle_key(key);
                if self.filter.text() != before {
                    self.selected = 0;
                }
            }
        }
        Action::None
    }

    fn switch_scope(&mut self) {
        if !self.trusted {
            self.message = Some((
                "This project is not trusted: only your user settings can be changed".into(),
                true,
            ));
            return;
        }
        self.scope = match self.scope {
            Scope::User => Scope::Project,
            Scope::Project => Scope::User,
        };
        self.message = None;
    }

    fn activate(&mut self) -> Action {
        let items = self.matching();
        let Some(item) = items.get(self.selected).copied() else {
            return Action::None;
        };
        if self.scope == Scope::Project && item.user_only {
            self.message = Some((
                format!("{} is read from your user settings only", item.label),
                true,
            ));
            return Action::None;
        }
        if item.kind == Kind::Theme {
            let current = self.shown(item).0;
            let selected = self
                .themes
                .iter()
                .position(|(n, _)| *n == current)
                .unwrap_or(0);
            self.menu = Some(ThemeMenu {
                themes: self.themes.clone(),
                selected,
                original: self.active_theme.clone(),
            });
            return Action::None;
        }
        let current = self.shown(item).0;
        let at = item.values.iter().position(|(v, _)| *v == current);
        let next = item.values[at.map_or(0, |i| (i + 1) % item.values.len())].0;
        let value = match item.kind {
            Kind::Bool => Value::Bool(next == "true"),
            _ => Value::String(next.to_string()),
        };
        Action::Set {
            item,
            scope: self.scope,
            value,
        }
    }

    fn menu_key(&mut self, key: KeyEvent) -> Action {
        let Some(menu) = self.menu.as_mut() else {
            return Action::None;
        };
        let n = menu.themes.len().max(1);
        match key.code {
            KeyCode::Up => {
                menu.selected = (menu.selected + n - 1) % n;
            }
            KeyCode::Down => {
                menu.selected = (menu.selected + 1) % n;
            }
            KeyCode::Esc => {
                let original = menu.original.clone();
                self.menu = None;
                return Action::Preview(original);
            }
            KeyCode::Enter | KeyCode::Char(' ') => {
                let name = menu.themes.get(menu.selected).map(|(n, _)| n.clone());
                self.menu = None;
                let item = ITEMS.iter().find(|i| i.kind == Kind::Theme);
                return match (name, item) {
                    (Some(name), Some(item)) => Action::Set {
                        item,
                        scope: self.scope,
                        value: Value::String(name),
                    },
                    _ => Action::None,
                };
            }
            _ => return Action::None,
        }
        match menu.themes.get(menu.selected) {
            Some((name, _)) => Action::Preview(name.clone()),
            None => Action::None,
        }
    }

    /// The editor's rows.
    pub fn render(&self, width: usize, theme: &Theme) -> Vec<Line> {
        let mut out = vec![Line::styled("─".repeat(width), theme.border)];
        match &self.menu {
            Some(menu) => self.render_menu(menu, width, theme, &mut out),
            None => self.render_list(width, theme, &mut out),
        }
        out.push(Line::styled("─".repeat(width), theme.border));
        out.into_iter().map(|l| l.truncated(width)).collect()
    }

    fn render_list(&self, width: usize, theme: &Theme, out: &mut Vec<Line>) {
        let mut title = Line::styled("Settings", theme.accent.bold());
        let (scope, other) = match self.scope {
            Scope::User => ("user", "project"),
            Scope::Project => ("project", "user"),
        };
        title.push(format!("  {scope}: "), theme.muted);
        title.push(tilde(self.path(self.scope)), theme.text);
        if self.trusted {
            title.push(format!("  (Tab: {other})"), theme.dim);
        }
        out.push(title);
        out.push(Line::new());
        let (filter, _) = self.filter.render("> ", theme.text, width);
        out.extend(filter);
        out.push(Line::new());
        let items = self.matching();
        if items.is_empty() {
            out.push(Line::styled("  No matching settings", theme.dim));
        }
        let label_w = ITEMS.iter().map(|i| i.label.len()).max().unwrap_or(0);
        let start = self
            .selected
            .saturating_sub(VISIBLE / 2)
            .min(items.len().saturating_sub(VISIBLE));
        for (i, item) in items.iter().enumerate().skip(start).take(VISIBLE) {
            let sel = i == self.selected;
            let (value, from) = self.shown(item);
            let shown = item
                .values
                .iter()
                .find(|(v, _)| *v == value)
                .map_or(value.as_str(), |(_, s)| s);
            let mut l = Line::styled(if sel { "→ " } else { "  " }, theme.accent);
            let label = format!("{:<label_w$}  ", item.label);
            l.push(label, if sel { theme.accent } else { theme.text });
            l.push(shown, if sel { theme.accent } else { theme.muted });
            if let Some(from) = from {
                let sep = if shown.is_empty() { "" } else { " " };
                l.push(format!("{sep}({from})"), theme.dim);
            }
            out.push(l);
        }
        if items.len() > VISIBLE {
            out.push(Line::styled(
                format!("  ({}/{})", self.selected + 1, items.len()),
                theme.dim,
            ));
        }
        if let Some(item) = items.get(self.selected) {
            out.push(Line::new());
            let d = Line::styled(item.description, theme.dim);
            out.extend(wrap(
                &d.prefixed("  ", theme.dim),
                width,
                &Line::plain("  "),
            ));
        }
        if let Some((text, error)) = &self.message {
            let style = if *error { theme.error } else { theme.success };
            out.extend(wrap(
                &Line::styled(format!("  {text}"), style),
                width,
                &Line::plain("  "),
            ));
        }
        out.push(Line::new());
        let tab = if self.trusted {
            " · Tab user/project"
        } else {
            ""
        };
        out.push(Line::styled(
            format!("  Type to search · Enter/Space to change{tab} · Esc to close"),
            theme.dim,
        ));
    }

    fn render_menu(&self, menu: &ThemeMenu, width: usize, theme: &Theme, out: &mut Vec<Line>) {
        out.push(Line::styled("Theme", theme.accent.bold()));
        out.push(Line::new());
        out.push(Line::styled("Select a theme.", theme.muted));
        out.push(Line::new());
        let name_w = menu.themes.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
        let start = menu
            .selected
            .saturating_sub(VISIBLE / 2)
            .min(menu.themes.len().saturating_sub(VISIBLE));
        for (i, (name, from)) in menu.themes.iter().enumerate().skip(start).take(VISIBLE) {
            let sel = i == menu.selected;
            let mut l = Line::styled(if sel { "→ " } else { "  " }, theme.accent);
            let check = if *name == menu.original { "✓ " } else { "  " };
            l.push(
                format!("{check}{name:<name_w$}"),
                if sel { theme.accent } else { theme.text },
            );
            if !from.is_empty() {
                l.push(format!("  {from}"), theme.muted);
            }
            out.push(l);
        }
        out.push(Line::new());
        out.push(Line::styled("  Enter to select · Esc to go back", theme.dim).truncated(width));
    }
}

/// A stored value as the editor compares and shows it (`true`, `all`, `dark`).
fn stored_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn set_in(map: &mut Map<String, Value>, key: &[&str], value: Value) {
    let Some((last, parents)) = key.split_last() else {
        return;
    };
    let mut cur = map;
    for k in parents {
        let slot = cur
            .entry((*k).to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if !slot.is_object() {
            *slot = Value::Object(Map::new());
        }
        let Value::Object(inner) = slot else { return };
        cur = inner;
    }
    cur.insert((*last).to_string(), value);
}

/// `~/…` for a path under the home directory.
fn tilde(p: &std::path::Path) -> String {
    match dirs::home_dir().and_then(|h| p.strip_prefix(h).ok().map(|r| r.to_path_buf())) {
        Some(rest) => format!("~/{}", rest.display()),
        None => p.display().to_string(),
    }
}

/// Whether the letters of `needle` appear in `hay` in order.
fn subsequence(needle: &str, hay: &str) -> bool {
    let mut it = hay.chars();
    needle.chars().all(|c| it.any(|h| h == c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyEventKind;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent {
            code,
            modifiers: KeyModifiers::NONE,
            kind: KeyEventKind::Press,
            state: crossterm::event::KeyEventState::NONE,
        }
    }

    fn editor(trusted: bool) -> (tempfile::TempDir, SettingsEditor) {
        let tmp = tempfile::tempdir().unwrap();
        let user = tmp.path().join("settings.json");
        std::fs::write(&user, r#"{"steeringMode": "all", "theme": "dark"}"#).unwrap();
        let project = tmp.path().join("project.json");
        std::fs::write(&project, r#"{"followUpMode": "all"}"#).unwrap();
        let themes = vec![
            ("system".to_string(), String::new()),
            ("dark".to_string(), String::new()),
            ("light".to_string(), String::new()),
        ];
        let e = SettingsEditor::new(user, trusted.then_some(project), themes, "dark".into());
        (tmp, e)
    }

    fn texts(e: &SettingsEditor) -> Vec<String> {
        let t = Theme::new(super::super::theme::ThemeName::Dark, false);
        e.render(80, &t).iter().map(Line::text).collect()
    }

    #[test]
    fn enter_cycles_a_value_in_the_current_scope() {
        let (_t, mut e) = editor(true);
        assert!(texts(&e)
            .iter()
            .any(|l| l.starts_with("→ Auto-compact") && l.contains("true (default)")));
        let Action::Set { item, scope, value } = e.handle_key(key(KeyCode::Enter)) else {
            panic!()
        };
        assert_eq!(
            (item.label, scope, value),
            ("Auto-compact", Scope::User, Value::Bool(false))
        );
        e.handle_key(key(KeyCode::Down));
        let Action::Set { value, .. } = e.handle_key(key(KeyCode::Char(' '))) else {
            panic!()
        };
        assert_eq!(value, Value::String("one-at-a-time".into()));
    }

    #[test]
    fn the_project_scope_shows_what_it_inherits_and_refuses_user_only_keys() {
        let (_t, mut e) = editor(true);
        e.handle_key(key(KeyCode::Tab));
        let rows = texts(&e);
        assert!(
            rows.iter()
                .any(|l| l.contains("Steering mode") && l.contains("all (from user settings)")),
            "{rows:?}"
        );
        assert!(
            rows.iter()
                .any(|l| l.contains("Follow-up mode") && l.ends_with("all")),
            "{rows:?}"
        );
        assert!(rows
            .iter()
            .any(|l| l.contains("Cache warming") && l.contains("(user settings only)")));
        for c in "cache".chars() {
            e.handle_key(key(KeyCode::Char(c)));
        }
        assert_eq!(e.handle_key(key(KeyCode::Enter)), Action::None);
        assert!(texts(&e)
            .iter()
            .any(|l| l.contains("read from your user settings only")));
    }

    #[test]
    fn an_untrusted_project_keeps_the_user_scope() {
        let (_t, mut e) = editor(false);
        e.handle_key(key(KeyCode::Tab));
        assert_eq!(e.scope(), Scope::User);
        assert!(texts(&e).iter().any(|l| l.contains("not trusted")));
    }

    #[test]
    fn the_theme_list_previews_and_esc_restores() {
        let (_t, mut e) = editor(true);
        for c in "theme".chars() {
            e.handle_key(key(KeyCode::Char(c)));
        }
        assert_eq!(e.handle_key(key(KeyCode::Enter)), Action::None);
        assert!(texts(&e).iter().any(|l| l.starts_with("→ ✓ dark")));
        assert_eq!(
            e.handle_key(key(KeyCode::Down)),
            Action::Preview("light".into())
        );
        assert_eq!(
            e.handle_key(key(KeyCode::Esc)),
            Action::Preview("dark".into())
        );
        e.handle_key(key(KeyCode::Enter));
        e.handle_key(key(KeyCode::Up));
        let Action::Set { value, .. } = e.handle_key(key(KeyCode::Enter)) else {
            panic!()
        };
        assert_eq!(value, Value::String("system".into()));
    }
}
