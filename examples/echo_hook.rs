//! The smallest conforming hook: it registers for `tool_call` and answers every request with an
//! empty reply at once. The hook benchmark (`cargo bench --bench hooks`) times it to separate
//! what the host costs per round trip from what a real policy costs.
//!
//! Build: `cargo build --release --examples` → `target/release/examples/echo_hook`.

use pi_hook::{Gate, Hook};

fn main() {
    let mut hook = Hook::new("echo");
    hook.on_tool_call(&[], |_call, _ctx| Gate::allow());
    hook.inline("tool_call");
    hook.run()
}
