//! The pass library's speed: `FoldConstant, EliminateCommonSubexpr, DeadCodeElimination` on a
//! generated MLP chain of K layers (linear growth wanted), and a CPU-heavy function pass over
//! 1 000 functions at 1 and 2 threads. Run with `cargo bench -p irpass-passes`.
#![allow(missing_docs)] // criterion_group!/criterion_main! generate undocumented items

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use irpass::ir::{Attrs, DType, Expr, Function, Module, Tensor, Type, Var};
use irpass::{Pass, PassContext, Sequential};
use irpass_passes::{DeadCodeElimination, EliminateCommonSubexpr, FoldConstant};

/// Random-looking but deterministic values in [-1, 1].
fn values(n: usize, seed: &mut u64) -> Vec<f64> {
    (0..n)
        .map(|_| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((*seed >> 33) % 2001) as f64 / 1000.0 - 1.0
        })
        .collect()
}

fn constant(shape: &[usize], seed: &mut u64) -> Expr {
    let n = shape.iter().product();
    Expr::constant(Tensor::from_vec(DType::Float32, shape, values(n, seed)).unwrap())
}

fn op(name: &str, args: Vec<Expr>) -> Expr {
    Expr::op(name, args, Attrs::new()).unwrap()
}

/// Per layer: `b = add(c1, c2)`, `h = matmul(x, W)`, `t1 = add(h, b)`, `t2 = add(h, b)`,
/// `s = add(t1, t2)`, `x' = relu(s)`, and a dead `multiply(x', x')`; all `let`s, hidden 8.
pub fn mlp_chain(k: usize) -> Module {
    let mut seed = 42;
    let x = Var::new("x", Some(Type::tensor(&[1, 8], DType::Float32)));
    let mut bindings: Vec<(Var, Expr)> = Vec::with_capacity(k * 7);
    let mut cur = Expr::var(&x);
    for i in 0..k {
        let b = Var::new(format!("b{i}"), None);
        bindings.push((
            b.clone(),
            op(
                "add",
                vec![constant(&[8], &mut seed), constant(&[8], &mut seed)],
            ),
        ));
        let h = Var::new(format!("h{i}"), None);
        bindings.push((
            h.clone(),
            op("matmul", vec![cur.clone(), constant(&[8, 8], &mut seed)]),
        ));
        let t1 = Var::new(format!("t{i}a"), None);
        bindings.push((t1.clone(), op("add", vec![Expr::var(&h), Expr::var(&b)])));
        let t2 = Var::new(format!("t{i}b"), None);
        bindings.push((t2.clone(), op("add", vec![Expr::var(&h), Expr::var(&b)])));
        let s = Var::new(format!("s{i}"), None);
        bindings.push((s.clone(), op("add", vec![Expr::var(&t1), Expr::var(&t2)])));
        let xi = Var::new(format!("x{i}"), None);
        bindings.push((xi.clone(), op("nn.relu", vec![Expr::var(&s)])));
        let d = Var::new(format!("d{i}"), None);
        bindings.push((d, op("multiply", vec![Expr::var(&xi), Expr::var(&xi)])));
        cur = Expr::var(&xi);
    }
    let body = Expr::lets(bindings, cur);
    Module::from_functions([("main", Function::new(vec![x], None, body, Attrs::new()))])
}

fn chain(c: &mut Criterion) {
    let pipeline: Pass<Module> = Sequential::named(
        "fold_cse_dce",
        [
            Pass::from(FoldConstant),
            EliminateCommonSubexpr.into(),
            DeadCodeElimination.into(),
        ],
    )
    .unwrap()
    .into();
    let ctx = PassContext::builder().opt_level(3).build().unwrap();
    let mut g = c.benchmark_group("fold_cse_dce_mlp_chain");
    g.sample_size(10);
    for k in [100usize, 1_000, 10_000, 100_000] {
        let module = mlp_chain(k);
        // Check once that the pipeline does its job: b folded, t2 merged into t1, the dead
        // multiply removed; 4 lets per layer are left (h, t1, s, x').
        let out = pipeline.run_in(module.clone(), &ctx).unwrap();
        let lets = out.to_string().matches("let ").count();
        assert_eq!(lets, 4 * k, "K = {k}");
        g.bench_with_input(BenchmarkId::from_parameter(k), &module, |b, m| {
            // A fresh module each time: type inference records types on the nodes.
            b.iter_batched(
                || mlp_chain_copy(m),
                |m| black_box(pipeline.run_in(m, &ctx).unwrap()),
                criterion::BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

/// A copy of the module with fresh nodes (so no inferred type is reused between runs).
fn mlp_chain_copy(m: &Module) -> Module {
    Module::parse(&m.to_string()).unwrap()
}

/// 1 000 functions, each multiplying two constant 48×48 matrices (folded by FoldConstant).
fn heavy_module() -> Module {
    let mut seed = 7;
    let funcs = (0..1000).map(|i| {
        let body = op(
            "matmul",
            vec![
                constant(&[48, 48], &mut seed),
                constant(&[48, 48], &mut seed),
            ],
        );
        (
            format!("f{i}"),
            Function::new(vec![], None, body, Attrs::new()),
        )
    });
    Module::from_functions(funcs)
}

fn threads(c: &mut Criterion) {
    let module = heavy_module();
    let fold: Pass<Module> = FoldConstant.into();
    let mut g = c.benchmark_group("fold_constant_1000_functions");
    g.sample_size(10);
    for threads in [1usize, 2] {
        let ctx = PassContext::builder()
            .opt_level(3)
            .threads(threads)
            .build()
            .unwrap();
        g.bench_with_input(BenchmarkId::new("threads", threads), &module, |b, m| {
            b.iter(|| black_box(fold.run_in(m.clone(), &ctx).unwrap()))
        });
    }
    g.finish();
}

criterion_group!(benches, chain, threads);
criterion_main!(benches);
