//! Every registered pass and pipeline of the library on a generated network of 100 and of
//! 1 000 blocks (`irpass_passes::ir::models::conv_chain`, where each pass has work in every block):
//! the time per block should stay about the same. `passes/tests/linear_every_pass.rs` checks
//! the same passes deterministically by allocations; this catches work that grows without
//! allocating (a removal that shifts a table, a rescan). Run with
//! `cargo bench -p irpass-passes --bench every_pass`.
#![allow(missing_docs)] // criterion_group!/criterion_main! generate undocumented items

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use irpass::PassContext;
use irpass_passes as _;
use irpass_passes::ir::Module;
use irpass_passes::ir::models::conv_chain; // the passes are found through the registry

fn every_pass(c: &mut Criterion) {
    let ctx = PassContext::builder()
        .opt_level(3)
        .threads(1)
        .build()
        .unwrap();
    let mut g = c.benchmark_group("every_pass_conv_chain");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));
    let texts: Vec<(usize, String)> = [100, 1_000]
        .into_iter()
        .map(|k| (k, conv_chain(k).to_string()))
        .collect();
    for reg in irpass::registry::passes::<Module>() {
        let name = reg.info.name.as_ref();
        if name == "PrintIR" {
            continue;
        }
        let pass = irpass::registry::lookup::<Module>(name).unwrap();
        for (k, text) in &texts {
            g.bench_with_input(BenchmarkId::new(name, k), text, |b, text| {
                // A freshly parsed network each time (passes record types on the nodes).
                b.iter_batched(
                    || Module::parse(text).unwrap(),
                    |m| black_box(pass.run_in(m, &ctx).unwrap()),
                    BatchSize::PerIteration,
                )
            });
        }
    }
    g.finish();
}

criterion_group!(benches, every_pass);
criterion_main!(benches);
