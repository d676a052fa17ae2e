//! The body being rewritten, seen through ids of its own type: a hook gets the old node as an
//! [`OldId`] and the new one as an [`ExprId`], so reading one body with the other's id does
//! not compile.

use crate::Op;
use crate::attrs::Attrs;
use crate::body::{Body, ExprId, List, Node};
use crate::span::Span;

/// A node of the body being rewritten (the input of [`ArenaFunction::rewrite`](crate::body::ArenaFunction::rewrite)).
///
/// Read it through [`RewriteCx::old`](super::RewriteCx::old); analyses computed on the input
/// body (its types, a liveness table) are indexed by [`OldId::id`]. A node of the body being
/// built is an [`ExprId`]: the two do not mix by accident.
///
/// ```compile_fail
/// use irpass_ir::ExprId;
/// use irpass_ir::rewrite::{Rewrite, RewriteCx, OldId};
/// struct Wrong;
/// impl Rewrite for Wrong {
///     fn rewrite(&mut self, cx: &mut RewriteCx<'_>, _old: OldId, new: ExprId) -> Option<ExprId> {
///         // The new id read in the old body: a type error.
///         let _ = cx.old.node(new);
///         None
///     }
/// }
/// ```
///
/// Nor does the other way round:
///
/// ```compile_fail
/// use irpass_ir::ExprId;
/// use irpass_ir::rewrite::{Rewrite, RewriteCx, OldId};
/// struct Wrong;
/// impl Rewrite for Wrong {
///     fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: OldId, _new: ExprId) -> Option<ExprId> {
///         // The old id read in the new body: a type error.
///         let _ = cx.new.body().node(old);
///         None
///     }
/// }
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct OldId(ExprId);

impl OldId {
    /// The walk's own conversion (it knows `id` is a node of the input body).
    #[inline]
    pub(super) fn of(id: ExprId) -> Self {
        OldId(id)
    }

    /// The id in the input body, for an analysis of that body (`types.of(old.id())`).
    #[inline]
    pub fn id(self) -> ExprId {
        self.0
    }

    /// The node's position in the input body (for a table indexed by it).
    #[inline]
    pub fn index(self) -> usize {
        crate::body::Idx::index(self.0)
    }
}

/// The body being rewritten, read with [`OldId`]s: what [`RewriteCx::old`](super::RewriteCx::old)
/// holds. Every accessor that takes or hands out a node id uses `OldId`; [`OldBody::body`] is the
/// plain body, for what has no node id in it (variables, globals, closures) and for analyses.
#[derive(Clone, Copy)]
pub struct OldBody<'a>(&'a Body);

impl<'a> OldBody<'a> {
    /// `body` read as the input of a rewrite: what [`ArenaFunction::rewrite`](crate::body::ArenaFunction::rewrite)
    /// hands its hooks, and what links another body's nodes to `body`'s outside one (a
    /// typer seeded from `body`'s types, [`LocalTyper::seed_from`](crate::infer::LocalTyper::seed_from)).
    pub fn of(body: &'a Body) -> Self {
        OldBody(body)
    }

    /// The plain body (its ids are [`OldId::id`]s).
    #[inline]
    pub fn body(self) -> &'a Body {
        self.0
    }

    /// Node `id`. Its operand fields are plain ids of this body: [`OldBody::at`] turns one
    /// into an `OldId`.
    #[inline]
    pub fn node(self, id: OldId) -> &'a Node {
        self.0.node(id.0)
    }

    /// An id read from one of this body's nodes (an operand field of [`OldBody::node`]).
    ///
    /// # Panics
    /// When `id` is beyond this body (it cannot be one of its nodes' fields).
    #[inline]
    pub fn at(self, id: ExprId) -> OldId {
        assert!(
            crate::body::Idx::index(id) < self.0.len(),
            "{id:?} is not a node of the body being rewritten"
        );
        OldId(id)
    }

    /// Operand list `list` of one of this body's nodes.
    #[inline]
    pub fn list(self, list: List) -> OldList<'a> {
        OldList(self.0.list(list))
    }

    /// The operator, arguments and attributes of node `id` if it is an operator call.
    #[inline]
    pub fn op_call(self, id: OldId) -> Option<(Op, OldList<'a>, &'a Attrs)> {
        let (op, args, attrs) = self.0.op_call(id.0)?;
        Some((op, OldList(args), attrs))
    }

    /// The arguments and attributes of node `id` if it calls the operator named `op`.
    #[inline]
    pub fn call_of(self, id: OldId, op: &str) -> Option<(OldList<'a>, &'a Attrs)> {
        let (args, attrs) = self.0.call_of(id.0, op)?;
        Some((OldList(args), attrs))
    }

    /// The value of node `id` if it is a scalar constant (any dtype, as `f64`).
    #[inline]
    pub fn scalar(self, id: OldId) -> Option<f64> {
        self.0.scalar(id.0)
    }

    /// Where node `id` came from in the source text, if known.
    #[inline]
    pub fn span(self, id: OldId) -> Option<Span> {
        self.0.span(id.0)
    }
}

/// Operands of a node of the body being rewritten, handed out as [`OldId`]s.
#[derive(Clone, Copy)]
pub struct OldList<'a>(&'a [ExprId]);

impl OldList<'_> {
    /// How many operands.
    #[inline]
    pub fn len(self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0.is_empty()
    }

    /// Operand `i`, if there is one.
    #[inline]
    pub fn get(self, i: usize) -> Option<OldId> {
        self.0.get(i).copied().map(OldId)
    }

    /// Exactly `N` operands as an array (`let [x, w] = args.array()?;`), or `None` for
    /// another count.
    #[inline]
    pub fn array<const N: usize>(self) -> Option<[OldId; N]> {
        let a: &[ExprId; N] = self.0.try_into().ok()?;
        Some(a.map(OldId))
    }

    /// The operands in order.
    #[inline]
    pub fn iter(self) -> impl DoubleEndedIterator<Item = OldId> + ExactSizeIterator {
        self.0.iter().copied().map(OldId)
    }

    /// The operands in a vector.
    pub fn to_vec(self) -> Vec<OldId> {
        self.iter().collect()
    }
}

impl<'a> OldList<'a> {
    /// The plain ids of the input body, for an analysis of that body ([`OldId::id`] of each).
    #[inline]
    pub fn ids(self) -> &'a [ExprId] {
        self.0
    }
}
