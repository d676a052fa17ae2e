//! `-O3` on every example model and on two generated ones, as the library runs it (each run on
//! a freshly parsed module, parse outside the timing), with the default threads and on one
//! thread. Built from an earlier commit too, it gives the before/after figures of a change to
//! the pipeline's machinery.
//!
//! ```text
//! cargo bench -p irpass-passes --bench o3_models
//! ```
#![allow(missing_docs)] // criterion_group!/criterion_main! generate undocumented items

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use irpass::{Pass, PassContext};
use irpass_passes::ir::Module;
use irpass_passes::ir::models::{conv_chain, mlp_chain};

fn inputs() -> Vec<(String, String)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/models");
    let mut out: Vec<(String, String)> = [
        "mlp",
        "resnet_block",
        "mobilenet_block",
        "transformer_block",
        "gated_closures",
    ]
    .iter()
    .map(|m| {
        let text = std::fs::read_to_string(format!("{dir}/{m}.relay")).expect("a model");
        (m.to_string(), text)
    })
    .collect();
    out.push(("mlp_chain_100".into(), mlp_chain(100).to_string()));
    out.push(("conv_chain_20".into(), conv_chain(20).to_string()));
    out
}

fn bench(c: &mut Criterion) {
    run_group(c, "o3", None);
    // One thread: what the pipeline costs without handing functions to rayon's workers (whose
    // wake-up dominates for modules of a few small functions), the figure the Python package's
    // benchmark compares against.
    run_group(c, "o3_one_thread", Some(1));
}

fn run_group(c: &mut Criterion, group: &str, threads: Option<usize>) {
    let o3 = Pass::from(irpass_passes::pipeline(3));
    let mut g = c.benchmark_group(group);
    g.sample_size(50);
    for (name, text) in inputs() {
        // A fresh module and context each run: nothing cached from the run before.
        let setup = || {
            let mut builder = PassContext::builder().opt_level(3);
            if let Some(n) = threads {
                builder = builder.threads(n);
            }
            let ctx = builder.build().expect("a context");
            (Module::parse(&text).expect("parses"), ctx)
        };
        g.bench_function(&name, |b| {
            b.iter_batched(
                setup,
                |(m, ctx)| o3.run_in(m, &ctx).expect("runs"),
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
