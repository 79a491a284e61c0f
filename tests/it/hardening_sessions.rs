//! Issue 8, item 4: no file that is not a session is ever rewritten — not by `--session`, not by
//! a hook's `session.switch`, not by migrating an old file — and hook session calls stay inside
//! the session directory.
