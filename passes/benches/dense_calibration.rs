//! The growth of `pipeline.rs`'s chain from K = 1 000 to K = 100 000 layers, timed in the same
//! rounds as a calibration that is not irpass: the same pipeline (fold constants, infer types,
//! eliminate common subexpressions, eliminate dead code) on the same MLP chain, written for a
//! minimal dense IR (16-byte nodes in one array per function, links by index, constants shared,
//! each pass building a new array in one forward sweep). The calibration's work per layer is
//! the same at every size (callgrind: `--toggle-collect='*run_pipeline*'`), so how its time
//! grows is what this machine's caches and memory do to a linear pipeline in those minutes, the
//! yardstick for the chain's growth.
//!
//! ```text
//! cargo bench -p irpass-passes --bench dense_calibration            # K = 1 000 and 100 000
//! cargo bench -p irpass-passes --bench dense_calibration -- 10000   # the calibration at one K
//! ```
#![allow(missing_docs)]

use std::hint::black_box;
use std::rc::Rc;
use std::time::Instant;

use irpass::{Pass, PassContext};
use irpass_passes::ir::Module;
use rustc_hash::FxHashMap;

mod chain;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Op {
    Add,
    Matmul,
    Multiply,
    Relu,
}

type Id = u32;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Node {
    /// The function's parameter.
    Param,
    /// A use of binding `.0`'s variable.
    Var(Id),
    /// Constant `.0` of the function's constant table.
    Const(Id),
    /// An operator on one or two earlier nodes (a unary op repeats its operand).
    Call(Op, Id, Id),
}

/// A function: nodes in definition order (operands before users), their types, the
/// bindings (each names a value node; a `Var` node refers to the binding), the result.
struct Func {
    nodes: Vec<Node>,
    types: Vec<Id>,
    values: Vec<Id>,
    body: Id,
    consts: Vec<Rc<[f32]>>,
    /// The distinct types (rows, columns); `types` holds indices into it.
    shapes: Vec<(u32, u32)>,
}

impl Func {
    fn empty_like(f: &Func) -> Func {
        Func {
            nodes: Vec::with_capacity(f.nodes.len()),
            types: Vec::with_capacity(f.nodes.len()),
            values: Vec::with_capacity(f.values.len()),
            body: 0,
            consts: f.consts.clone(),
            shapes: f.shapes.clone(),
        }
    }

    fn push(&mut self, n: Node, ty: Id) -> Id {
        self.nodes.push(n);
        self.types.push(ty);
        (self.nodes.len() - 1) as Id
    }

    /// Binds `value` and returns the node using its variable.
    fn bind(&mut self, value: Id, ty: Id) -> Id {
        self.values.push(value);
        self.push(Node::Var((self.values.len() - 1) as Id), ty)
    }
}

/// The MLP chain of `irpass_passes::ir::models::mlp_chain`, untyped.
fn mlp_chain(layers: usize) -> Func {
    let mut f = Func {
        nodes: Vec::new(),
        types: Vec::new(),
        values: Vec::new(),
        body: 0,
        consts: Vec::new(),
        shapes: Vec::new(),
    };
    let mut seed = 42u64;
    let mut constant = |f: &mut Func, n: usize| {
        let values: Vec<f32> = (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed % 2001) as f32 / 1000.0 - 1.0
            })
            .collect();
        f.consts.push(values.into());
        f.push(Node::Const((f.consts.len() - 1) as Id), Id::MAX)
    };
    let unknown = Id::MAX;
    let mut x = f.push(Node::Param, unknown);
    for _ in 0..layers {
        let (c1, c2) = (constant(&mut f, 8), constant(&mut f, 8));
        let sum = f.push(Node::Call(Op::Add, c1, c2), unknown);
        let b = f.bind(sum, unknown);
        let w = constant(&mut f, 64);
        let product = f.push(Node::Call(Op::Matmul, x, w), unknown);
        let h = f.bind(product, unknown);
        let t1 = f.push(Node::Call(Op::Add, h, b), unknown);
        let t1 = f.bind(t1, unknown);
        let t2 = f.push(Node::Call(Op::Add, h, b), unknown);
        let t2 = f.bind(t2, unknown);
        let s = f.push(Node::Call(Op::Add, t1, t2), unknown);
        let s = f.bind(s, unknown);
        let relu = f.push(Node::Call(Op::Relu, s, s), unknown);
        x = f.bind(relu, unknown);
        let dead = f.push(Node::Call(Op::Multiply, x, x), unknown);
        f.bind(dead, unknown);
    }
    f.body = x;
    f
}

