//! The pass library's speed: `FoldConstant, EliminateCommonSubexpr, DeadCodeElimination` on a
//! generated MLP chain of K layers (linear growth wanted), and a CPU-heavy function pass over
//! 1 000 functions at 1 and 2 threads. Run with `cargo bench -p irpass-passes`.
#![allow(missing_docs)] // criterion_group!/criterion_main! generate undocumented items

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use irpass::{Pass, PassContext};
use irpass_passes::FoldConstant;
use irpass_passes::ir::Module;
use irpass_passes::ir::models::{constant_matmuls, mlp_chain};

mod chain;

fn chain(c: &mut Criterion) {
    let pipeline = chain::pipeline();
    let ctx = PassContext::builder().opt_level(3).build().unwrap();
    let mut g = c.benchmark_group("fold_cse_dce_mlp_chain");
    g.sample_size(10);
    for k in [100usize, 1_000, 10_000, 100_000] {
        let module = mlp_chain(k);
        // Check once that the pipeline does its job.
        chain::assert_optimised(&pipeline.run_in(module.clone(), &ctx).unwrap(), k);
        // A fresh module each time, parsed from text printed once (type inference records
        // types with the functions), as a user's run starts: printing in every setup would leave
        // the printer's garbage for the allocator to tidy inside the timing.
        let text = module.to_string();
        g.bench_with_input(BenchmarkId::from_parameter(k), &text, |b, text| {
            b.iter_batched(
                || parse(text),
                |m| black_box(pipeline.run_in(m, &ctx).unwrap()),
                criterion::BatchSize::PerIteration,
            )
        });
    }
    g.finish();

    // The same pipeline at K = 1 000 with the module out of the caches, as the K = 100 000
    // module (about 500 MB) always is: the setup writes 128 MiB of other memory after parsing.
    // Compared with K = 100 000, it separates the work per layer from the cache's share.
    let mut g = c.benchmark_group("fold_cse_dce_mlp_chain_evicted");
    g.sample_size(10);
    let text = mlp_chain(1_000).to_string();
    let mut other = vec![0u8; 128 << 20];
    g.bench_with_input(BenchmarkId::from_parameter(1_000), &text, |b, text| {
        b.iter_batched(
            || {
                let copy = parse(text);
                evict(&mut other);
                copy
            },
            |m| black_box(pipeline.run_in(m, &ctx).unwrap()),
            criterion::BatchSize::PerIteration,
        )
    });
    g.finish();
}

/// Writes every cache line of `other`, which pushes what was cached before out of the caches.
fn evict(other: &mut [u8]) {
    for (i, line) in other.chunks_mut(64).enumerate() {
        line[0] = i as u8;
    }
    black_box(other);
}

/// A module with fresh nodes (so no inferred type is reused between runs).
fn parse(text: &str) -> Module {
    Module::parse(text).unwrap()
}

fn threads(c: &mut Criterion) {
    let module = constant_matmuls(1000, 48);
    let fold: Pass<Module> = FoldConstant::default().into();
    let mut g = c.benchmark_group("fold_constant_1000_functions");
    g.sample_size(10);
    for threads in [1usize, 2] {
        let ctx = PassContext::builder()
            .opt_level(3)
            .threads(threads)
            .build()
            .unwrap();
        g.bench_with_input(BenchmarkId::new("threads", threads), &module, |b, m| {
            // The result is released after the timing, as in the chain benchmark: the caller
            // frees it, on its own thread, whenever it is done with it.
            b.iter_with_large_drop(|| fold.run_in(m.clone(), &ctx).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, chain, threads);
criterion_main!(benches);
