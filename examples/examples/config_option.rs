//! A config option read by a pass: `pass_config_option!` declares and registers a typed key,
//! the context validates the value given as text, and the pass reads it typed.
//!
//! Run: `cargo run -p irpass-examples --example config_option`

use irpass::{PassContext, function_pass, pass_config_option};
use irpass_passes::ir::{Attrs, Function, Module};
use serde::Deserialize;

/// How `ClipOutputs` clips.
#[derive(Debug, Deserialize)]
pub struct ClipConfig {
    /// Lower bound.
    pub min: f64,
    /// Upper bound.
    pub max: f64,
}

pass_config_option! {
    /// The bounds `ClipOutputs` clips function results to.
    pub CLIP: ClipConfig = "example.Clip";
}

/// Clips every function's result to the bounds in `example.Clip` (if set).
#[function_pass(opt_level = 0)]
fn clip_outputs(func: Function, _module: &Module, ctx: &PassContext) -> irpass::Result<Function> {
    let Some(cfg) = ctx.get(&CLIP) else {
        return Ok(func);
    };
    let attrs = Attrs::from_pairs([
        ("a_min", irpass_passes::ir::AttrValue::Float(cfg.min)),
        ("a_max", irpass_passes::ir::AttrValue::Float(cfg.max)),
    ]);
    Ok(func.wrap_result(|b, result| b.op("clip", &[result], attrs))?)
}

fn main() {
    let m = Module::parse("def @main(%x: Tensor[(4), float32]) { multiply(%x, 3f) }").unwrap();
    let ctx = PassContext::builder()
        .config_text("example.Clip", r#"{"min": -1, "max": 1}"#)
        .build()
        .unwrap();
    let out = irpass::Pass::from(ClipOutputs).run_in(m, &ctx).unwrap();
    println!("{out}");
    assert!(out.to_string().contains("clip(%0, a_min=-1f, a_max=1f)"));
    // A value of the wrong shape is rejected when the context is built.
    let err = PassContext::builder()
        .config_text("example.Clip", r#"{"min": -1}"#)
        .build()
        .unwrap_err();
    println!("bad config: {err}");
    assert!(err.to_string().contains("example.Clip"));
}
