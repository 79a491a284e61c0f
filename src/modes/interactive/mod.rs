//! Interactive mode: the terminal UI people sit in front of, a thin front end over the
//! session controller. The transcript goes to the terminal's own scrollback; only the live
//! region (streaming message, status, editor, footer) is redrawn, differentially.

pub mod editor;
pub mod text;
pub mod theme;
