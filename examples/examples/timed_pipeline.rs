//! Builds and runs a pass pipeline with timing on a small IR of the example's own.
//!
//! The IR is a stack machine: each function is a list of ops (`push 2`, `load x`, `add`, `mul`).
//! Two function passes simplify it (constant folding, `x * 1` removal) inside a nested
//! Sequential, under a `PassContext` with `PassTiming` and `PrintAfterAll` instruments.
//!
//! Run: `cargo run -p irpass-examples --example timed_pipeline`

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use irpass::instrument::{PassTiming, PrintAfterAll, Sink};
use irpass::{
    FunctionPass, IrModule, Pass, PassContext, PassInfo, PassKind, PrintIr, Result, Sequential,
};

/// One stack-machine instruction.
#[derive(Clone, Debug, PartialEq)]
enum Op {
    Push(i64),
    Load(String),
    Add,
    Mul,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Push(v) => write!(f, "push {v}"),
            Op::Load(x) => write!(f, "load {x}"),
            Op::Add => f.write_str("add"),
            Op::Mul => f.write_str("mul"),
        }
    }
}

type Func = Arc<Vec<Op>>;

/// A module of named stack-machine functions.
#[derive(Clone, Default)]
struct Stack(Arc<BTreeMap<String, Func>>);

impl fmt::Display for Stack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, ops) in self.0.iter() {
            let ops: Vec<String> = ops.iter().map(Op::to_string).collect();
            writeln!(f, "fn {name} {{ {} }}", ops.join("; "))?;
        }
        Ok(())
    }
}

impl IrModule for Stack {
    type Key = str;
    type Function = Func;
    fn ir_name() -> &'static str {
        "stack"
    }
    fn functions(&self) -> impl Iterator<Item = (&str, &Func)> {
        self.0.iter().map(|(n, f)| (n.as_str(), f))
    }
    fn replace_function(&mut self, name: &str, func: Func) {
        Arc::make_mut(&mut self.0).insert(name.to_string(), func);
    }
    fn same_function(a: &Func, b: &Func) -> bool {
        Arc::ptr_eq(a, b)
    }
    fn same_as(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Rewrites a function with `step` until nothing changes; keeps the same `Arc` when nothing did.
fn rewrite(func: Func, step: impl Fn(&[Op]) -> Option<Vec<Op>>) -> Func {
    let mut ops: Option<Vec<Op>> = None;
    while let Some(next) = step(ops.as_deref().unwrap_or(&func)) {
        ops = Some(next);
    }
    ops.map(Arc::new).unwrap_or(func)
}

/// `push a; push b; add|mul` → `push (a op b)`.
struct FoldConstants(PassInfo);

impl FunctionPass<Stack> for FoldConstants {
    fn info(&self) -> &PassInfo {
        &self.0
    }
    fn transform_function(&self, func: Func, _: &Stack, _: &PassContext) -> Result<Func> {
        Ok(rewrite(func, |ops| {
            let i = ops.windows(3).position(|w| {
                matches!(
                    (&w[0], &w[1], &w[2]),
                    (Op::Push(_), Op::Push(_), Op::Add | Op::Mul)
                )
            })?;
            let (Op::Push(a), Op::Push(b)) = (&ops[i], &ops[i + 1]) else {
                return None;
            };
            let folded = if ops[i + 2] == Op::Add {
                a.checked_add(*b)?
            } else {
                a.checked_mul(*b)?
            };
            let mut out = ops[..i].to_vec();
            out.push(Op::Push(folded));
            out.extend_from_slice(&ops[i + 3..]);
            Some(out)
        }))
    }
}

/// `push 1; mul` → nothing (multiplying by one).
struct RemoveMulByOne(PassInfo);

impl FunctionPass<Stack> for RemoveMulByOne {
    fn info(&self) -> &PassInfo {
        &self.0
    }
    fn transform_function(&self, func: Func, _: &Stack, _: &PassContext) -> Result<Func> {
        Ok(rewrite(func, |ops| {
            let i = ops
                .windows(2)
                .position(|w| w[0] == Op::Push(1) && w[1] == Op::Mul)?;
            let mut out = ops[..i].to_vec();
            out.extend_from_slice(&ops[i + 2..]);
            Some(out)
        }))
    }
}

/// The built-in input: `(2 + 3) * x * 1` and `4 * 5 + y`.
fn default_module() -> Stack {
    use Op::*;
    let mut funcs = BTreeMap::new();
    funcs.insert(
        "main".to_string(),
        Arc::new(vec![
            Push(2),
            Push(3),
            Add,
            Load("x".into()),
            Mul,
            Push(1),
            Mul,
        ]),
    );
    funcs.insert(
        "helper".to_string(),
        Arc::new(vec![Push(4), Push(5), Mul, Load("y".into()), Add]),
    );
    Stack(Arc::new(funcs))
}

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    let module = default_module();
    println!("input (built-in):\n{module}");

    let simplify = Sequential::named(
        "simplify",
        [
            Pass::function(FoldConstants(PassInfo::new(
                "FoldConstants",
                1,
                PassKind::Function,
            ))),
            Pass::function(RemoveMulByOne(PassInfo::new(
                "RemoveMulByOne",
                2,
                PassKind::Function,
            ))),
        ],
    )?;
    let pipeline = Sequential::named(
        "pipeline",
        [simplify.into(), Pass::module(PrintIr::to(Sink::stdout()))],
    )?;

    let timing = Arc::new(PassTiming::new());
    let (after, printed) = Sink::buffer();
    let ctx = PassContext::builder()
        .opt_level(2)
        .instrument_arc(timing.clone())
        .instrument(PrintAfterAll::to(after))
        .build()?;
    let output = ctx.scope(|| pipeline.run(module))??;

    println!("\npass timing:\n{}", timing.render());
    let dumps = printed
        .contents()
        .lines()
        .filter(|l| l.starts_with("*** IR Dump After"))
        .count();
    println!("PrintAfterAll printed the module after {dumps} passes");

    let expected = "fn helper { push 20; load y; add }\nfn main { push 5; load x; mul }\n";
    assert_eq!(output.to_string(), expected, "the pipeline's result");
    assert_eq!(
        dumps, 5,
        "FoldConstants, RemoveMulByOne, simplify, PrintIR, pipeline"
    );
    println!("ok: result checked");
    Ok(())
}
