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
#[doc(hidden)]
pub mod structural;
mod tensor;
mod ty;
mod typeck;
mod value;
mod var_map;
#[doc(hidden)]
pub mod visit;
mod wellformed;

pub use arena::{
    Function, FunctionData, Module, check_well_formed, eval_function, eval_function_limited,
    module_dot,
};
pub use attrs::{AttrValue, Attrs};
pub use dtype::DType;
pub use error::{ErrorKind, IrError, Problem, Source};
pub use eval::{Closure, EvalLimits};
pub use expr::Span;
pub use op::{Op, OpDef, OpPattern};
pub use print::constant_text;
pub use tensor::{Tensor, TensorData};
pub use ty::{Dim, FuncType, TensorType, Type};
pub use value::Value;

// The node-per-expression IR's names, for the crate's own modules that still hold it.
use legacy::{Args, Binding, Call, Callee, Expr, ExprKind, Var, VarMap, VarNode, VarSet};

/// The node-per-expression IR the arenas replace, kept while its last users (tests that compare
/// the two) move over; not part of the API.
#[doc(hidden)]
pub mod legacy {
    pub use crate::eval::{eval_expr, eval_function, eval_function_limited};
    pub use crate::expr::{
        Args, Binding, Call, Callee, Expr, ExprKind, ExprNode, Function, FunctionNode, Var, VarNode,
    };
    pub use crate::module::Module;
    pub use crate::typeck::infer_expr;
    pub use crate::var_map::{VarHasher, VarMap, VarSet};
    pub use crate::{structural, visit};

    /// The Graphviz text of a module.
    pub fn module_dot(m: &Module) -> String {
        crate::dot::module_dot(m)
    }

    /// Checks that every variable is bound once and used in scope, and every global exists.
    ///
    /// # Errors
    /// The problems found, with positions.
    pub fn check_well_formed(m: &Module) -> Result<(), crate::IrError> {
        crate::wellformed::check_module(m)
    }

    /// Random programs built as nodes.
    #[cfg(feature = "testing")]
    pub fn program(choices: &[u32]) -> Module {
        crate::random::expr_program(choices)
    }
}
mod dot;
