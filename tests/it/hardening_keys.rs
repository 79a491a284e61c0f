//! Issue 8, item 8: keys stay with pi — the model's shell gets a filtered environment, pi is
//! not dumpable, and credential header values reach hooks redacted.
