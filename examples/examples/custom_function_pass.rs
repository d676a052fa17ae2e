//! A custom function pass on the reference IR, written with `#[function_pass]`: it cancels
//! `exp(log(x))` into `x` with a rewrite that says only what it changes (the walk, sharing and
//! scopes are the driver's), and the interpreter checks that the values did not change.
//!
//! Run: `cargo run -p irpass-examples --example custom_function_pass`

use irpass::{Pass, function_pass};
use irpass_passes::ir::body::ExprId;
use irpass_passes::ir::rewrite::{OldId, Rewrite, RewriteCx};
use irpass_passes::ir::{DType, Function, Module, Tensor, Value, eval_function};

/// Replaces `exp(log(x))` by `x`.
struct ExpOfLog;

impl Rewrite for ExpOfLog {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, _old: OldId, new: ExprId) -> Option<ExprId> {
        let body = cx.new.body();
        let (op, args, _) = body.op_call(new)?;
        let (inner, inner_args, _) = body.op_call(args[0])?;
        (op.name() == "exp" && inner.name() == "log").then_some(inner_args[0])
    }
}

/// Rewrites `exp(log(x))` to `x`.
#[function_pass(opt_level = 1)]
fn cancel_exp_log(func: Function, _module: &Module) -> Function {
    func.rewritten(&mut ExpOfLog)
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
