//! A module pass that adds a function (TVM's `abs` example): `@abs` is added to the module and
//! `@main` is rewritten to call it. Defined with `#[module_pass]`, so it is registered by name.
//!
//! Run: `cargo run -p irpass-examples --example module_pass_add_function`

use std::sync::Arc;

use irpass::{IrModule, PassContext, module_pass, registry};
use irpass_passes::ir::body::{ArenaFunction, BodyBuilder, copy_region};
use irpass_passes::ir::{Attrs, DType, Function, Module, Tensor, Type, Value, eval_function};

/// Adds `@abs(%x) = where(x < 0, -x, x)` and makes `@main` return `@abs` of its result.
#[module_pass(opt_level = 0, name = "AddAbs")]
fn add_abs(mut module: Module, _ctx: &PassContext) -> irpass::Result<Module> {
    let main = module.get("main").ok_or("the module has no @main")?.clone();
    let ty = main.ret_type.clone().unwrap_or(Type::Unknown);

    // `@abs`, built operands first.
    let mut b = BodyBuilder::new();
    let x = b.var("x", Some(ty.clone()), None);
    let xe = b.use_var(x);
    let zero = b.constant(Arc::new(Tensor::scalar(DType::Float32, 0.0)));
    let cond = b.op("less", &[xe, zero], Attrs::new())?;
    let neg = b.op("negative", &[xe], Attrs::new())?;
    let root = b.op("where", &[cond, neg, xe], Attrs::new())?;
    let code = ArenaFunction {
        body: b.finish(),
        params: vec![x],
        root,
    };
    module.add("abs", Function::new(code, Some(ty), Attrs::new(), None));

    // `@main`'s body copied into a new arena (its parameters kept), wrapped in a call.
    let mut b = BodyBuilder::new();
    let src = &main.code.body;
    let mut subst = irpass_passes::ir::body::VarSubst::default();
    let params: Vec<_> = main
        .code
        .params
        .iter()
        .map(|&p| {
            let np = b.add_var(src.var(p).clone());
            subst.insert(p, b.use_var(np));
            np
        })
        .collect();
    let result = copy_region(src, main.code.root, &mut b, &subst);
    let abs = b.global("abs");
    let root = b.call(abs, &[result]);
    let code = ArenaFunction {
        body: b.finish(),
        params,
        root,
    };
    let wrapped = Function::new(code, main.ret_type.clone(), main.attrs.clone(), main.span);
    module.replace_function("main", wrapped);
    Ok(module)
}

fn main() {
    let m = Module::parse(
        "def @main(%a: Tensor[(3), float32]) -> Tensor[(3), float32] { subtract(%a, 1f) }",
    )
    .unwrap();
    let pass = registry::lookup::<Module>("AddAbs").unwrap();
    let out = pass.run(m).unwrap();
    println!("{out}");
    out.infer_types().unwrap();
    assert_eq!(out.names().collect::<Vec<_>>(), ["main", "abs"]);
    let a = Value::tensor(Tensor::from_vec(DType::Float32, &[3], vec![-1.0, 0.5, 3.0]).unwrap());
    let v = eval_function(&out, "main", vec![a]).unwrap();
    assert_eq!(v.as_tensor().unwrap().values(), [2.0, 0.5, 2.0]);
    println!("|a - 1| = {v}");
}
