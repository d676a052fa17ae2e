//! The interpreter: recursion and nesting deeper than any stack, within its limits (its values
//! are checked against numpy in `tests/ops.rs` and recorded in `tests/snapshots/values.txt`).

use super::*;
use crate::Module;
use crate::{DType, EvalLimits, Tensor, Value};

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
