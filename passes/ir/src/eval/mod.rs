//! The interpreter: the semantic reference of the pass library. [`eval_function`] evaluates a
//! function of a module on concrete [`Value`]s with the operators' reference kernels (over
//! `ndarray`), as a stack machine ([`EvalLimits`] bounds its calls and steps), so a pass is
//! tested by checking that a program's outputs do not change.
//!
//! ```
//! use irpass_ir::eval::{Value, eval_function};
//! use irpass_ir::{DType, Module, Tensor};
//! let m = Module::parse("def @main(%x: Tensor[(2), float32]) { multiply(%x, 3f) }").unwrap();
//! let x = Value::tensor(Tensor::from_vec(DType::Float32, &[2], vec![1.0, 2.0]).unwrap());
//! let out = eval_function(&m, "main", vec![x]).unwrap();
//! assert_eq!(out.as_tensor().unwrap().values(), [3.0, 6.0]);
//! ```

mod check;
mod limits;
mod machine;
#[cfg(test)]
mod tests;

pub use crate::value::{Closure, Value};
pub use check::{CheckError, CheckReport, Tolerance, check_equivalent};
pub use limits::EvalLimits;
pub use machine::{call_closure, eval_function, eval_function_limited};
