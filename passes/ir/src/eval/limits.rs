//! The bounds of an evaluation.

/// Bounds on one evaluation, so that a program that does not end (`@main` calling itself
/// forever) is an error rather than a process that grows until it is killed.
///
/// ```
/// use irpass_ir::Module;
/// use irpass_ir::eval::{EvalLimits, eval_function_limited};
/// let m = Module::parse("def @main(%x: int32) -> int32 { @main(%x) }").unwrap();
/// let x = irpass_ir::Value::tensor(irpass_ir::Tensor::scalar(irpass_ir::DType::Int32, 1.0));
/// let limits = EvalLimits { max_call_depth: 100, ..EvalLimits::default() };
/// let err = eval_function_limited(&m, "main", vec![x], limits).unwrap_err();
/// assert!(err.to_string().contains("call depth"), "{err}");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvalLimits {
    /// Calls of functions and closures nested deeper than this are an error.
    pub max_call_depth: usize,
    /// Evaluating more expressions than this (counting each call's body anew) is an error.
    pub max_steps: u64,
}

impl Default for EvalLimits {
    /// 10 000 nested calls and 100 million evaluated expressions: far beyond any model, and
    /// reached by a runaway recursion in well under a second.
    fn default() -> Self {
        EvalLimits {
            max_call_depth: 10_000,
            max_steps: 100_000_000,
        }
    }
}
