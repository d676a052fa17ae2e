//! Bring your own IR: a small expression language of the example's own implements
//! `irpass::IrModule`, and its passes are written with the same macros as the reference IR's
//! (registered by name for this IR only), then run in a pipeline with a config key.
//!
//! The IR: each function is an arithmetic expression tree over its named inputs.
//!
//! Run: `cargo run -p irpass-examples --example bring_your_own_ir`

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use irpass::{
    IrModule, PassContext, Sequential, function_pass, module_pass, pass_config_option, registry,
};

/// An expression.
#[derive(Debug, PartialEq)]
enum E {
    Num(i64),
    Input(String),
    Add(Arc<E>, Arc<E>),
    Mul(Arc<E>, Arc<E>),
}

impl fmt::Display for E {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            E::Num(n) => write!(f, "{n}"),
            E::Input(x) => write!(f, "{x}"),
            E::Add(a, b) => write!(f, "({a} + {b})"),
            E::Mul(a, b) => write!(f, "{a} * {b}"),
        }
    }
}

/// A module: named functions, each an expression.
#[derive(Clone, Default)]
struct Calc(Arc<BTreeMap<String, Arc<E>>>);

impl fmt::Display for Calc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, body) in self.0.iter() {
            writeln!(f, "{name} = {body}")?;
        }
        Ok(())
    }
}

impl IrModule for Calc {
    type Key = str;
    type Function = Arc<E>;
    fn ir_name() -> &'static str {
        "calc"
    }
    fn functions(&self) -> impl Iterator<Item = (&str, &Arc<E>)> {
        self.0.iter().map(|(n, f)| (n.as_str(), f))
    }
    fn replace_function(&mut self, name: &str, func: Arc<E>) {
        Arc::make_mut(&mut self.0).insert(name.to_string(), func);
    }
    fn same_function(a: &Arc<E>, b: &Arc<E>) -> bool {
        Arc::ptr_eq(a, b)
    }
    fn same_as(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Rebuilds `e` bottom-up with `f`, keeping unchanged subtrees (same `Arc`).
fn rewrite(e: &Arc<E>, f: &dyn Fn(&Arc<E>) -> Option<Arc<E>>) -> Arc<E> {
    let rebuilt = match &**e {
        E::Add(a, b) | E::Mul(a, b) => {
            let (na, nb) = (rewrite(a, f), rewrite(b, f));
            if Arc::ptr_eq(&na, a) && Arc::ptr_eq(&nb, b) {
                e.clone()
            } else if matches!(**e, E::Add(..)) {
                Arc::new(E::Add(na, nb))
            } else {
                Arc::new(E::Mul(na, nb))
            }
        }
        _ => e.clone(),
    };
    f(&rebuilt).unwrap_or(rebuilt)
}

/// Folds operations on two numbers.
#[function_pass(opt_level = 1, ir = Calc)]
fn fold_numbers(func: Arc<E>) -> Arc<E> {
    rewrite(&func, &|e| match &**e {
        E::Add(a, b) => match (&**a, &**b) {
            (E::Num(x), E::Num(y)) => Some(Arc::new(E::Num(x + y))),
            _ => None,
        },
        E::Mul(a, b) => match (&**a, &**b) {
            (E::Num(x), E::Num(y)) => Some(Arc::new(E::Num(x * y))),
            _ => None,
        },
        _ => None,
    })
}

/// Removes `x * 1`, `1 * x`, `x + 0` and `0 + x`.
#[function_pass(opt_level = 2, ir = Calc, required = [FoldNumbers])]
fn drop_identities(func: Arc<E>) -> Arc<E> {
    rewrite(&func, &|e| match &**e {
        E::Mul(a, b) if **b == E::Num(1) => Some(a.clone()),
        E::Mul(a, b) if **a == E::Num(1) => Some(b.clone()),
        E::Add(a, b) if **b == E::Num(0) => Some(a.clone()),
        E::Add(a, b) if **a == E::Num(0) => Some(b.clone()),
        _ => None,
    })
}

pass_config_option! {
    /// The name of the function `AddEntry` adds.
    pub ENTRY_NAME: String = "calc.EntryName";
}

/// Adds an entry function that doubles `f` (named by `calc.EntryName`, default `entry`).
#[module_pass(opt_level = 0)]
fn add_entry(mut module: Calc, ctx: &PassContext) -> irpass::Result<Calc> {
    let name = ctx
        .get(&ENTRY_NAME)
        .cloned()
        .unwrap_or_else(|| "entry".to_string());
    let f = module.0.get("f").ok_or("no function `f` to wrap")?.clone();
    module.replace_function(&name, Arc::new(E::Mul(Arc::new(E::Num(2)), f)));
    Ok(module)
}

fn main() {
    // f = (x * (2 + -1)) + 0 * 3
    let body = Arc::new(E::Add(
        Arc::new(E::Mul(
            Arc::new(E::Input("x".into())),
            Arc::new(E::Add(Arc::new(E::Num(2)), Arc::new(E::Num(-1)))),
        )),
        Arc::new(E::Mul(Arc::new(E::Num(0)), Arc::new(E::Num(3)))),
    ));
    let mut module = Calc::default();
    module.replace_function("f", body);
    println!("before:\n{module}");

    // The passes are registered for this IR by name, like the reference IR's.
    let names: Vec<&str> = registry::passes::<Calc>()
        .iter()
        .map(|r| r.info.name.as_ref())
        .collect();
    assert_eq!(names, ["AddEntry", "DropIdentities", "FoldNumbers"]);

    let pipeline = Sequential::named(
        "calc_opt",
        [
            DropIdentities.into(),
            registry::lookup::<Calc>("AddEntry").unwrap(),
        ],
    )
    .unwrap();
    let ctx = PassContext::builder()
        .opt_level(2)
        .config_text("calc.EntryName", "main")
        .build()
        .unwrap();
    let out = pipeline.run_in(module, &ctx).unwrap();
    println!("after:\n{out}");
    assert_eq!(out.to_string(), "f = x\nmain = 2 * x\n");
}
