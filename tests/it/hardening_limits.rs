//! Issue 8, items 5 and 6: abort and signals end waits on hooks at once, deadlines hooks ask
//! for are capped, and a hook cannot exhaust pi's memory (in-flight calls, nesting, logs).
