//! Passes defined with the macros that mirror hand-written ones of [`crate::passes`], so the
//! tests can run the same pipelines both ways and compare every event and result.

use std::sync::Arc;

use irpass::{PassContext, function_pass, module_pass};

use crate::tiny::{Func, Tiny};

fn append(f: &Func, value: i64) -> Arc<Func> {
    let mut body = f.body.clone();
    body.push(value);
    Arc::new(Func { body, skip: f.skip })
}

/// Appends 1 (mirrors `push("One", 1, 1)`).
#[function_pass(opt_level = 1, name = "One")]
pub fn one(func: Arc<Func>, _module: &Tiny, _ctx: &PassContext) -> Arc<Func> {
    append(&func, 1)
}

/// Appends 3 (mirrors `push("Three", 3, 3)`).
#[function_pass(opt_level = 3, name = "Three", ir = Tiny)]
pub fn three(func: Arc<Func>) -> irpass::Result<Arc<Func>> {
    Ok(append(&func, 3))
}

/// Leaves the module alone (mirrors `keep("Keep", 0)`).
#[module_pass(opt_level = 0, name = "Keep")]
pub fn keep_module(module: Tiny) -> Tiny {
    module
}

/// Requires `One` by type (mirrors `keep("NeedsOne", 2).requires_pass(push("One", 1, 1))`).
#[module_pass(opt_level = 2, required = [One])]
pub fn needs_one(module: Tiny, _ctx: &PassContext) -> Tiny {
    module
}

/// Fails (mirrors `fail("Fails")`).
#[module_pass(opt_level = 0)]
pub fn fails(_module: Tiny) -> Result<Tiny, String> {
    Err("deliberate failure".to_string())
}

/// Panics (mirrors `panicking("Panics")`).
#[module_pass(opt_level = 0)]
pub fn panics(_module: Tiny) -> Tiny {
    panic!("deliberate panic")
}

/// Adds the function `extra = []` (mirrors `add_function("AddExtra", "extra")`).
#[module_pass(opt_level = 0)]
pub fn add_extra(mut module: Tiny) -> Tiny {
    module.add("extra", vec![], false);
    module
}
