//! Every registered pass and pipeline does the same work per block of a generated network
//! however many blocks it has, counted deterministically as heap allocations and bytes
//! allocated (time is for the benchmarks): a pass that re-copied or re-scanned what it had
//! already built would allocate more per block on the longer network.
//!
//! The network is `irpass_passes::ir::models::conv_chain`, in which every pass of the library has
//! something to do in every block (the test checks that each one changes it, InferType aside,
//! which only records types).

mod support;

use irpass::{Pass, PassContext};
use irpass_passes as _; // the passes are found through the registry
use irpass_passes::ir::Module;
use irpass_passes::ir::models::conv_chain;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use support::registered_passes;

/// The system allocator, counting. The one test of this binary runs on one thread (the
/// context has one), and nothing else allocates meanwhile.
#[global_allocator]
static ALLOCATOR: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

/// Blocks of the short and the long network.
const SHORT: usize = 30;
const LONG: usize = 300;

/// Allocations and bytes of one run of `pass` on a fresh network of `blocks` blocks, and
/// whether the pass changed it.
fn cost(pass: &Pass<Module>, ctx: &PassContext, blocks: usize) -> (f64, f64, bool) {
    let module = conv_chain(blocks);
    let before = module.clone();
    let region = Region::new(ALLOCATOR);
    let out = pass
        .run_in(module, ctx)
        .unwrap_or_else(|e| panic!("{} on {blocks} blocks: {e}", pass.info().name));
    let change = region.change();
    let allocations = (change.allocations + change.reallocations) as f64;
    let bytes = change.bytes_allocated as f64 + change.bytes_reallocated.max(0) as f64;
    let changed = !out.same_as(&before) || out.to_string() != before.to_string();
    (allocations, bytes, changed)
}

#[test]
fn every_registered_pass_allocates_the_same_per_block_on_a_network_ten_times_longer() {
    let ctx = PassContext::builder()
        .opt_level(3)
        .threads(1)
        .build()
        .unwrap();
    let (mut report, mut failures) = (Vec::new(), Vec::new());
    // PrintIR aside: it prints the module, and the printer's cost is tested with the IR.
    for name in registered_passes() {
        let name = name.as_str();
        let pass = irpass::registry::lookup::<Module>(name).unwrap();
        // The fixed cost of a run (context, tables' first allocations), taken off both.
        let (n0, b0, _) = cost(&pass, &ctx, 0);
        let (n1, b1, changed) = cost(&pass, &ctx, SHORT);
        let (n2, b2, _) = cost(&pass, &ctx, LONG);
        assert!(
            changed || name == "InferType",
            "{name} left the network unchanged"
        );
        let per = |total: f64, fixed: f64, blocks: usize| (total - fixed).max(0.0) / blocks as f64;
        let (a_short, a_long) = (per(n1, n0, SHORT), per(n2, n0, LONG));
        let (by_short, by_long) = (per(b1, b0, SHORT), per(b2, b0, LONG));
        report.push(format!(
            "{name}: {a_short:.1} / {a_long:.1} allocations and {by_short:.0} / {by_long:.0} bytes per block"
        ));
        // Allowed: tables and lists that grow by doubling (their last growth may land just
        // before or after the end), a few allocations per block more; fewer per block on the
        // longer network is a fixed cost spread thinner, not a growth.
        if a_long - a_short > 1.0 + 0.05 * a_short {
            failures.push(format!(
                "{name}: {a_short:.2} allocations per block at {SHORT} blocks, {a_long:.2} at {LONG}"
            ));
        }
        if by_long > by_short * 1.5 || by_short > by_long * 1.5 {
            failures.push(format!(
                "{name}: {by_short:.0} bytes per block at {SHORT} blocks, {by_long:.0} at {LONG}"
            ));
        }
    }
    println!("{}", report.join("\n"));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
