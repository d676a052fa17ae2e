//! The passes written as rule sets (`SimplifyExpr`, `SimplifyInference`, `CanonicalizeOps`)
//! on a generated network of 100 and 1 000 blocks, where each has work in every block, and
//! on the example transformer block (layer norms). Built at an earlier commit too, it compares
//! the rule sets with the hand-written rewrites they replaced. Run with
//! `cargo bench -p irpass-passes --bench rule_passes`.
#![allow(missing_docs)] // criterion_group!/criterion_main! generate undocumented items

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use irpass::PassContext;
use irpass_passes as _; // the passes are found through the registry
use irpass_passes::ir::Module;
use irpass_passes::ir::models::conv_chain;

fn rule_passes(c: &mut Criterion) {
    let ctx = PassContext::builder()
        .opt_level(3)
        .threads(1)
        .build()
        .unwrap();
    let mut g = c.benchmark_group("rule_passes");
    g.sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let transformer = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/models/transformer_block.relay"
    ))
    .expect("the example model");
    let inputs = [
        ("conv_chain_100".to_string(), conv_chain(100).to_string()),
        ("conv_chain_1000".to_string(), conv_chain(1_000).to_string()),
        ("transformer_block".to_string(), transformer),
    ];
    for name in ["SimplifyExpr", "SimplifyInference", "CanonicalizeOps"] {
        let pass = irpass::registry::lookup::<Module>(name).unwrap();
        for (input, text) in &inputs {
            g.bench_with_input(BenchmarkId::new(name, input), text, |b, text| {
                b.iter_batched(
                    || {
                        // Typed before the timing: the passes ask for types, which a pipeline
                        // has from the pass before.
                        let m = Module::parse(text).unwrap();
                        m.infer_types().unwrap();
                        m
                    },
                    |m| black_box(pass.run_in(m, &ctx).unwrap()),
                    BatchSize::PerIteration,
                )
            });
        }
    }
    g.finish();
}

criterion_group!(benches, rule_passes);
criterion_main!(benches);
