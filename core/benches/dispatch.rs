//! Framework overhead: pass dispatch, instruments, context enter/exit, registry lookup and
//! mapping a function pass over many functions. Run with `cargo bench -p irpass`.
#![allow(missing_docs)] // criterion_group!/criterion_main! generate undocumented items

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use irpass::__private::{PassRegistration, erase, inventory, location};
use irpass::doc_toy::Toy;
use irpass::{
    FunctionPass, ModulePass, ModuleView, Pass, PassContext, PassInfo, PassInstrument, PassKind,
    Result, Sequential,
};

struct Noop(PassInfo);

impl ModulePass<Toy> for Noop {
    fn info(&self) -> &PassInfo {
        &self.0
    }
    fn transform_module(&self, module: Toy, _: &PassContext) -> Result<Toy> {
        Ok(module)
    }
}

struct NoopFn(PassInfo);

impl FunctionPass<Toy> for NoopFn {
    fn info(&self) -> &PassInfo {
        &self.0
    }
    fn transform_function(
        &self,
        f: Arc<Vec<i64>>,
        _: &Toy,
        _: &PassContext,
    ) -> Result<Arc<Vec<i64>>> {
        Ok(f)
    }
}

/// An instrument with all five hooks written out, each doing nothing.
struct Empty;

impl PassInstrument for Empty {
    fn name(&self) -> &str {
        "Empty"
    }
    fn enter_pass_ctx(&self) -> Result<()> {
        Ok(())
    }
    fn exit_pass_ctx(&self) -> Result<()> {
        Ok(())
    }
    fn should_run(&self, _: &dyn ModuleView, _: &PassInfo) -> Result<bool> {
        Ok(true)
    }
    fn run_before_pass(&self, _: &dyn ModuleView, _: &PassInfo) -> Result<()> {
        Ok(())
    }
    fn run_after_pass(&self, _: &dyn ModuleView, _: &PassInfo) -> Result<()> {
        Ok(())
    }
}

static BENCH_NOOP: PassInfo =
    PassInfo::new_static("BenchNoop", 0, PassKind::Module, &[], "Does nothing.");

inventory::submit! {
    PassRegistration::new::<Toy>(&BENCH_NOOP, Some(|| erase(Pass::module(Noop(BENCH_NOOP.clone())))), None, location!())
}

fn noop_pipeline(n: usize) -> Sequential<Toy> {
    let passes =
        (0..n).map(|i| Pass::module(Noop(PassInfo::new(format!("Noop{i}"), 0, PassKind::Module))));
    Sequential::new(passes).unwrap()
}

fn dispatch(c: &mut Criterion) {
    let seq = noop_pipeline(1000);
    let module = Toy::with_main();
    let mut group = c.benchmark_group("sequential_1000_noop_passes");
    group.throughput(Throughput::Elements(1000));
    for instruments in [0usize, 1, 8] {
        let mut builder = PassContext::builder();
        for _ in 0..instruments {
            builder = builder.instrument(Empty);
        }
        let ctx = builder.build().unwrap();
        group.bench_with_input(
            BenchmarkId::new("instruments", instruments),
            &ctx,
            |b, ctx| b.iter(|| seq.run_in(black_box(module.clone()), ctx).unwrap()),
        );
    }
    group.finish();
}

fn context(c: &mut Criterion) {
    let ctx = PassContext::builder().opt_level(3).build().unwrap();
    c.bench_function("context_enter_exit", |b| {
        b.iter(|| black_box(&ctx).enter().unwrap().exit().unwrap())
    });
}

/// What value semantics costs whatever the framework does: the runner keeps the module it
/// gave each pass (one clone of an `Arc` and its drop), a function pass gets each function
/// by value, and entering a context keeps a handle of it. Each row is that cost alone, for
/// reading the rows above as the cost of an `Arc`'s atomics plus the framework's own.
fn calibration(c: &mut Criterion) {
    let module = Toy::with_main();
    c.bench_function("calibration/module_clone_drop", |b| {
        b.iter(|| drop(black_box(black_box(&module).clone())))
    });
    let ctx = PassContext::builder().opt_level(3).build().unwrap();
    c.bench_function("calibration/context_clone_drop", |b| {
        b.iter(|| drop(black_box(black_box(&ctx).clone())))
    });
}

fn lookup(c: &mut Criterion) {
    irpass::registry::lookup::<Toy>("BenchNoop").unwrap();
    c.bench_function("registry_lookup", |b| {
        b.iter(|| irpass::registry::lookup::<Toy>(black_box("BenchNoop")).unwrap())
    });
}

fn function_pass(c: &mut Criterion) {
    let mut module = Toy::default();
    for i in 0..10_000 {
        module.insert(&format!("f{i:05}"), vec![i]);
    }
    let pass = Pass::function(NoopFn(PassInfo::new("NoopFn", 0, PassKind::Function)));
    let mut group = c.benchmark_group("function_pass_10000_untouched");
    group.throughput(Throughput::Elements(10_000));
    for threads in [1usize, 2] {
        let ctx = PassContext::builder().threads(threads).build().unwrap();
        group.bench_with_input(BenchmarkId::new("threads", threads), &ctx, |b, ctx| {
            b.iter(|| pass.run_in(black_box(module.clone()), ctx).unwrap())
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3));
    targets = dispatch, context, lookup, function_pass, calibration
}
criterion_main!(benches);
