//! Hook benchmarks (SPEC.md section 9), printed as medians and percentiles:
//! - gate round trip (`tool_call` request → reply) for the echo hook (answers at once: the host
//!   and the kernel only; once on a current-thread runtime too), the compiled Rust policy
//!   example and the Python sample policy;
//! - the time the runner adds per tool call with 5 gate hooks subscribed;
//! - pi 1.6's `permission-gate.ts` through the extension bridge: spawn to an accepted
//!   `register` (Node's start, jiti compiling the extension, the handshake), and its gate round
//!   trip (skipped, saying why, without Node, the bridge's dependencies or tests/ts-pi).
//!
//! Run through `python3 bench/run.py` (which builds the example first), or directly with
//! `cargo build --release --examples && cargo bench --bench hooks`.

// Figures for the person running the benchmark, not pi's output.
#![allow(clippy::disallowed_macros)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pi::hooks::calls::HostCalls;
use pi::hooks::extension;
use pi::hooks::host::{self, InstanceEndpoint};
use pi::hooks::instance::{HookInstance, HostContext};
use pi::hooks::runner::{Endpoint, Runner};
use pi::hooks::spec::{HookSource, HookSpec};
use serde_json::json;
use tokio::sync::mpsc;

const N: usize = 2000;

fn pct(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

async fn start(program: &Path, root: &Path) -> anyhow::Result<Arc<HookInstance>> {
    start_spec(
        HookSpec::new("bench", program.to_path_buf(), HookSource::Cli),
        root,
    )
    .await
}

async fn start_spec(spec: HookSpec, root: &Path) -> anyhow::Result<Arc<HookInstance>> {
    let mut ctx = HostContext::new(root.to_path_buf(), "print");
    ctx.capabilities = host::capabilities("print");
    let calls = Arc::new(HostCalls::new("print", root.to_path_buf()));
    let (tx, _rx) = mpsc::unbounded_channel();
    Ok(HookInstance::start(spec, ctx, calls, tx).await?)
}

async fn round_trips(label: &str, program: &Path, root: &Path) -> anyhow::Result<()> {
    instance_round_trips(label, start(program, root).await?).await
}

async fn instance_round_trips(label: &str, h: Arc<HookInstance>) -> anyhow::Result<()> {
    let payload =
        json!({"tool_call_id": "c", "tool_name": "bash", "input": {"command": "echo hi"}});
    for _ in 0..200 {
        h.request("tool_call", payload.clone(), Duration::from_secs(5))
            .await?;
    }
    let mut us = Vec::with_capacity(N);
    for _ in 0..N {
        let t0 = Instant::now();
        h.request("tool_call", payload.clone(), Duration::from_secs(5))
            .await?;
        us.push(t0.elapsed().as_micros() as u64);
    }
    us.sort_unstable();
    println!(
        "gate round trip, {label:<14} p50 {:>5} µs   p99 {:>5} µs   ({N} calls)",
        pct(&us, 0.5),
        pct(&us, 0.99)
    );
    h.shutdown("bench done").await;
    Ok(())
}

async fn gate_ns(r: &Runner, input: &serde_json::Value) -> Vec<u64> {
    let mut ns = Vec::with_capacity(N);
    for _ in 0..N {
        let t0 = Instant::now();
        let _ = r.gate("c", "bash", input.clone(), &|_| Ok(())).await;
        ns.push(t0.elapsed().as_nanos() as u64);
    }
    ns.sort_unstable();
    ns
}

async fn five_gates(program: &Path, root: &Path) -> anyhow::Result<()> {
    let mut hooks = Vec::new();
    for _ in 0..5 {
        hooks.push(start(program, root).await?);
    }
    let endpoints: Vec<Arc<dyn Endpoint>> = hooks
        .iter()
        .map(|h| Arc::new(InstanceEndpoint(h.clone())) as Arc<dyn Endpoint>)
        .collect();
    let with = Runner::new(endpoints, None);
    let without = Runner::new(Vec::new(), None);
    let input = json!({"command": "echo hi"});
    let base = gate_ns(&without, &input).await;
    let five = gate_ns(&with, &input).await;
    let added_us = (pct(&five, 0.5).saturating_sub(pct(&base, 0.5))) as f64 / 1000.0;
    println!(
        "5 gate hooks (Rust), added per tool call: median {added_us:.1} µs (p99 {:.1} µs)",
        pct(&five, 0.99) as f64 / 1000.0
    );
    for h in hooks {
        h.shutdown("bench done").await;
    }
    Ok(())
}

/// pi 1.6's own example through the bridge, as `pi -e permission-gate.ts` runs it.
async fn bridge(root: &Path) -> anyhow::Result<()> {
    let ext = root.join(
        "tests/ts-pi/node_modules/@earendil-works/pi-coding-agent/examples/extensions/permission-gate.ts",
    );
    if !ext.is_file() {
        println!(
            "bridge skipped: {} is missing (npm ci --prefix tests/ts-pi)",
            ext.display()
        );
        return Ok(());
    }
    let runtime = match extension::runtime(&ext) {
        Ok(r) => r,
        Err(e) => {
            println!("bridge skipped: {e}");
            return Ok(());
        }
    };
    let spec = || extension::spec(&ext, HookSource::Cli, &runtime);
    // The first start fills the page cache and Node's compile cache, as any start after a
    // user's first one finds them.
    start_spec(spec(), root).await?.shutdown("bench done").await;
    const STARTS: usize = 10;
    let mut ms = Vec::with_capacity(STARTS);
    for _ in 0..STARTS {
        let t0 = Instant::now();
        let h = start_spec(spec(), root).await?;
        ms.push(t0.elapsed().as_micros() as u64);
        h.shutdown("bench done").await;
    }
    ms.sort_unstable();
    println!(
        "bridge start to register, permission-gate.ts: median {:.1} ms   min {:.1} ms   ({STARTS} starts)",
        pct(&ms, 0.5) as f64 / 1000.0,
        ms[0] as f64 / 1000.0
    );
    instance_round_trips("bridge (TS ext)", start_spec(spec(), root).await?).await
}

fn main() -> anyhow::Result<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let rust_hook = root.join("target/release/examples/policy");
    let py_hook = root.join("sample-hooks/policy.py");
    if !rust_hook.exists() {
        anyhow::bail!(
            "{} is missing: run `cargo build --release --examples` first",
            rust_hook.display()
        );
    }
    // `PI_BENCH_RUNTIME=current` measures on a current-thread runtime, to separate the
    // host's own cost from cross-thread wake-ups of the 2-worker runtime `pi` uses.
    let rt = if std::env::var("PI_BENCH_RUNTIME").as_deref() == Ok("current") {
        println!("(current-thread runtime)");
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?
    };
    // The echo hook answers at once: its round trip is the host plus the kernel's wake-ups.
    // On the current-thread runtime the two processes tend to ping-pong on one CPU, which
    // shows what the host itself adds.
    let echo = root.join("target/release/examples/echo_hook");
    if echo.exists() {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
            .block_on(round_trips("echo, 1 thread", &echo, &root))?;
    }
    rt.block_on(async {
        if echo.exists() {
            round_trips("echo hook", &echo, &root).await?;
        }
        round_trips("Rust policy", &rust_hook, &root).await?;
        round_trips("Python policy", &py_hook, &root).await?;
        five_gates(&rust_hook, &root).await?;
        bridge(&root).await
    })
}
