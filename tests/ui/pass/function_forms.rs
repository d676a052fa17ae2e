//! Every accepted form of `#[function_pass]` / `#[module_pass]` on a function.

use std::sync::Arc;

use irpass::doc_toy::Toy;
use irpass::{Pass, PassContext, Sequential, function_pass, module_pass};

type F = Arc<Vec<i64>>;

fn add(f: &F, v: i64) -> F {
    Arc::new(f.iter().map(|x| x + v).chain([v]).collect())
}

/// Function and module.
#[function_pass(opt_level = 0)]
fn with_module(func: F, _module: &Toy) -> F {
    add(&func, 1)
}

/// Function, module and context.
#[function_pass(opt_level = 0)]
pub fn with_all(func: F, _module: &Toy, _ctx: &PassContext) -> irpass::Result<F> {
    Ok(add(&func, 2))
}

/// A crate-visible pass with a qualified context type and a `String` error.
#[function_pass(opt_level = 0)]
pub(crate) fn string_error(func: F, _module: &Toy, _ctx: &irpass::PassContext) -> Result<F, String> {
    Ok(add(&func, 3))
}

/// Only the function: the IR is named with `ir`.
#[function_pass(opt_level = 1, ir = Toy, name = "OnlyFunction", parallel = false)]
fn only_function(func: F) -> Result<F, std::io::Error> {
    Ok(add(&func, 4))
}

/// Function and context, IR named with `ir`, requirements of both kinds.
#[function_pass(opt_level = 2, ir = irpass::doc_toy::Toy, required = [WithModule, "WithAll"])]
fn function_and_context(func: F, ctx: &PassContext) -> F {
    add(&func, i64::from(ctx.opt_level()))
}

/// A module pass on the module alone.
#[module_pass(opt_level = 0)]
fn module_only(mut module: Toy) -> Toy {
    module.insert("extra", vec![]);
    module
}

/// A module pass with its context, failing with a boxed error type.
#[module_pass(opt_level = 3, required = [ModuleOnly])]
fn module_and_context(
    module: Toy,
    _ctx: &PassContext,
) -> Result<Toy, Box<dyn std::error::Error + Send + Sync>> {
    Ok(module)
}

/// A small IR of this test's own.
mod local_ir {
    use std::fmt;

    #[derive(Clone, PartialEq, Debug)]
    pub struct Body(pub Vec<u8>);

    #[derive(Clone, Default)]
    pub struct Module(pub Vec<(String, Body)>);

    impl fmt::Display for Module {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            for (name, body) in &self.0 {
                writeln!(f, "{name}: {:?}", body.0)?;
            }
            Ok(())
        }
    }

    impl irpass::IrModule for Module {
        type Key = str;
        type Function = Body;
        fn ir_name() -> &'static str {
            "local"
        }
        fn functions(&self) -> impl Iterator<Item = (&str, &Body)> {
            self.0.iter().map(|(n, b)| (n.as_str(), b))
        }
        fn replace_function(&mut self, name: &str, func: Body) {
            if let Some(slot) = self.0.iter_mut().find(|(n, _)| n == name) {
                slot.1 = func;
            }
        }
        fn same_function(a: &Body, b: &Body) -> bool {
            a == b
        }
    }

    /// Only the function; the IR named with `ir`.
    #[irpass::function_pass(opt_level = 0, ir = Module)]
    pub fn bump(func: Body) -> Body {
        Body(func.0.iter().map(|b| b + 1).collect())
    }
}

fn main() {
    let mut module = Toy::default();
    module.insert("main", vec![0]);
    let ctx = PassContext::builder().opt_level(3).build().unwrap();
    let pipeline = Sequential::new([
        Pass::from(WithAll),
        StringError.into(),
        OnlyFunction.into(),
        FunctionAndContext.into(),
        ModuleAndContext.into(),
    ])
    .unwrap();
    // FunctionAndContext first re-runs its requirements WithModule (+1) and WithAll (+2):
    // WithAll ran before, but the module has changed since.
    let out = pipeline.run_in(module, &ctx).unwrap();
    assert_eq!(out.to_string(), "extra = []\nmain = [15, 15, 13, 10, 6, 5, 3]\n");

    let local = local_ir::Module(vec![("f".into(), local_ir::Body(vec![1, 2]))]);
    let out = Pass::from(local_ir::Bump).run(local).unwrap();
    assert_eq!(out.to_string(), "f: [2, 3]\n");
    assert!(irpass::registry::lookup::<local_ir::Module>("Bump").is_ok());
}
