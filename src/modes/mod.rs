//! modes
