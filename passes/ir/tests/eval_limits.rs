//! The interpreter's limits: a program that does not end is an error naming the limit, never
//! a process that grows until it is killed; operators check sizes before allocating.

use irpass_ir::{DType, EvalLimits, Module, Tensor, Value, eval_function, eval_function_limited};

fn one() -> Value {
    Value::tensor(Tensor::scalar(DType::Int32, 1.0))
}

#[test]
fn a_function_calling_itself_forever_stops_at_the_call_depth_limit() {
    let m = Module::parse("def @main(%x: int32) -> int32 { @main(%x) }").unwrap();
    m.infer_types().unwrap();
    // The default limit, deep enough for any model, is reached without exhausting anything.
    let err = eval_function(&m, "main", vec![one()]).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("call depth limit of 10000"), "{msg}");
    let limits = EvalLimits {
        max_call_depth: 5,
        ..EvalLimits::default()
    };
    let err = eval_function_limited(&m, "main", vec![one()], limits).unwrap_err();
    assert!(err.to_string().contains("call depth limit of 5"), "{err}");
}

#[test]
fn a_let_bound_closure_recursing_forever_stops_too() {
    let m = Module::parse(
        "def @main(%x: int32) -> int32 {
           let %f = fn (%y: int32) -> int32 { %f(%y) };
           %f(%x)
         }",
    )
    .unwrap();
    let err = eval_function(&m, "main", vec![one()]).unwrap_err();
    assert!(err.to_string().contains("call depth limit"), "{err}");
}

/// `@f0` calls `@f1` twice, `@f1` calls `@f2` twice, ...: 2^depth calls, never deep.
fn doubling(depth: usize) -> Module {
    let mut text = String::new();
    for k in 0..depth {
        text.push_str(&format!(
            "def @f{k}(%x: int32) -> int32 {{ add(@f{n}(%x), @f{n}(%x)) }}\n",
            n = k + 1
        ));
    }
    text.push_str(&format!("def @f{depth}(%x: int32) -> int32 {{ %x }}\n"));
    Module::parse(&text).unwrap()
}

#[test]
fn exponential_work_within_the_depth_limit_stops_at_the_step_limit() {
    let small = doubling(4);
    let v = eval_function(&small, "f0", vec![one()]).unwrap();
    assert_eq!(v.as_tensor().unwrap().values(), [16.0]);
    let huge = doubling(60);
    let limits = EvalLimits {
        max_steps: 10_000,
        ..EvalLimits::default()
    };
    let err = eval_function_limited(&huge, "f0", vec![one()], limits).unwrap_err();
    assert!(
        err.to_string()
            .contains("more than 10000 expressions evaluated"),
        "{err}"
    );
}

#[test]
fn expand_dims_checks_the_rank_before_building_it() {
    for num in ["1000000", "9223372036854775807"] {
        let m = Module::parse(&format!(
            "def @main(%x: Tensor[(2), float32]) {{ expand_dims(%x, axis=0, num_newaxis={num}) }}"
        ))
        .unwrap();
        let err = m.infer_types().unwrap_err().to_string();
        assert!(err.contains("above the limit of 64"), "{err}");
    }
    let m = Module::parse(
        "def @main(%x: Tensor[(2), float32]) { expand_dims(%x, axis=1, num_newaxis=3) }",
    )
    .unwrap();
    m.infer_types().unwrap();
    let ty = m.get("main").unwrap().function_type().unwrap();
    assert_eq!(
        ty.to_string(),
        "fn (Tensor[(2), float32]) -> Tensor[(2, 1, 1, 1), float32]"
    );
}

#[test]
fn split_into_more_sections_than_the_axis_has_is_an_error() {
    let m = Module::parse(
        "def @main(%x: Tensor[(0, 4), float32]) { split(%x, indices_or_sections=1000000000000, axis=0) }",
    )
    .unwrap();
    let err = m.infer_types().unwrap_err().to_string();
    assert!(
        err.contains("does not split into 1000000000000 sections"),
        "{err}"
    );
}
