//! The representation: one dense, indexed arena per function ([`Body`]), built operands first
//! by a [`BodyBuilder`], addressed by typed ids ([`ExprId`], [`VarId`], ...) in
//! [`IndexVec`]s, with side tables for spans and names (`docs/ir-design.md` in the repository
//! tells why). A node used twice is one node, so a program is a DAG; post-order is an index
//! scan; nothing here recurses as deep as the input nests.
//!
//! The algorithms over a body live beside it: [`crate::infer`] (types), [`crate::rewrite`] (the
//! rewriter), [`crate::structural`] (equality and hashing), [`crate::text`] (the format) and
//! [`crate::eval`] (the interpreter).
//!
//! ```
//! use irpass_ir::body::{BodyBuilder, ArenaFunction, post_order};
//! use irpass_ir::{Attrs, DType, Type};
//!
//! let mut b = BodyBuilder::new();
//! let x = b.var("x", Some(Type::scalar(DType::Float32)), None);
//! let xe = b.use_var(x);
//! let e = b.op("exp", &[xe], Attrs::new()).unwrap();
//! let root = b.op("add", &[e, e], Attrs::new()).unwrap(); // `exp` is shared: one node, two uses
//! let code = ArenaFunction { body: b.finish(), params: vec![x], root };
//! assert_eq!(post_order(&code.body, code.root).len(), 3);
//! ```

mod build;
mod code;
mod copy;
mod index;
mod live;
mod node;

pub use build::BodyBuilder;
pub use code::ArenaFunction;
pub use copy::{VarSubst, copy_region, post_order};
pub(crate) use index::define_index;
pub use index::{Idx, IndexVec};
pub use live::live_vars;
pub use node::{
    AttrsId, Body, ClosureData, ClosureId, ConstId, ExprId, GlobalId, List, Node, Sig, SigId,
    VarData, VarId,
};
