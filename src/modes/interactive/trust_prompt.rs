//! The project-trust question at the terminal, before anything of the project loads: what it
//! would load (its settings, the hooks by command, skills, prompt templates, SYSTEM.md, MCP
//! servers), and three answers — trust once, trust always (remembered in `trust.json`), not
//! now. Runs in raw mode on its own and erases itself, so the interactive mode starts on a
//! clean screen. Esc, Ctrl+C or a closed terminal mean "not now": nothing loads unasked.

use std::path::Path;

use crossterm::event::{self, Event, KeyEventKind};

use super::dialog::ActiveDialog;
use super::screen::{Frame, Screen};
use super::terminal::Terminal;
use super::theme::Theme;
use crate::hooks::ui::{Dialog, DialogAnswer};
use crate::resources::context::TRUST_REQUIRING_ENTRIES;

/// What the person answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustAnswer {
    Once,
    Always,
    NotNow,
}

const ONCE: &str = "Trust this time";
const ALWAYS: &str = "Always trust this project";
const NOT_NOW: &str = "Not now (load nothing from the project)";

/// The lines describing what trusting `cwd` would load.
pub fn describe_project(cwd: &Path, home: &Path) -> Vec<String> {
    let dir = cwd.join(".pi");
    let mut out = Vec::new();
    for entry in TRUST_REQUIRING_ENTRIES {
        let p = dir.join(entry);
        if !p.exists() {
            continue;
        }
        match entry {
            "settings.json" => {
                out.push(format!("settings   {}", p.display()));
                let settings = crate::config::Settings::load(&p, None);
                if let Ok(s) = settings {
                    match crate::controller::hooks::specs::project_specs(&s, cwd) {
                        Ok(specs) => {
                            for spec in specs {
                                out.push(format!("hook       {}", command_of(&spec)));
                            }
                        }
                        Err(e) => out.push(format!("hooks      (unreadable: {e})")),
                    }
                }
            }
            "hooks" => {
                // Hooks from `.pi/hooks/` are listed with the settings' hooks above when a
                // settings file exists; otherwise list them here.
                if !dir.join("settings.json").exists() {
                    let empty = crate::config::Settings::from_value(serde_json::Value::Null);
                    if let Ok(specs) = crate::controller::hooks::specs::project_specs(&empty, cwd) {
                        for spec in specs {
                            out.push(format!("hook       {}", command_of(&spec)));
                        }
                    }
                }
            }
            "skills" | "prompts" | "extensions" | "themes" => {
                let n = std::fs::read_dir(&p).map(|d| d.count()).unwrap_or(0);
                out.push(format!("{entry:<10} {n} in {}", p.display()));
            }
            "mcp.json" => {
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                let (servers, problems) =
                    crate::mcp::config::parse(&text, crate::mcp::config::Source::Project);
                for s in servers {
                    out.push(format!(
                        "MCP server {} ({})",
                        s.name,
                        crate::mcp::hub::describe(&s.transport)
                    ));
                }
                match problems.len() {
                    0 => {}
                    1 => out.push(format!("MCP        {} (1 entry skipped)", p.display())),
                    n => out.push(format!("MCP        {} ({n} entries skipped)", p.display())),
                }
            }
            other => out.push(format!("{other:<10} {}", p.display())),
        }
    }
    let user_skills = home.join(".agents").join("skills");
    for a in cwd.ancestors() {
        let s = a.join(".agents").join("skills");
        if s.exists() && s != user_skills {
            out.push(format!("skills     {}", s.display()));
        }
    }
    out
}

fn command_of(spec: &crate::hooks::spec::HookSpec) -> String {
    let mut words = vec![spec.program.display().to_string()];
    words.extend(spec.args.iter().cloned());
    shell_words::join(words)
}

/// Ask on the terminal. `Err` when the terminal cannot be used (then nothing is trusted).
pub fn ask(cwd: &Path, home: &Path, theme: &Theme) -> std::io::Result<TrustAnswer> {
    let loads = describe_project(cwd, home);
    let mut message = format!(
        "{} has project files that change what pi does. Trusting it loads:\n",
        cwd.display()
    );
    for l in &loads {
        message.push_str("  ");
        message.push_str(l);
        message.push('\n');
    }
    let options = vec![ONCE.to_string(), ALWAYS.to_string(), NOT_NOW.to_string()];
    let mut dialog = ActiveDialog::new(
        "pi",
        Dialog::Select {
            title: "Trust this project?".into(),
            options,
        },
        None,
    )
    .with_message(message);
    let term = Terminal::enter()?;
    let (w, h) = Terminal::size();
    let mut screen = Screen::on_stdout(w, h);
    let answer = loop {
        let now = std::time::Instant::now();
        let (lines, cursor) = dialog.render(screen.width(), screen.height(), theme, now);
        screen.draw(&Frame {
            commit: Vec::new(),
            live: lines,
            cursor,
        })?;
        match event::read()? {
            Event::Key(k) if k.kind != KeyEventKind::Release => match dialog.handle_key(k) {
                Some(DialogAnswer::Value(v)) if v == ONCE => break TrustAnswer::Once,
                Some(DialogAnswer::Value(v)) if v == ALWAYS => break TrustAnswer::Always,
                Some(_) => break TrustAnswer::NotNow,
                None => {}
            },
            Event::Resize(w, h) => screen.resize(w, h)?,
            _ => {}
        }
    };
    screen.clear_live()?;
    drop(term);
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_question_names_each_project_mcp_server_and_what_it_runs() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("proj");
        std::fs::create_dir_all(cwd.join(".pi")).unwrap();
        std::fs::write(
            cwd.join(".pi/mcp.json"),
            r#"{"mcpServers": {"db": {"command": "npx", "args": ["-y", "db-mcp"]},
                "web": {"type": "http", "url": "https://example.com/mcp"},
                "bad": {"type": "sse", "url": "https://x"}}}"#,
        )
        .unwrap();
        let lines = describe_project(&cwd, dir.path());
        assert!(
            lines.contains(&"MCP server db (npx -y db-mcp)".to_string()),
            "{lines:?}"
        );
        assert!(
            lines.contains(&"MCP server web (https://example.com/mcp)".to_string()),
            "{lines:?}"
        );
        assert!(
            lines.iter().any(|l| l.contains("(1 entry skipped)")),
            "{lines:?}"
        );
    }
}
