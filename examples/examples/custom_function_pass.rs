//! A custom function pass on the reference IR, written with `#[function_pass]`: it cancels
//! `exp(log(x))` into `x`, with a memoising mutator, and the interpreter checks that the
//! values did not change.
//!
//! Run: `cargo run -p irpass-examples --example custom_function_pass`

use irpass::{Pass, function_pass};
use irpass_passes::ir::visit::{MapMutator, Mutator};
use irpass_passes::ir::{Callee, DType, ExprKind, Function, Module, Tensor, Value, eval_function};

/// Rewrites `exp(log(x))` to `x`.
#[function_pass(opt_level = 1)]
fn cancel_exp_log(func: Function, _module: &Module) -> Function {
    let op_name = |e: &irpass_passes::ir::Expr| match &e.kind {
        ExprKind::Call(c) => match &c.callee {
            Callee::Op(op) => Some((op.name(), c.args.clone())),
            Callee::Expr(_) => None,
        },
        _ => None,
    };
    MapMutator::new(|e| match op_name(&e) {
        Some(("exp", args)) => match op_name(&args[0]) {
            Some(("log", inner)) => inner[0].clone(),
            _ => e,
        },
        _ => e,
    })
    .mutate_function(&func)
}

fn main() {
    let before = Module::parse(
        "def @main(%x: Tensor[(3), float32]) { %0 = log(%x); %1 = exp(%0); add(%1, %1) }",
    )
    .unwrap();
    let after = Pass::from(CancelExpLog).run(before.clone()).unwrap();
    println!("{after}");
    assert!(!after.to_string().contains("exp("));

    let x = Value::tensor(Tensor::from_vec(DType::Float32, &[3], vec![0.5, 1.0, 2.0]).unwrap());
    let a = eval_function(&before, "main", vec![x.clone()]).unwrap();
    let b = eval_function(&after, "main", vec![x]).unwrap();
    assert!(a.all_close(&b, 1e-6, 1e-7), "{a} vs {b}");
    println!("same values: {b}");
}
