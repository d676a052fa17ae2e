//! Differential test over every registered pass and pipeline: programs that stress numeric edge
//! cases (`tests/numeric/*.relay`: zero, negative and huge scales, pruned channels, integer
//! division and casts, reassociation near overflow), the small example models and generated
//! programs are evaluated by the interpreter before and after each pass on random inputs and on
//! special ones (zeros, ±large, negatives, tiny). A NaN or an infinity where the input computed
//! a finite number is a failure, as is a finite value outside float rounding, an integer that
//! changed, or a non-finite value that changed. The passes come from the registry, so a pass
//! added to the library is covered without editing a list.

mod support;

use std::path::PathBuf;

use irpass::PassContext;
use irpass_passes as _;
use irpass_passes::ir::{DType, Module, Tensor, Type, Value, eval_function, random};
use support::{inputs, model, parse, registered_passes};

/// The programs: the numeric cases, the example models and generated programs.
fn programs() -> Vec<(String, Module)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/numeric");
    let mut out: Vec<(String, Module)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "relay"))
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            (name, parse(&std::fs::read_to_string(&p).unwrap()))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() >= 10, "the numeric cases are missing");
    // The small models (the convolution blocks take minutes in a debug build on seven input
    // sets; `semantics.rs` runs every pass on them with random inputs).
    out.extend(["mlp", "gated_closures"].map(|m| (format!("model {m}"), model(m))));
    for seed in 0..40u32 {
        let choices: Vec<u32> = (0..60u32)
            .map(|i| i.wrapping_mul(2_654_435_761).wrapping_add(seed * 97) ^ (seed << 7))
            .collect();
        out.push((format!("random program {seed}"), random::program(&choices)));
    }
    out
}

/// Every parameter of `@main` filled with `fill(dtype)`.
fn uniform(m: &Module, fill: impl Fn(DType, usize) -> f64) -> Vec<Value> {
    let main = m.get("main").expect("a @main");
    main.param_types()
        .into_iter()
        .map(|ty| match ty {
            Some(Type::Tensor(t)) => {
                let shape = t.static_shape().expect("static shapes");
                let n: usize = shape.iter().product();
                let values = (0..n).map(|i| fill(t.dtype, i)).collect();
                Value::tensor(Tensor::from_vec(t.dtype, &shape, values).unwrap())
            }
            other => panic!("a parameter of type {other:?}"),
        })
        .collect()
}

/// Random inputs and special ones, each with a name.
fn input_sets(m: &Module) -> Vec<(&'static str, Vec<Value>)> {
    let special = |v: f64, int: f64| {
        move |d: DType, i: usize| match d {
            DType::Bool => (i % 2) as f64,
            d if d.is_float() => v,
            DType::UInt8 => int.abs(),
            _ => int,
        }
    };
    let negated: Vec<Value> = inputs(m, 5)
        .into_iter()
        .map(|v| {
            let t = v.as_tensor().unwrap();
            let neg = t.values().iter().map(|x| -x.abs().max(0.5)).collect();
            let neg = if t.dtype() == DType::Bool {
                t.values().to_vec()
            } else {
                neg
            };
            Value::tensor(Tensor::from_vec(t.dtype(), t.shape(), neg).unwrap())
        })
        .collect();
    vec![
        ("random 1", inputs(m, 1)),
        ("random 2", inputs(m, 2)),
        ("negatives", negated),
        ("zeros", uniform(m, special(0.0, 0.0))),
        ("large", uniform(m, special(1e6, 1000.0))),
        ("large negative", uniform(m, special(-1e6, -1000.0))),
        ("tiny", uniform(m, special(1e-30, 1.0))),
    ]
}

/// Why `got` is not `expected` up to float rounding, if it is not.
fn difference(got: &Value, expected: &Value) -> Option<String> {
    match (got, expected) {
        (Value::Tuple(g), Value::Tuple(e)) if g.len() == e.len() => g
            .iter()
            .zip(e)
            .enumerate()
            .find_map(|(i, (g, e))| difference(g, e).map(|d| format!("field {i}: {d}"))),
        (Value::Tensor(g), Value::Tensor(e)) if g.shape() == e.shape() => {
            let magnitude = e
                .values()
                .iter()
                .filter(|x| x.is_finite())
                .fold(1.0f64, |m, x| m.max(x.abs()));
            let (gv, ev) = (g.values(), e.values());
            (0..ev.len()).find_map(|i| {
                let (x, y) = (gv[i], ev[i]);
                let same = if !y.is_finite() {
                    x == y || (x.is_nan() && y.is_nan())
                } else if !x.is_finite() {
                    false
                } else if e.dtype().is_float() {
                    (x - y).abs() <= 1e-4 * y.abs() + 1e-5 * magnitude
                } else {
                    x == y
                };
                (!same).then(|| format!("element {i} is {x} where the input computed {y}"))
            })
        }
        _ => Some(format!("`{got}` where the input computed `{expected}`")),
    }
}

#[test]
fn every_pass_and_pipeline_keeps_the_values_of_numeric_edge_cases() {
    let ctx = PassContext::builder().opt_level(3).build().unwrap();
    let passes = registered_passes();
    for p in [
        "FoldScaleAxis",
        "SimplifyExpr",
        "FoldConstant",
        "O1",
        "O2",
        "O3",
    ] {
        assert!(passes.iter().any(|n| n == p), "{p} is not registered");
    }
    let mut failures = Vec::new();
    let mut compared = 0usize;
    for (name, m) in programs() {
        let sets = input_sets(&m);
        let expected: Vec<_> = sets
            .iter()
            .map(|(_, args)| eval_function(&m, "main", args.clone()).ok())
            .collect();
        for p in &passes {
            let pass = irpass::registry::lookup::<Module>(p).unwrap();
            let out = match pass.run_in(m.clone(), &ctx) {
                Ok(out) => out,
                Err(e) => {
                    failures.push(format!("{p} on {name}: the pass failed: {e}"));
                    continue;
                }
            };
            for ((set, args), want) in sets.iter().zip(&expected) {
                let Some(want) = want else { continue };
                compared += 1;
                match eval_function(&out, "main", args.clone()) {
                    Err(e) => failures.push(format!("{p} on {name}, {set} inputs: {e}")),
                    Ok(got) => {
                        if let Some(d) = difference(&got, want) {
                            failures.push(format!("{p} on {name}, {set} inputs: {d}\n{out}"));
                        }
                    }
                }
            }
        }
    }
    assert!(compared > 1000, "only {compared} comparisons");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
