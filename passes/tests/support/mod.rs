//! Shared helpers of the pass tests: running a pass, comparing with expected text, checking
//! semantics with the interpreter.

#![allow(dead_code)]

use irpass::{Pass, PassContext, registry};
use irpass_passes::ir::{DType, Module, Tensor, Type, Value, eval_function};

/// Parses, or panics with the rendered error.
pub fn parse(text: &str) -> Module {
    Module::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Runs `pass` on `module` under a context of opt level 3.
pub fn run(pass: impl Into<Pass<Module>>, module: Module) -> Module {
    let ctx = PassContext::builder().opt_level(3).build().unwrap();
    pass.into()
        .run_in(module, &ctx)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Asserts that `pass` turns `before` into a module structurally equal to `after`, and that
/// both compute the same values on random inputs.
pub fn check(pass: impl Into<Pass<Module>>, before: &str, after: &str) {
    check_module(pass, parse(before), after);
}

/// [`check`] on a module built in code; returns the result.
pub fn check_module(pass: impl Into<Pass<Module>>, input: Module, after: &str) -> Module {
    let out = run(pass, input.clone());
    if let Err(e) = irpass::IrModule::verify(&out) {
        panic!("the result is not a valid module: {e}\n{out}");
    }
    let expected = parse(after);
    // Compared as the text writes them: sharing within a scope (`%0 = ...` used twice)
    // counts, but a node used in two `if` branches is written in each (text cannot share
    // across scopes), so both sides are printed and read back first.
    let written = parse(&out.to_string());
    let expected_written = parse(&expected.to_string());
    assert!(
        written.structurally_equal(&expected_written),
        "got:\n{out}\nexpected:\n{expected}"
    );
    same_values(&input, &out, 3);
    out
}

/// Deterministic inputs for `@main`'s parameters (values in [-2, 2]; bools alternate).
pub fn inputs(m: &Module, seed: u64) -> Vec<Value> {
    let main = m.get("main").expect("a @main");
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % 4001) as f64 / 1000.0 - 2.0
    };
    main.params()
        .zip(main.param_types())
        .map(|(p, ty)| match ty {
            Some(Type::Tensor(t)) => {
                let shape = t.static_shape().expect("static shapes in tests");
                let n: usize = shape.iter().product();
                let variance = &*p.name == "var"
                    || (p.name.starts_with('v') && p.name[1..].chars().all(|c| c.is_ascii_digit()));
                let values: Vec<f64> = if t.dtype == DType::Bool {
                    (0..n).map(|i| ((i as u64 + seed) % 2) as f64).collect()
                } else if variance {
                    // Batch-norm variances are positive.
                    (0..n).map(|_| next().abs() / 2.0 + 0.5).collect()
                } else {
                    (0..n).map(|_| next()).collect()
                };
                Value::tensor(Tensor::from_vec(t.dtype, &shape, values).unwrap())
            }
            other => panic!("parameter %{} of type {other:?}", p.name),
        })
        .collect()
}

/// Asserts that `a` and `b` compute the same `@main` outputs on `runs` random inputs (close
/// to float32 rounding: passes may reassociate folded constants).
pub fn same_values(a: &Module, b: &Module, runs: u64) {
    for seed in 1..=runs {
        let args = inputs(a, seed);
        let va = eval_function(a, "main", args.clone()).unwrap_or_else(|e| panic!("{e}"));
        let vb = eval_function(b, "main", args).unwrap_or_else(|e| panic!("{e}\n{b}"));
        assert!(
            close(&vb, &va),
            "outputs differ:\nbefore {va}\nafter  {vb}\nafter:\n{b}"
        );
    }
}

/// The text of a model in `examples/models/`.
pub fn model(name: &str) -> Module {
    let path = format!(
        "{}/../examples/models/{name}.relay",
        env!("CARGO_MANIFEST_DIR")
    );
    parse(&std::fs::read_to_string(path).unwrap())
}

/// The names of the models.
pub const MODELS: &[&str] = &[
    "mlp",
    "resnet_block",
    "mobilenet_block",
    "transformer_block",
    "gated_closures",
];

/// The largest magnitude in a value (1 at least).
fn scale(v: &Value) -> f64 {
    match v {
        Value::Tensor(t) => t
            .values()
            .iter()
            .filter(|x| x.is_finite())
            .fold(1.0f64, |m, x| m.max(x.abs())),
        Value::Tuple(f) => f.iter().map(scale).fold(1.0, f64::max),
        Value::Closure(_) | Value::Opaque(_) => 1.0,
    }
}

/// Whether `got` equals `expected` up to float32 rounding of reassociated arithmetic: each
/// element within 1e-4 relative, or 1e-5 of the tensor's largest magnitude (an element near
/// zero next to large ones keeps their absolute rounding error).
pub fn close(got: &Value, expected: &Value) -> bool {
    got.all_close(expected, 1e-4, 1e-5 * scale(expected))
}

/// Every pass and pipeline registered for the reference IR except `PrintIR` (which only
/// prints), so a pass added to the library is covered without editing a list.
pub fn registered_passes() -> Vec<String> {
    let names: Vec<String> = registry::passes::<Module>()
        .into_iter()
        .map(|r| r.info.name.to_string())
        .filter(|n| n != "PrintIR")
        .collect();
    assert!(names.len() >= 20, "{names:?}");
    names
}