/// Folds `add` of two constants and substitutes constant-bound variables by the constant.
fn fold_constants(f: &Func) -> Func {
    let mut out = Func::empty_like(f);
    let mut map: Vec<Id> = Vec::with_capacity(f.nodes.len());
    for (i, node) in f.nodes.iter().enumerate() {
        let ty = f.types[i];
        let new = match *node {
            Node::Param | Node::Const(_) => out.push(*node, ty),
            Node::Var(b) => {
                let value = map[f.values[b as usize] as usize];
                match out.nodes[value as usize] {
                    Node::Const(_) => value,
                    _ => out.bind(value, ty),
                }
            }
            Node::Call(op, a, b) => {
                let (a, b) = (map[a as usize], map[b as usize]);
                match (op, out.nodes[a as usize], out.nodes[b as usize]) {
                    (Op::Add, Node::Const(x), Node::Const(y)) => {
                        let sum: Vec<f32> = out.consts[x as usize]
                            .iter()
                            .zip(out.consts[y as usize].iter())
                            .map(|(p, q)| p + q)
                            .collect();
                        out.consts.push(sum.into());
                        let c = (out.consts.len() - 1) as Id;
                        out.push(Node::Const(c), ty)
                    }
                    _ => out.push(Node::Call(op, a, b), ty),
                }
            }
        };
        map.push(new);
    }
    out.body = map[f.body as usize];
    out
}

/// Types every node in one forward sweep (operands come first).
fn infer_types(f: &mut Func) {
    fn intern(shapes: &mut Vec<(u32, u32)>, s: (u32, u32)) -> Id {
        match shapes.iter().position(|&t| t == s) {
            Some(i) => i as Id,
            None => {
                shapes.push(s);
                (shapes.len() - 1) as Id
            }
        }
    }
    for i in 0..f.nodes.len() {
        let ty = match f.nodes[i] {
            Node::Param => intern(&mut f.shapes, (1, 8)),
            Node::Var(b) => f.types[f.values[b as usize] as usize],
            Node::Const(c) => match f.consts[c as usize].len() {
                64 => intern(&mut f.shapes, (8, 8)),
                n => intern(&mut f.shapes, (1, n as u32)),
            },
            Node::Call(op, a, b) => {
                let (ta, tb) = (
                    f.shapes[f.types[a as usize] as usize],
                    f.shapes[f.types[b as usize] as usize],
                );
                let out = match op {
                    Op::Matmul => (ta.0, tb.1),
                    // Broadcasting a (8) constant against (1, 8).
                    Op::Add | Op::Multiply => (ta.0.max(tb.0), ta.1.max(tb.1)),
                    Op::Relu => ta,
                };
                intern(&mut f.shapes, out)
            }
        };
        f.types[i] = ty;
    }
}

/// Merges structurally equal calls and the variables bound to one value.
fn eliminate_common_subexpr(f: &Func) -> Func {
    let mut out = Func::empty_like(f);
    let mut map: Vec<Id> = Vec::with_capacity(f.nodes.len());
    let mut calls: FxHashMap<Node, Id> = FxHashMap::default();
    let mut var_of: FxHashMap<Id, Id> = FxHashMap::default();
    for (i, node) in f.nodes.iter().enumerate() {
        let ty = f.types[i];
        let new = match *node {
            Node::Var(b) => {
                let value = map[f.values[b as usize] as usize];
                *var_of.entry(value).or_insert_with(|| out.bind(value, ty))
            }
            Node::Call(op, a, b) => {
                let call = Node::Call(op, map[a as usize], map[b as usize]);
                *calls.entry(call).or_insert_with(|| out.push(call, ty))
            }
            other => out.push(other, ty),
        };
        map.push(new);
    }
    out.body = map[f.body as usize];
    out
}

/// Drops what the result does not use (liveness in one backward sweep).
fn eliminate_dead_code(f: &Func) -> Func {
    let mut live = vec![false; f.nodes.len()];
    live[f.body as usize] = true;
    for i in (0..f.nodes.len()).rev() {
        if live[i] {
            match f.nodes[i] {
                Node::Var(b) => live[f.values[b as usize] as usize] = true,
                Node::Call(_, a, b) => {
                    live[a as usize] = true;
                    live[b as usize] = true;
                }
                Node::Param | Node::Const(_) => {}
            }
        }
    }
    let mut out = Func::empty_like(f);
    let mut map: Vec<Id> = vec![Id::MAX; f.nodes.len()];
    for (i, node) in f.nodes.iter().enumerate() {
        if !live[i] {
            continue;
        }
        let ty = f.types[i];
        map[i] = match *node {
            Node::Var(b) => out.bind(map[f.values[b as usize] as usize], ty),
            Node::Call(op, a, b) => out.push(Node::Call(op, map[a as usize], map[b as usize]), ty),
            other => out.push(other, ty),
        };
    }
    out.body = map[f.body as usize];
    out
}

