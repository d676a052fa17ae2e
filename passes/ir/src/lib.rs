//! The reference IR: a Relay-style typed tensor IR.
//!
//! - [`Module`]: named global [`Function`]s; implements [`IrModule`](irpass::IrModule) with O(1)
//!   change detection (functions are `Arc`s, copied on write).
//! - A function's code is one arena ([`Body`], in [`body`]): dense, indexed nodes built operands
//!   first — variables, globals, constants, operator and function calls, blocks of `let`
//!   bindings, tuples and projections, `if`, closures (regions of the same arena) — with side
//!   tables for types, spans and names. A node used twice is one node (a program is a DAG).
//! - [`text`]: Relay's text format (v0.0.5) plus inline tensor literals
//!   (`Tensor[(2), float32]{1, 2}`); [`Module::parse`] and `Display`.
//! - Operators ([`op`]): registered through `inventory` with attribute schemas, type relations
//!   and reference kernels.
//! - [`infer`]: type inference ([`Module::infer_types`], incremental, per function);
//!   [`verify`]: well-formedness ([`Module::check_well_formed`]); [`structural`]: equality and
//!   hashing that respect sharing; [`rewrite`]: the rewriter a pass is written with
//!   ([`ArenaFunction::rewrite`](body::ArenaFunction::rewrite)); [`pattern`]: TVM's dataflow patterns, rules applied to a fixpoint and
//!   partitioning (rules checked at compile time: `irpass_ir_macros::rules!`); [`eval`]: the
//!   interpreter ([`eval_function`]), the semantic reference.
//! - Layers, each using only those before it: the core types (dtype, shape, tensor, attributes,
//!   values, errors) and [`op`]; the representation ([`body`]); the algorithms over it ([`infer`],
//!   [`rewrite`], [`structural`], [`text`]); [`Function`], [`verify`], [`Module`] and
//!   [`pattern`]; the interpreter ([`eval`]) and the Graphviz output ([`module_dot`]) on
//!   modules.
//! - No part recurses as deep as the input nests: text nested a million deep parses, types,
//!   prints and evaluates, or gets a clear error at a stated limit.
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

// Core types.
mod attrs;
mod dtype;
mod error;
pub mod layout;
mod literal;
mod span;
mod tensor;
mod ty;
mod value;

pub mod op;

// The representation, and the algorithms over it.
pub mod body;
pub mod infer;
pub mod rewrite;
pub mod structural;
pub mod text;

// Functions and modules.
mod bind;
mod function;
mod module;
pub mod pattern;
pub mod verify;

// On modules: the interpreter, Graphviz output, programs for tests.
mod dot;
pub mod eval;
pub mod models;
#[cfg(feature = "testing")]
pub mod random;

pub use attrs::{AttrValue, Attrs};
pub use dtype::DType;
pub use error::{ErrorKind, IrError, Problem, Source};
pub use span::Span;
pub use tensor::{F32Le, Tensor, TensorData};
pub use ty::{Dim, FuncType, Symbol, TensorType, Type};
pub use value::{Closure, OpaqueValue, Value};

pub use op::{Op, OpDef, OpPattern};

pub use body::{ArenaFunction, Body, BodyBuilder, ExprId, Idx, Node, VarId};
pub use infer::BodyTypes;
pub use rewrite::{LetAction, OldId, Rewrite, RewriteCx};
pub use text::constant_text;

pub use function::{Function, FunctionData};
pub use module::Module;

pub use dot::module_dot;
pub use eval::{EvalLimits, eval_function, eval_function_limited};

/// What `irpass_ir_macros::rules!` generates code against; not an API.
#[doc(hidden)]
pub mod __private {
    pub use irpass;
}
