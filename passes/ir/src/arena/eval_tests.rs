//! The arena interpreter: the values the `Expr` interpreter computes, on every model, random
//! programs and closures; recursion and nesting deeper than any stack, within its limits.

use super::*;
use crate::{DType, EvalLimits, Tensor, Value};

/// Both interpreters on `text`'s `@main` with inputs of `seed`: equal values, or both errors.
fn same_as_the_expr_interpreter(text: &str, seed: u64) -> Result<(), String> {
    let old = crate::module::Module::parse(text).map_err(|e| e.to_string())?;
    let new = Module::parse(text).map_err(|e| e.to_string())?;
    let args = crate::random::inputs(&new, seed);
    let want = crate::legacy::eval_function(&old, "main", args.clone());
    let got = eval_function(&new, "main", args);
    match (got, want) {
        (Ok(g), Ok(w)) => {
            if g.bit_eq(&w) || (matches!(w, Value::Closure(_)) && matches!(g, Value::Closure(_))) {
                Ok(())
            } else {
                Err(format!("{g} vs {w}"))
            }
        }
        (Err(g), Err(w)) => {
            if g.message() == w.message() {
                Ok(())
            } else {
                Err(format!("error `{}` vs `{}`", g.message(), w.message()))
            }
        }
        (g, w) => Err(format!("{g:?} vs {w:?}")),
    }
}

#[test]
fn every_model_computes_what_the_expr_interpreter_computes() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/models");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "relay") {
            let text = std::fs::read_to_string(&path).unwrap();
            for seed in 0..1 {
                same_as_the_expr_interpreter(&text, seed)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            }
        }
    }
}

#[test]
fn closures_recursion_globals_tuples_and_errors_compute_what_the_expr_interpreter_does() {
    let programs = [
        "def @main(%x: float32) { let %f = fn (%a: float32) { multiply(%a, %x) }; (%f(2f), %f(%x)) }",
        "def @main(%x: int32) { let %loop = fn (%i: int32, %acc: int32) -> int32 { if (less(%i, 10)) { %loop(add(%i, 1), add(%acc, %i)) } else { %acc } }; %loop(0, %x) }",
        "def @fact(%n: int32) -> int32 { if (equal(%n, 0)) { 1 } else { multiply(%n, @fact(subtract(%n, 1))) } }\ndef @main() { @fact(10) }",
        "def @main(%t: (float32, float32)) { %t.1 }",
        "def @main(%x: Tensor[(4), float32]) { let %s = split(%x, indices_or_sections=2); add(%s.0, %s.1) }",
        "def @main(%x: float32) { %0 = exp(%x); %1 = add(%0, %0); if (less(%1, 3f)) { %0 } else { %1 } }",
        "def @main(%x: float32) { let %k = fn (%a: float32) { fn (%b: float32) { add(%a, %b) } }; %k(1f)(%x) }",
        "def @main(%x: float32) { fn (%a: float32) { %a } }",
        "def @main(%x: Tensor[(2), float32]) { reshape(%x, newshape=[3]) }",
        "def @main(%x: float32) { let %f = fn (%a: float32) { %a }; %f(%x, %x) }",
        "def @main(%x: float32) { @main(%x) }",
    ];
    for text in programs {
        same_as_the_expr_interpreter(text, 7).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, failure_persistence: None, ..Default::default() })]

    #[test]
    fn random_programs_compute_what_the_expr_interpreter_computes(
        choices in proptest::collection::vec(proptest::prelude::any::<u32>(), 64..256),
        seed in 0u64..100,
    ) {
        let text = crate::random::expr_program(&choices).to_string();
        if let Err(e) = same_as_the_expr_interpreter(&text, seed) {
            proptest::prop_assert!(false, "{}\n{}", e, text);
        }
    }
}

/// On a thread with a small stack, so that a recursion as deep as the program would overflow.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

fn int(v: i64) -> Value {
    Value::tensor(Tensor::scalar_i64(DType::Int32, v))
}

#[test]
fn deep_recursion_and_deep_nesting_run_on_a_small_stack_and_limits_give_errors() {
    on_small_stack(|| {
        let count = Module::parse(
            "def @main(%n: int32) -> int32 { if (equal(%n, 0)) { 0 } else { add(@main(subtract(%n, 1)), 1) } }",
        )
        .unwrap();
        let out = eval_function(&count, "main", vec![int(9_000)]).unwrap();
        assert_eq!(out.as_tensor().unwrap().values(), [9000.0]);
        let err = eval_function(&count, "main", vec![int(20_000)]).unwrap_err();
        assert!(err.message().contains("call depth limit of 10000"), "{err}");
        let limits = EvalLimits {
            max_steps: 1_000,
            ..EvalLimits::default()
        };
        let err = eval_function_limited(&count, "main", vec![int(900)], limits).unwrap_err();
        assert!(err.message().contains("step limit"), "{err}");

        // A body nested 200 000 deep (a recursive walk would need ~100 times this stack).
        let text = format!(
            "def @main(%x: float32) {{ {}%x{} }}",
            "negative(".repeat(200_000),
            ")".repeat(200_000)
        );
        let m = Module::parse(&text).unwrap();
        let x = Value::tensor(Tensor::scalar(DType::Float32, 1.5));
        let out = eval_function(&m, "main", vec![x]).unwrap();
        assert_eq!(out.as_tensor().unwrap().values(), [1.5]);
    });
}
