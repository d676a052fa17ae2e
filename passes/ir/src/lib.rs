//! The reference IR: a Relay-style typed tensor IR.
//!
//! - [`Module`]: named global [`Function`]s; implements [`IrModule`](irpass::IrModule) with O(1)
//!   change detection (functions are `Arc`s, copied on write).
//! - A function's code is one arena ([`arena::Body`]): dense, indexed nodes built operands
//!   first — variables, globals, constants, operator and function calls, blocks of `let`
//!   bindings, tuples and projections, `if`, closures (regions of the same arena) — with side
//!   tables for types, spans and names. A node used twice is one node (a program is a DAG).
//! - Text: Relay's text format (v0.0.5) plus inline tensor literals
//!   (`Tensor[(2), float32]{1, 2}`); [`Module::parse`] and `Display`.
//! - Operators ([`op`]): registered through `inventory` with attribute schemas, type relations
//!   and reference kernels.
//! - [`infer_types`](Module::infer_types) (incremental, per function), [well-formedness](check_well_formed),
//!   structural equality, the [rewriter](arena::rewrite_body), and the [interpreter](eval_function).
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

pub mod arena;
mod attrs;
mod dtype;
mod error;
mod eval;
pub mod models;
pub mod op;
mod parse;
mod print;
#[cfg(feature = "testing")]
pub mod random;
mod span;
mod tensor;
mod ty;
mod value;

pub use arena::{
    Function, FunctionData, Module, check_well_formed, eval_function, eval_function_limited,
    module_dot,
};
pub use attrs::{AttrValue, Attrs};
pub use dtype::DType;
pub use error::{ErrorKind, IrError, Problem, Source};
pub use eval::{Closure, EvalLimits};
pub use op::{Op, OpDef, OpPattern};
pub use print::constant_text;
pub use span::Span;
pub use tensor::{Tensor, TensorData};
pub use ty::{Dim, FuncType, TensorType, Type};
pub use value::Value;
