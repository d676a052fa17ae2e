//! The passes of the benchmarked pipeline do the same work per layer of the generated MLP
//! chain however long it is, counted deterministically as heap allocations and bytes
//! allocated (time is for the benchmarks). A pass that re-copied or
//! re-scanned what it had already built would allocate more per layer on the longer chain.

use irpass::{Pass, PassContext};
use irpass_passes::ir::Module;
use irpass_passes::ir::models::mlp_chain;
use irpass_passes::{DeadCodeElimination, EliminateCommonSubexpr, FoldConstant, InferType};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

/// The system allocator, counting. The one test of this binary runs on one thread (the
/// context has one), and nothing else allocates meanwhile.
#[global_allocator]
static ALLOCATOR: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

/// Allocations and bytes per layer of each pass, run one after the other on a chain of `k`
/// layers as the benchmark's pipeline runs them.
fn per_layer(k: usize) -> Vec<(&'static str, f64, f64)> {
    let ctx = PassContext::builder()
        .opt_level(3)
        .threads(1)
        .build()
        .unwrap();
    let passes: [(&str, Pass<Module>); 4] = [
        ("FoldConstant", FoldConstant::default().into()),
        ("InferType", InferType.into()),
        (
            "EliminateCommonSubexpr",
            EliminateCommonSubexpr::default().into(),
        ),
        ("DeadCodeElimination", DeadCodeElimination::default().into()),
    ];
    let mut module = mlp_chain(k);
    let mut out = Vec::new();
    for (name, pass) in passes {
        let region = Region::new(ALLOCATOR);
        module = pass.run_in(module, &ctx).unwrap();
        let change = region.change();
        let allocations = change.allocations + change.reallocations;
        let bytes = change.bytes_allocated as f64 + change.bytes_reallocated.max(0) as f64;
        out.push((name, allocations as f64 / k as f64, bytes / k as f64));
    }
    assert_eq!(module.to_string().matches("let ").count(), 4 * k);
    out
}

#[test]
fn each_pass_allocates_the_same_per_layer_on_a_chain_ten_times_longer() {
    let (short, long) = (per_layer(300), per_layer(3000));
    for ((name, n_short, b_short), (_, n_long, b_long)) in short.into_iter().zip(long) {
        // Allowed: the fixed cost of a run spread over 300 layers, and tables and lists that
        // grow by doubling (their last growth may land just before or after the end).
        assert!(
            (n_long - n_short).abs() <= 0.5,
            "{name}: {n_short:.2} allocations per layer at K=300, {n_long:.2} at K=3000"
        );
        assert!(
            b_long <= b_short * 1.25 && b_short <= b_long * 1.25,
            "{name}: {b_short:.0} bytes per layer at K=300, {b_long:.0} at K=3000"
        );
    }
}
