//! What pi lets reach a terminal. Text from models, hooks, tools, MCP servers, session files
//! and project paths is shown to a person, and a terminal obeys escape sequences in what it
//! is sent: it could be made to set the clipboard, rename the window, plant links, or redraw
//! an approval dialog so it shows another command. This module owns the rule (`sanitize`:
//! controls become visible stand-ins) and the three ways out that apply it — the interactive
//! mode's spans (`modes::interactive::text`, through [`sanitize::row`]), plain lines on stdout
//! and stderr (`out`, the `term_println!` macros), and JSON that may be read on a terminal
//! (`json`). pi's own styling and cursor bytes are added after it, by the encoders only.
//!
//! A leaf: it depends on nothing else in pi, so every part of pi can use it.

pub mod json;
#[macro_use]
pub mod out;
pub mod sanitize;
