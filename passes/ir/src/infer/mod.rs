//! Type inference on bodies: one scan over each function's ids (operands first), unification
//! over a union-find of type terms, operator relations solved as soon as their argument types
//! are known. Nothing recurses as deep as the program nests: the scan is a loop, unification
//! works through an explicit list of pairs, and the only recursions (over a type's structure)
//! stop at [`MAX_TYPE_DEPTH`].
//!
//! The result is a side table per function ([`BodyTypes`]): a [`TypeId`] per node and per
//! variable, into a table of distinct types shared by the functions typed together.

use std::sync::Arc;

mod local;
mod scan;
mod solve;
mod terms;
#[cfg(test)]
mod tests;

pub use local::{LocalTyper, LocalTypes, TypeId, TypeTable, local_types};

use crate::body::{Body, ExprId, Idx, VarId};
use crate::error::IrError;
use crate::{Span, Type};
use terms::{Infer, TermId};

/// How deeply a type may nest (tuples in tuples, functions returning functions). A program
/// whose types nest deeper is a type error, not a stack overflow.
pub const MAX_TYPE_DEPTH: usize = 256;

/// At most this many problems are reported.
pub(super) const MAX_PROBLEMS: usize = 20;

/// A function to type: its body, parameters, result and declared result type.
#[derive(Clone, Copy, Debug)]
pub struct FunctionInput<'a> {
    /// Its global name (without `@`).
    pub name: &'a str,
    /// The arena.
    pub body: &'a Body,
    /// The parameters.
    pub params: &'a [VarId],
    /// The result.
    pub root: ExprId,
    /// The declared result type.
    pub ret_type: Option<&'a Type>,
    /// Where the function was written.
    pub span: Option<Span>,
}

/// The types of one function's nodes and variables (`_` where inference left a part unknown,
/// and for nodes not reachable from the function's result).
#[derive(Clone, Debug)]
pub struct BodyTypes {
    table: Arc<TypeTable>,
    nodes: Vec<TypeId>,
    vars: Vec<TypeId>,
    function: TypeId,
    callees: Vec<(Box<str>, TypeId)>,
}

impl BodyTypes {
    /// The type of node `e`.
    #[inline]
    pub fn of(&self, e: ExprId) -> &Type {
        self.table.get(self.nodes[e.index()])
    }

    /// The type id of node `e` (equal ids, equal types).
    #[inline]
    pub fn id(&self, e: ExprId) -> TypeId {
        self.nodes[e.index()]
    }

    /// The type id of variable `v`.
    #[inline]
    pub fn var_id(&self, v: VarId) -> TypeId {
        self.vars[v.index()]
    }

    /// The type of variable `v`.
    #[inline]
    pub fn var(&self, v: VarId) -> &Type {
        self.table.get(self.vars[v.index()])
    }

    /// The function's type.
    pub fn function_type(&self) -> &Type {
        self.table.get(self.function)
    }

    /// The distinct types.
    pub fn table(&self) -> &TypeTable {
        &self.table
    }

    /// The globals the function refers to, each with the type it was typed against: the
    /// function's types stay valid while those globals keep these types.
    pub fn callees(&self) -> impl Iterator<Item = (&str, &Type)> {
        self.callees
            .iter()
            .map(|(name, t)| (&**name, self.table.get(*t)))
    }
}

/// Infers the types of `functions`, which may call each other and the globals `known` gives a
/// type for (functions typed before and not changed since). One [`BodyTypes`] per function,
/// in order.
///
/// # Errors
/// The type errors found (at most 20), in source order, without a source attached.
///
/// ```
/// use irpass_ir::Module;
/// use irpass_ir::infer::{FunctionInput, infer_types};
/// let m = Module::parse("def @main(%x: Tensor[(2, 3), float32]) { let %y = exp(%x); sum(%y, axis=[1]) }").unwrap();
/// let f = m.get("main").unwrap();
/// let a = &f.code;
/// let input = FunctionInput { name: "main", body: &a.body, params: &a.params, root: a.root, ret_type: None, span: None };
/// let types = infer_types(&[input], &|_| None).unwrap();
/// assert_eq!(types[0].of(a.root).to_string(), "Tensor[(2), float32]");
/// assert_eq!(types[0].function_type().to_string(), "fn (Tensor[(2, 3), float32]) -> Tensor[(2), float32]");
/// ```
pub fn infer_types(
    functions: &[FunctionInput<'_>],
    known: &dyn Fn(&str) -> Option<Type>,
) -> Result<Vec<BodyTypes>, IrError> {
    let mut inf = Infer::default();
    inf.table.intern(Type::Unknown);
    inf.depths.push(0);
    let mut sigs = Vec::with_capacity(functions.len());
    for f in functions {
        let params: Vec<TermId> = f
            .params
            .iter()
            .map(|&p| inf.annotation(f.body.var(p).annotation.as_ref()))
            .collect();
        let ret = inf.annotation(f.ret_type);
        let sig = inf.func_term(&params, ret);
        inf.globals.insert(f.name.into(), sig);
        sigs.push((params, ret, sig));
    }
    let mut scans = Vec::with_capacity(functions.len());
    for (i, f) in functions.iter().enumerate() {
        let (params, ret, _) = &sigs[i];
        scans.push(inf.function(i, f, params, *ret, known));
    }
    inf.solve(functions);
    if !inf.problems.is_empty() {
        return Err(inf.error());
    }
    let mut out = Vec::with_capacity(functions.len());
    for (i, (f, scan)) in functions.iter().zip(scans).enumerate() {
        let nodes = scan
            .slots
            .iter()
            .zip(&scan.live)
            .zip(f.body.ids())
            .map(|((&t, &live), id)| {
                if live {
                    inf.output(t, f.body.span(id))
                } else {
                    TypeId::new(0)
                }
            })
            .collect();
        let vars = scan
            .vars
            .iter()
            .map(|t| t.map_or(TypeId::new(0), |t| inf.output(t, None)))
            .collect();
        let function = inf.output(sigs[i].2, f.span);
        let callees = scan
            .callees
            .iter()
            .map(|(name, t)| (name.clone(), inf.output(*t, None)))
            .collect();
        out.push((nodes, vars, function, callees));
    }
    if !inf.problems.is_empty() {
        return Err(inf.error());
    }
    let table = Arc::new(std::mem::take(&mut inf.table));
    Ok(out
        .into_iter()
        .map(|(nodes, vars, function, callees)| BodyTypes {
            table: table.clone(),
            nodes,
            vars,
            function,
            callees,
        })
        .collect())
}
