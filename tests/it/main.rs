//! The integration test binary: black-box tests of the `pi` executable against a mock model
//! server (wiremock) and the scripted `faux` provider, in hermetic temp homes.

mod common;

mod cli;
mod harness;
mod json_mode;
mod providers;
mod signals;
mod tools;
mod hooks_semantics;
