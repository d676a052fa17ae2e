//! A function's code: its arena, parameters and result.

use super::node::{Body, ExprId, VarId};

/// A function as an arena: its body, parameters and result (the part of a
/// [`Function`](crate::Function) that passes rewrite).
///
/// ```
/// use irpass_ir::Module;
/// let m = Module::parse("def @main(%x: float32) { %0 = exp(%x); add(%0, %0) }").unwrap();
/// let code = &m.get("main").unwrap().code;
/// assert_eq!(code.body.len(), 3); // %x, exp, add: the shared `exp` is one node
/// assert_eq!(code.params.len(), 1);
/// ```
#[derive(Clone, Debug)]
pub struct ArenaFunction {
    /// The arena of the function and the closures in it.
    pub body: Body,
    /// The parameters.
    pub params: Vec<VarId>,
    /// The result.
    pub root: ExprId,
}
