//! A module pass that adds a function (TVM's `abs` example): `@abs` is added to the module and
//! `@main` is rewritten to call it. Defined with `#[module_pass]`, so it is registered by name.
//!
//! Run: `cargo run -p irpass-examples --example module_pass_add_function`

use irpass::{IrModule, PassContext, module_pass, registry};
use irpass_passes::ir::{
    Attrs, DType, Expr, Function, Module, Tensor, Type, Value, Var, eval_function,
};

/// Adds `@abs(%x) = where(x < 0, -x, x)` and makes `@main` return `@abs` of its result.
#[module_pass(opt_level = 0, name = "AddAbs")]
fn add_abs(mut module: Module, _ctx: &PassContext) -> irpass::Result<Module> {
    let main = module.get("main").ok_or("the module has no @main")?.clone();
    let ty = main.ret_type.clone().unwrap_or(Type::Unknown);
    let x = Var::new("x", Some(ty.clone()));
    let zero = Expr::constant(Tensor::scalar(DType::Float32, 0.0));
    let cond = Expr::op("less", vec![Expr::var(&x), zero], Attrs::new())?;
    let neg = Expr::op("negative", vec![Expr::var(&x)], Attrs::new())?;
    let body = Expr::op("where", vec![cond, neg, Expr::var(&x)], Attrs::new())?;
    module.add("abs", Function::new(vec![x], Some(ty), body, Attrs::new()));
    let wrapped = Expr::call(Expr::global("abs"), vec![main.body.clone()]);
    module.replace_function("main", main.with_body(wrapped));
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
