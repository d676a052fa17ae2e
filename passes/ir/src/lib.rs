//! The reference IR: a Relay-style typed tensor IR.
//!
//! - [`Module`]: named global [`Function`]s; implements [`IrModule`](irpass::IrModule) with O(1)
//!   change detection (functions are `Arc`s).
//! - [`Expr`]: immutable, `Arc`-shared nodes (a program is a DAG): variables, globals, constants,
//!   operator and function calls, blocks of `let` bindings (one node holding a list of bindings
//!   and a result, as Relax's binding blocks), tuples and projections, `if`, closures.
//! - Text: Relay's text format (v0.0.5) plus inline tensor literals
//!   (`Tensor[(2), float32]{1, 2}`); [`Module::parse`] and `Display`.
//! - Operators ([`op`]): registered through `inventory` with attribute schemas, type relations
//!   and reference kernels.
//! - [`infer_types`](Module::infer_types), well-formedness, [structural equality](structural),
//!   a [visitor and memoising mutator](visit), and the [interpreter](eval_function).
//!
//! ```
//! use irpass_ir::Module;
//! let text = r#"#[version = "0.0.5"]
//! def @main(%x: Tensor[(1, 8), float32]) -> Tensor[(1, 8), float32] {
//!   %0 = add(%x, %x);
//!   nn.relu(%0)
//! }
//! "#;
//! let m = Module::parse(text).unwrap();
//! m.infer_types().unwrap();
//! assert_eq!(m.to_string(), text);
//! ```

pub mod arena;
mod attrs;
pub mod dot;
mod dtype;
mod error;
mod eval;
mod expr;
pub mod models;
mod module;
pub mod op;
mod parse;
mod print;
#[cfg(feature = "testing")]
pub mod random;
pub mod structural;
mod tensor;
mod ty;
mod typeck;
mod value;
pub mod var_map;
pub mod visit;
mod wellformed;

pub use attrs::{AttrValue, Attrs};
pub use dtype::DType;
pub use error::{ErrorKind, IrError, Problem, Source};
pub use eval::{Closure, EvalLimits, eval_expr, eval_function, eval_function_limited};
pub use expr::{
    Args, Binding, Call, Callee, Expr, ExprKind, ExprNode, Function, FunctionNode, Span, Var,
    VarNode,
};
pub use module::Module;
pub use op::{Op, OpDef, OpPattern};
pub use print::constant_text;
pub use tensor::{Tensor, TensorData};
pub use ty::{Dim, FuncType, TensorType, Type};
pub use typeck::infer_expr;
pub use value::Value;
pub use var_map::{VarHasher, VarMap, VarSet};

/// Checks that every variable is bound once and used in scope, and every global exists.
///
/// # Errors
/// The problems found, with positions.
pub fn check_well_formed(m: &Module) -> Result<(), IrError> {
    wellformed::check_module(m)
}
