//! The framework's overhead on the walrus example: a function pass that changes nothing, run
//! over 1 000 functions by the framework, against calling its transformation on every function
//! directly. The difference divided by 1 000 is the cost a function a pass.

#![allow(missing_docs)] // criterion_group!/criterion_main! generate undocumented items

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use irpass::{FunctionPass, IrModule, Pass, PassContext, PassInfo, PassKind};
use irpass_wasm_opt::{Body, Wasm};

const FUNCTIONS: u64 = 1_000;

/// Looks at the function and gives it back.
struct Noop(PassInfo);

impl FunctionPass<Wasm> for Noop {
    fn info(&self) -> &PassInfo {
        &self.0
    }
    fn transform_function(
        &self,
        f: Arc<Body>,
        _: &Wasm,
        _: &PassContext,
    ) -> irpass::Result<Arc<Body>> {
        Ok(noop(f))
    }
}

#[inline(never)]
fn noop(f: Arc<Body>) -> Arc<Body> {
    black_box(f.seqs.len());
    f
}

fn module() -> Wasm {
    let mut text = String::from("(module\n");
    for i in 0..FUNCTIONS {
        text += &format!(
            "  (func (export \"f{i}\") (param i32) (result i32) local.get 0 i32.const {i} i32.add)\n"
        );
    }
    irpass_wasm_opt::parse(&(text + ")")).expect("the generated module parses")
}

fn overhead(c: &mut Criterion) {
    let module = module();
    let pass = Pass::function(Noop(PassInfo::new("Noop", 0, PassKind::Function)));
    let contexts = [1, 2].map(|n| (n, PassContext::builder().threads(n).build().unwrap()));
    let mut group = c.benchmark_group("wasm_noop_function_pass_1000");
    group.throughput(Throughput::Elements(FUNCTIONS));
    group.bench_function("direct", |b| {
        b.iter(|| {
            let m = black_box(module.clone());
            for (_, f) in m.functions() {
                black_box(noop(f.clone()));
            }
            m
        })
    });
    for (n, ctx) in &contexts {
        group.bench_function(format!("framework_threads_{n}"), |b| {
            b.iter(|| pass.run_in(black_box(module.clone()), ctx).unwrap())
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(40).measurement_time(std::time::Duration::from_secs(3));
    targets = overhead
}
criterion_main!(benches);
