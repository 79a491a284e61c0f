//! Issue 8, items 3 and 7: a pin pins what runs (the verified file is the one executed), and
//! nothing pi starts outlives it, even after `kill -9` of pi (the watchdog).
