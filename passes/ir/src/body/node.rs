//! The arena of one function: nodes, their operand lists, variables, closures, and side tables.

use std::sync::Arc;

use super::index::{Idx, IndexVec, define_index};
use crate::{Attrs, Op, Span, Tensor, Type};

define_index! {
    /// An expression node of a [`Body`].
    pub struct ExprId, "e";
}
define_index! {
    /// A variable of a [`Body`] (a parameter, a `let` binding, a closure parameter).
    pub struct VarId, "v";
}
define_index! {
    /// A closure of a [`Body`]: its parameters, result type, attributes and body root.
    pub struct ClosureId, "c";
}
define_index! {
    /// An interned attribute set of a [`Body`].
    pub struct AttrsId, "a";
}
define_index! {
    /// An interned operator and attribute set of a [`Body`] (a call's [`Sig`]).
    pub struct SigId, "s";
}
define_index! {
    /// An interned global name (`@f`) of a [`Body`].
    pub struct GlobalId, "g";
}
define_index! {
    /// A constant tensor of a [`Body`].
    pub struct ConstId, "k";
}

/// The span table's entry for a node without one.
pub(crate) const NO_SPAN: Span = Span {
    start: u32::MAX,
    end: u32::MAX,
};

/// A run of entries in one of a body's pools (operand lists, `let` bindings): bodies never
/// change once built, so lists are ranges of one append-only vector, not separate allocations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct List {
    pub(crate) start: u32,
    pub(crate) len: u32,
}

impl List {
    /// The number of entries.
    #[inline]
    pub fn len(self) -> usize {
        self.len as usize
    }

    /// Whether it is empty.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    /// The positions in the pool.
    #[inline]
    pub(crate) fn range(self) -> std::ops::Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

/// One node. Operands are [`ExprId`]s smaller than the node's own (see [`Body`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// A use of a variable. A body holds one such node per variable, shared by all uses.
    Var(VarId),
    /// A global function (`@name`).
    Global(GlobalId),
    /// A constant tensor.
    Constant(ConstId),
    /// A call of a registered operator, with its (normalised) attributes: both in the
    /// body's table of signatures ([`Body::sig`]), so a node is 16 bytes and two calls of the
    /// same operator with the same attributes have the same `sig`.
    CallOp {
        /// The operator and attributes.
        sig: SigId,
        /// The arguments.
        args: List,
    },
    /// A call of a function value (a global, a variable bound to a closure, a closure).
    Call {
        /// What is called.
        callee: ExprId,
        /// The arguments.
        args: List,
    },
    /// A block: `let v1 = e1; ...; let vn = en; body`. Each variable is in scope in the later
    /// values and the body (a closure's variable also in its own value, so it can recurse).
    Let {
        /// The bindings, in order.
        bindings: List,
        /// The result.
        body: ExprId,
    },
    /// `(a, b, ...)`.
    Tuple(List),
    /// `tuple.index`.
    Proj(ExprId, u32),
    /// `if (cond) { then } else { otherwise }`.
    If(ExprId, ExprId, ExprId),
    /// A nested function.
    Closure(ClosureId),
}

/// What an operator call calls: the operator and its attribute set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sig {
    /// The operator.
    pub op: Op,
    /// Its attributes.
    pub attrs: AttrsId,
}

/// A variable's data.
#[derive(Clone, Debug, PartialEq)]
pub struct VarData {
    /// The name it was written with (without `%`): shared, so that a rewrite copying the
    /// variable into a new body copies no text.
    pub name: Arc<str>,
    /// Its type annotation, if written.
    pub annotation: Option<Type>,
    /// Where it was defined.
    pub span: Option<Span>,
}

/// A closure's data: a region of the same body.
#[derive(Clone, Debug, PartialEq)]
pub struct ClosureData {
    /// The parameters.
    pub params: Vec<VarId>,
    /// The declared result type.
    pub ret_type: Option<Type>,
    /// Attributes (`Primitive`, ...).
    pub attrs: Attrs,
    /// The root of its body.
    pub body: ExprId,
}