/// The measured region: callgrind's `--toggle-collect` counts only what runs inside.
#[inline(never)]
fn run_pipeline(f: Func) -> Func {
    let folded = fold_constants(&f);
    drop(f);
    let mut typed = folded;
    infer_types(&mut typed);
    let merged = eliminate_common_subexpr(&typed);
    drop(typed);
    eliminate_dead_code(&merged)
}

/// The best time of `reps` runs at `k` layers, in seconds.
fn best_time(k: usize, reps: usize) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..reps {
        let f = mlp_chain(k);
        let start = Instant::now();
        let out = black_box(run_pipeline(f));
        best = best.min(start.elapsed().as_secs_f64());
        // As in the chain benchmark: `b` folded, `t2` merged, the multiply gone.
        assert_eq!(
            out.values.len(),
            4 * k,
            "K = {k}: 4 bindings per layer are left"
        );
    }
    best
}

/// irpass's chain at one size: its text (printed once, as in `pipeline.rs`), the pipeline and
/// its context.
struct Chain {
    k: usize,
    text: String,
    pipeline: Pass<Module>,
    ctx: PassContext,
}

impl Chain {
    fn new(k: usize) -> Chain {
        Chain {
            k,
            text: irpass_passes::ir::models::mlp_chain(k).to_string(),
            pipeline: chain::pipeline(),
            ctx: PassContext::builder()
                .opt_level(3)
                .build()
                .expect("a valid context"),
        }
    }

    /// The best time of `reps` runs, each on a freshly parsed module (parse and release outside
    /// the timing, as in the criterion benchmark), in seconds.
    fn best_time(&self, reps: usize) -> f64 {
        let mut best = f64::MAX;
        for _ in 0..reps {
            let module = Module::parse(&self.text).expect("the chain parses");
            let start = Instant::now();
            let out = self
                .pipeline
                .run_in(module, &self.ctx)
                .expect("the pipeline runs");
            best = best.min(start.elapsed().as_secs_f64());
            drop(black_box(out));
        }
        best
    }
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    if let [k] = sizes[..] {
        let t = best_time(k, 5);
        println!("dense_calibration: K = {k}: best of 5 {:.3} ms", t * 1e3);
        return;
    }
    let (small, large) = (Chain::new(1_000), Chain::new(100_000));
    chain::assert_optimised(
        &small
            .pipeline
            .run_in(Module::parse(&small.text).expect("parses"), &small.ctx)
            .expect("runs"),
        small.k,
    );
    // Four rounds, each timing every pipeline at both sizes, so that each set of figures comes
    // from the same minutes of a shared machine; the best of all rounds is kept.
    let rounds = 5;
    let mut best = [f64::MAX; 4];
    for _ in 0..rounds {
        let round = [
            best_time(small.k, 10),
            small.best_time(4),
            best_time(large.k, 1),
            large.best_time(1),
        ];
        for (b, t) in best.iter_mut().zip(round) {
            *b = b.min(t);
        }
    }
    let [dense_small, chain_small, dense_large, chain_large] = best;
    println!(
        "dense_calibration: {rounds} rounds alternated; best of 50 / 20 runs at K = 1 000, \
         5 each at K = 100 000"
    );
    for (what, s, l) in [
        ("calibration (dense IR)", dense_small, dense_large),
        ("irpass chain", chain_small, chain_large),
    ] {
        println!(
            "  {what}: K = 1 000 {:.3} ms ({:.2} µs per layer); K = 100 000 {:.1} ms ({:.2} µs \
             per layer); ratio {:.0} ×",
            s * 1e3,
            s * 1e3,
            l * 1e3,
            l * 1e1,
            l / s
        );
    }
    println!(
        "  per layer, chain over calibration: {:.2} × at K = 1 000, {:.2} × at K = 100 000 \
         (target ≤ 3 ×)",
        chain_small / dense_small,
        chain_large / dense_large
    );
}
