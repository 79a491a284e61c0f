//! Issue 8, items 1, 2, 9 and 10: tool filters mean what the protocol says, a managed hook
//! cannot be swapped through the user's environment, untrusted paths stay untrusted, and the
//! host is strict where the protocol document is.