/// The arena of one function: every expression node of the function and of the closures in
/// it, in a dense vector, built operands-first (every operand's id is smaller than its user's),
/// so the ids are a topological order: a post-order walk is a scan of the ids, a node shared by
/// several users is one id seen once, and dropping the body frees a handful of vectors.
///
/// Variable-length lists (arguments, tuple fields, bindings) are ranges of pools; variables,
/// closures, attribute sets, global names and constants are tables indexed by their own ids.
/// A body is immutable once built: a pass that changes it builds a new one
/// ([`ArenaFunction::rewrite`](crate::body::ArenaFunction::rewrite)).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Body {
    pub(crate) nodes: IndexVec<ExprId, Node>,
    /// Where each node was written; [`NO_SPAN`] for none (8 bytes a node, not 12).
    pub(crate) spans: IndexVec<ExprId, Span>,
    pub(crate) operands: Vec<ExprId>,
    pub(crate) bindings: Vec<(VarId, ExprId)>,
    /// Shared with the bodies rewritten from this one: a variable keeps its id across
    /// rewrites, and a rewrite copies no variable.
    pub(crate) vars: Arc<IndexVec<VarId, VarData>>,
    /// The use node of each variable, once made.
    pub(crate) var_nodes: IndexVec<VarId, Option<ExprId>>,
    pub(crate) closures: IndexVec<ClosureId, ClosureData>,
    pub(crate) attrs: IndexVec<AttrsId, Attrs>,
    pub(crate) sigs: IndexVec<SigId, Sig>,
    pub(crate) globals: IndexVec<GlobalId, Box<str>>,
    pub(crate) constants: IndexVec<ConstId, Arc<Tensor>>,
    /// Each constant's hash of its bits ([`Tensor::hash_bits`]), made when the constant was
    /// (while its data is in cache), so that merging constants reads no element.
    pub(crate) constant_hashes: IndexVec<ConstId, u64>,
}

impl Body {
    /// The number of nodes.
    #[inline]
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether it has no node.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The node `id`.
    #[inline]
    pub fn node(&self, id: ExprId) -> &Node {
        &self.nodes[id]
    }

    /// Every node id, in order (operands before their users).
    #[inline]
    pub fn ids(&self) -> impl DoubleEndedIterator<Item = ExprId> + ExactSizeIterator + use<> {
        self.nodes.indices()
    }

    /// Where node `id` was written, if it came from text.
    #[inline]
    pub fn span(&self, id: ExprId) -> Option<Span> {
        let span = self.spans[id];
        (span != NO_SPAN).then_some(span)
    }

    /// The expressions of a list (arguments, tuple fields).
    #[inline]
    pub fn list(&self, list: List) -> &[ExprId] {
        &self.operands[list.range()]
    }

    /// The bindings of a `let` block, in order.
    #[inline]
    pub fn bindings(&self, list: List) -> &[(VarId, ExprId)] {
        &self.bindings[list.range()]
    }

    /// Variable `v`.
    #[inline]
    pub fn var(&self, v: VarId) -> &VarData {
        &self.vars[v]
    }

    /// The number of variables.
    pub fn var_count(&self) -> usize {
        self.vars.len()
    }

    /// The node that uses `v`, if the body has one.
    #[inline]
    pub fn var_node(&self, v: VarId) -> Option<ExprId> {
        self.var_nodes[v]
    }

    /// The number of closures (ids `0..closure_count()`; a closure nested in another has the
    /// smaller id).
    pub fn closure_count(&self) -> usize {
        self.closures.len()
    }

    /// Closure `c`.
    #[inline]
    pub fn closure(&self, c: ClosureId) -> &ClosureData {
        &self.closures[c]
    }

    /// Attribute set `a`.
    #[inline]
    pub fn attrs(&self, a: AttrsId) -> &Attrs {
        &self.attrs[a]
    }

    /// The number of distinct operator signatures (operator and attributes) in this body.
    #[inline]
    pub fn sig_count(&self) -> usize {
        self.sigs.len()
    }

    /// Signature `s`: the operator and attribute set of an operator call.
    #[inline]
    pub fn sig(&self, s: SigId) -> Sig {
        self.sigs[s]
    }

