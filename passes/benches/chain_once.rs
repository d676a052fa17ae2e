//! One run of the chain benchmark's pipeline (`FoldConstant, EliminateCommonSubexpr,
//! DeadCodeElimination` on `mlp_chain(K)`), for counting rather than timing: run under
//! callgrind, it gives the instructions and the simulated cache misses of the pipeline alone,
//! which stay the same on a busy machine where a timer does not.
//!
//! ```text
//! cargo bench -p irpass-passes --bench chain_once --no-run   # prints the binary's path
//! valgrind --tool=callgrind --cache-sim=yes --toggle-collect='*run_pipeline*' \
//!     target/release/deps/chain_once-<hash> 100000
//! ```
//!
//! K is the first argument that is a number (default 1 000). `cargo bench` runs it once at the
//! default size, which also checks that the pipeline does its job.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Instant;

use irpass::{Pass, PassContext};
use irpass_passes::ir::Module;
use irpass_passes::ir::models::mlp_chain;

mod chain;

/// The measured region: callgrind's `--toggle-collect` counts only what runs inside.
#[inline(never)]
fn run_pipeline(pipeline: &Pass<Module>, module: Module, ctx: &PassContext) -> Module {
    pipeline.run_in(module, ctx).expect("the pipeline runs")
}

fn main() {
    let k = std::env::args()
        .skip(1)
        .find_map(|a| a.parse::<usize>().ok())
        .unwrap_or(1_000);
    let pipeline = chain::pipeline();
    let ctx = PassContext::builder()
        .opt_level(3)
        .build()
        .expect("a valid context");
    // As in the criterion bench: the module as parsed from its text.
    let module = Module::parse(&mlp_chain(k).to_string()).expect("the model parses");
    let faults = minor_faults();
    let start = Instant::now();
    let out = run_pipeline(&pipeline, module, &ctx);
    let elapsed = start.elapsed();
    let faults = minor_faults()
        .zip(faults)
        .map(|(after, before)| after - before);
    chain::assert_optimised(&out, k);
    println!(
        "chain_once: K = {k}, one run {:.1} ms ({:.2} µs per layer), {} minor page faults",
        elapsed.as_secs_f64() * 1e3,
        elapsed.as_secs_f64() * 1e6 / k as f64,
        faults.map_or("?".to_string(), |f| f.to_string())
    );
    black_box(out);
}

/// The process's minor page faults so far (Linux: field 10 of `/proc/self/stat`), to see how
/// much of a run is the kernel handing out fresh pages.
fn minor_faults() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let after_name = &stat[stat.rfind(')')? + 2..];
    after_name.split(' ').nth(7)?.parse().ok()
}
