//! A parameterised pass: its state lives in the struct, `#[function_pass]` goes on the impl
//! block, and the registry builds it from options (as a textual pipeline's
//! `ScaleResult{factor=2}` will).
//!
//! Run: `cargo run -p irpass-examples --example parameterised_pass`

use irpass::{PassContext, function_pass, registry};
use irpass_passes::ir::{Attrs, DType, Function, Module, Tensor};
use serde::Deserialize;

/// Multiplies every function's result by `factor`.
#[derive(Debug, Default, Deserialize)]
struct ScaleResult {
    factor: f64,
}

/// Multiplies every function's result by a constant factor.
#[function_pass(opt_level = 1, options)]
impl ScaleResult {
    fn transform_function(
        &self,
        func: Function,
        _module: &Module,
        _ctx: &PassContext,
    ) -> irpass::Result<Function> {
        let factor = Tensor::scalar(DType::Float32, self.factor);
        Ok(func.wrap_result(|b, result| {
            let factor = b.constant(factor.into());
            b.op("multiply", &[result, factor], Attrs::new())
        })?)
    }
}

fn main() {
    let m = Module::parse("def @main(%x: float32) -> float32 { add(%x, 1f) }").unwrap();
    let pass =
        registry::lookup_with_options::<Module>("ScaleResult", &serde_json::json!({"factor": 2.5}))
            .unwrap();
    let out = pass.run(m).unwrap();
    println!("{out}");
    assert!(out.to_string().contains("multiply(%0, 2.5f)"));
    // Options it does not have are an error, not silently ignored.
    let err = registry::lookup_with_options::<Module>(
        "ScaleResult",
        &serde_json::json!({"factor": 2, "factr": 2}),
    )
    .unwrap_err();
    println!("bad options: {err}");
    assert!(err.to_string().contains("factr"));
}