    /// The operator, arguments and attributes of node `id` if it is an operator call.
    #[inline]
    pub fn op_call(&self, id: ExprId) -> Option<(Op, &[ExprId], &Attrs)> {
        match &self.nodes[id] {
            Node::CallOp { sig, args } => {
                let Sig { op, attrs } = self.sigs[*sig];
                Some((op, self.list(*args), &self.attrs[attrs]))
            }
            _ => None,
        }
    }

    /// The arguments and attributes of node `id` if it calls the operator named `op`:
    /// `if let Some(([x, w], attrs)) = body.call_of(e, "nn.conv2d")` reads a pattern in one step.
    #[inline]
    pub fn call_of(&self, id: ExprId, op: &str) -> Option<(&[ExprId], &Attrs)> {
        let (o, args, attrs) = self.op_call(id)?;
        (o.name() == op).then_some((args, attrs))
    }

    /// The value of node `id` if it is a scalar constant (any dtype, as `f64`).
    #[inline]
    pub fn scalar(&self, id: ExprId) -> Option<f64> {
        match &self.nodes[id] {
            Node::Constant(k) => {
                let t = &self.constants[*k];
                if t.shape().is_empty() {
                    t.scalar_value()
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// Global name `g` (without `@`).
    #[inline]
    pub fn global(&self, g: GlobalId) -> &str {
        &self.globals[g]
    }

    /// Constant `k`.
    #[inline]
    pub fn constant(&self, k: ConstId) -> &Arc<Tensor> {
        &self.constants[k]
    }

    /// Constant `k`'s hash of its bits: equal constants have equal hashes.
    #[inline]
    pub fn constant_hash(&self, k: ConstId) -> u64 {
        self.constant_hashes[k]
    }

    /// Calls `f` on each operand of `id`, in evaluation order (a closure's body root, a
    /// block's values then its result).
    #[inline]
    pub fn for_each_operand(&self, id: ExprId, mut f: impl FnMut(ExprId)) {
        match &self.nodes[id] {
            Node::Var(_) | Node::Global(_) | Node::Constant(_) => {}
            Node::CallOp { args, .. } => self.list(*args).iter().copied().for_each(f),
            Node::Call { callee, args } => {
                f(*callee);
                self.list(*args).iter().copied().for_each(f);
            }
            Node::Let { bindings, body } => {
                self.bindings(*bindings).iter().for_each(|&(_, v)| f(v));
                f(*body);
            }
            Node::Tuple(fields) => self.list(*fields).iter().copied().for_each(f),
            Node::Proj(t, _) => f(*t),
            Node::If(c, t, o) => {
                f(*c);
                f(*t);
                f(*o);
            }
            Node::Closure(c) => f(self.closures[*c].body),
        }
    }

    /// Which nodes are reachable from `root` (one backward scan: operands have smaller ids).
    pub fn reachable(&self, root: ExprId) -> Vec<bool> {
        let mut live = vec![false; self.len()];
        live[root.index()] = true;
        for id in self.ids().rev() {
            if live[id.index()] {
                self.for_each_operand(id, |o| live[o.index()] = true);
            }
        }
        live
    }

    /// The users of each node (indexed by node id, in id order), counting only users reachable
    /// from `root` (a node used twice by one user lists it twice): a node other than `root` is
    /// reachable exactly when it has users.
    pub fn users(&self, root: ExprId) -> Vec<Vec<ExprId>> {
        let live = self.reachable(root);
        let mut users = vec![Vec::new(); self.len()];
        for id in self.ids() {
            if live[id.index()] {
                self.for_each_operand(id, |o| users[o.index()].push(id));
            }
        }
        users
    }

    /// How many of the body's users refer to each node, counting only users reachable from
    /// `root` (a node used twice by one user counts twice).
    pub fn use_counts(&self, root: ExprId) -> Vec<u32> {
        let live = self.reachable(root);
        let mut uses = vec![0u32; self.len()];
        for id in self.ids() {
            if live[id.index()] {
                self.for_each_operand(id, |o| uses[o.index()] += 1);
            }
        }
        uses
    }
}
