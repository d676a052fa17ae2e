//! Building a [`Body`]: every constructor takes operands already built, so the ids come out
//! operands-first by construction.

use std::sync::Arc;

use std::hash::Hasher;

use rustc_hash::{FxHashMap, FxHasher};

use super::index::Idx;
use super::node::{
    AttrsId, Body, ClosureData, ClosureId, ExprId, GlobalId, List, NO_SPAN, Node, Sig, SigId,
    VarData, VarId,
};
use crate::{Attrs, Op, Span, Tensor, Type};

/// Builds a [`Body`], node by node, operands first.
///
/// ```
/// use irpass_ir::body::{BodyBuilder, Node};
/// use irpass_ir::{Attrs, Op};
/// let mut b = BodyBuilder::new();
/// let x = b.var("x", None, None);
/// let xe = b.use_var(x);
/// let sum = b.call_op(Op::get("add").unwrap(), &[xe, xe], Attrs::new());
/// let body = b.finish();
/// assert!(matches!(body.node(sum), Node::CallOp { .. }));
/// assert_eq!(body.op_call(sum).unwrap().1, [xe, xe]);
/// ```
#[derive(Default)]
pub struct BodyBuilder {
    body: Body,
    attrs: FxHashMap<Attrs, AttrsId>,
    globals: FxHashMap<Box<str>, ExprId>,
    sigs: FxHashMap<(&'static str, AttrsId), SigId>,
}

impl BodyBuilder {
    /// An empty builder.
    #[inline]
    pub fn new() -> Self {
        BodyBuilder::default()
    }

    /// An empty builder with room for about `nodes` nodes.
    pub fn with_capacity(nodes: usize) -> Self {
        let mut b = BodyBuilder::default();
        b.body.nodes = super::IndexVec::with_capacity(nodes);
        b.body.spans = super::IndexVec::with_capacity(nodes);
        b.body.operands = Vec::with_capacity(nodes);
        b
    }

    /// An empty builder for a rewrite of `like`: it has `like`'s variables, with the same ids
    /// (the table is shared, not copied, until a new variable is added), and room for a body
    /// of `like`'s size.
    pub fn for_rewrite_of(like: &Body) -> Self {
        let mut b = BodyBuilder::with_capacity(like.len());
        b.body.operands = Vec::with_capacity(like.operands.len());
        b.body.bindings = Vec::with_capacity(like.bindings.len());
        b.body.vars = like.vars.clone();
        b.body.var_nodes = super::IndexVec::from_elem(None, like.vars.len());
        b.body.constants = super::IndexVec::with_capacity(like.constants.len());
        b.body.constant_hashes = super::IndexVec::with_capacity(like.constants.len());
        // The operator signatures and attribute sets too, and their interning tables: a
        // rewrite interns about as many as its input had.
        b.body.sigs = super::IndexVec::with_capacity(like.sigs.len());
        b.body.attrs = super::IndexVec::with_capacity(like.attrs.len());
        b.body.closures = super::IndexVec::with_capacity(like.closures.len());
        b.sigs.reserve(like.sigs.len());
        b.attrs.reserve(like.attrs.len());
        b
    }

    /// A builder that goes on building `body`: its nodes keep their ids, and new nodes may use
    /// them (to wrap a function's result, or add to it).
    pub fn extending(body: Body) -> Self {
        let attrs = body
            .attrs
            .iter_enumerated()
            .map(|(id, a)| (a.clone(), id))
            .collect();
        let sigs = body
            .sigs
            .iter_enumerated()
            .map(|(id, s)| ((s.op.name(), s.attrs), id))
            .collect();
        let globals = body
            .nodes
            .iter_enumerated()
            .filter_map(|(id, n)| match n {
                Node::Global(g) => Some((body.globals[*g].clone(), id)),
                _ => None,
            })
            .collect();
        BodyBuilder {
            body,
            attrs,
            globals,
            sigs,
        }
    }

    /// The body so far (to read nodes already built).
    #[inline]
    pub fn body(&self) -> &Body {
        &self.body
    }

    /// The finished body.
    pub fn finish(self) -> Body {
        self.body
    }

    /// A new variable, distinct from every other of the body.
    #[inline]
    pub fn var(&mut self, name: &str, annotation: Option<Type>, span: Option<Span>) -> VarId {
        self.add_var(VarData {
            name: name.into(),
            annotation,
            span,
        })
    }

    /// A new variable with this data (a copy of another body's variable).
    pub fn add_var(&mut self, data: VarData) -> VarId {
        self.body.var_nodes.push(None);
        Arc::make_mut(&mut self.body.vars).push(data)
    }

    /// The use of `v`: one node per variable, made at its first use.
    #[inline]
    pub fn use_var(&mut self, v: VarId) -> ExprId {
        if let Some(id) = self.body.var_nodes[v] {
            return id;
        }
        let id = self.node(Node::Var(v));
        self.body.var_nodes[v] = Some(id);
        id
    }

    /// A reference to global `name` (one node per name).
    #[inline]
    pub fn global(&mut self, name: &str) -> ExprId {
        if let Some(&id) = self.globals.get(name) {
            return id;
        }
        let g: GlobalId = self.body.globals.push(name.into());
        let id = self.node(Node::Global(g));
        self.globals.insert(name.into(), id);
        id
    }

    /// A constant (a large float32 one kept in its compact form, [`Tensor::compacted`]).
    pub fn constant(&mut self, t: Arc<Tensor>) -> ExprId {
        let t = t.compacted().map_or(t, Arc::new);
        let mut h = FxHasher::default();
        t.hash_bits(&mut h);
        self.constant_hashed(t, h.finish())
    }

    /// A constant whose [`Body::constant_hash`] is known (a copy of another body's).
    #[inline]
    pub fn constant_hashed(&mut self, t: Arc<Tensor>, hash: u64) -> ExprId {
        let k = self.body.constants.push(t);
        self.body.constant_hashes.push(hash);
        self.node(Node::Constant(k))
    }

    /// A call of the operator named `op`, its attributes normalised against its schema
    /// (defaults left out, so that equal calls have equal attributes).
    ///
    /// # Errors
    /// When the operator is unknown or an attribute does not fit its schema.
    pub fn op(&mut self, op: &str, args: &[ExprId], attrs: Attrs) -> Result<ExprId, String> {
        let op = Op::get(op)?;
        let attrs = op.normalize_attrs(attrs)?;
        Ok(self.call_op(op, args, attrs))
    }

    /// A call of operator `op` with `attrs` (already normalised against its schema).
    pub fn call_op(&mut self, op: Op, args: &[ExprId], attrs: Attrs) -> ExprId {
        let attrs = self.intern_attrs(attrs);
        self.call_op_interned(op, args, attrs)
    }

    /// A call of operator `op` with an attribute set of this body ([`BodyBuilder::intern_attrs`]).
    #[inline]
    pub fn call_op_interned(&mut self, op: Op, args: &[ExprId], attrs: AttrsId) -> ExprId {
        assert!(
            attrs.index() < self.body.attrs.len(),
            "{attrs:?} is not an attribute set of this body"
        );
        let sig = self.intern_sig(op, attrs);
        self.call_sig(sig, args)
    }

    /// The signature of `op` with attribute set `attrs` in this body (one per distinct pair).
    pub fn intern_sig(&mut self, op: Op, attrs: AttrsId) -> SigId {
        if let Some(&s) = self.sigs.get(&(op.name(), attrs)) {
            return s;
        }
        let s = self.body.sigs.push(Sig { op, attrs });
        self.sigs.insert((op.name(), attrs), s);
        s
    }

    /// A call with a signature of this body ([`Body::sig`]).
    #[inline]
    pub fn call_sig(&mut self, sig: SigId, args: &[ExprId]) -> ExprId {
        assert!(
            sig.index() < self.body.sigs.len(),
            "{sig:?} is not a signature of this body"
        );
        let args = self.list(args);
        self.node(Node::CallOp { sig, args })
    }

    /// A call of a function value.
    pub fn call(&mut self, callee: ExprId, args: &[ExprId]) -> ExprId {
        self.check(callee);
        let args = self.list(args);
        self.node(Node::Call { callee, args })
    }

    /// `let v1 = e1; ...; body`: the bindings in order, then `body` (`body` itself when there
    /// are none).
    pub fn lets(&mut self, bindings: &[(VarId, ExprId)], body: ExprId) -> ExprId {
        if bindings.is_empty() {
            return body;
        }
        self.check(body);
        for &(v, value) in bindings {
            assert!(
                v.index() < self.body.vars.len(),
                "{v:?} is not a variable of this body"
            );
            self.check(value);
        }
        let start = self.body.bindings.len();
        self.body.bindings.extend_from_slice(bindings);
        let bindings = List {
            start: u32::try_from(start).expect("more than u32::MAX bindings"),
            len: bindings.len() as u32,
        };
        self.node(Node::Let { bindings, body })
    }

    /// A tuple.
    pub fn tuple(&mut self, fields: &[ExprId]) -> ExprId {
        let fields = self.list(fields);
        self.node(Node::Tuple(fields))
    }

    /// `tuple.index`.
    pub fn proj(&mut self, tuple: ExprId, index: u32) -> ExprId {
        self.check(tuple);
        self.node(Node::Proj(tuple, index))
    }

    /// `if (cond) { then } else { otherwise }`.
    pub fn if_(&mut self, cond: ExprId, then: ExprId, otherwise: ExprId) -> ExprId {
        [cond, then, otherwise]
            .into_iter()
            .for_each(|e| self.check(e));
        self.node(Node::If(cond, then, otherwise))
    }

    /// A closure whose body (root `body`) was built in this body.
    #[inline]
    pub fn closure(&mut self, data: ClosureData) -> ExprId {
        self.check(data.body);
        let c: ClosureId = self.body.closures.push(data);
        self.node(Node::Closure(c))
    }

    /// Records where node `id` was written.
    pub fn set_span(&mut self, id: ExprId, span: Option<Span>) {
        self.body.spans[id] = span.unwrap_or(NO_SPAN);
    }

    /// The id of `attrs` in this body (one id per distinct set).
    pub fn intern_attrs(&mut self, attrs: Attrs) -> AttrsId {
        if let Some(&a) = self.attrs.get(&attrs) {
            return a;
        }
        let a = self.body.attrs.push(attrs.clone());
        self.attrs.insert(attrs, a);
        a
    }

    #[inline]
    fn list(&mut self, items: &[ExprId]) -> List {
        items.iter().for_each(|&e| self.check(e));
        let start = self.body.operands.len();
        self.body.operands.extend_from_slice(items);
        List {
            start: u32::try_from(start).expect("more than u32::MAX operands"),
            len: items.len() as u32,
        }
    }

    /// An operand must be a node of this body, built before: that is what keeps the ids
    /// operands-first.
    #[inline]
    fn check(&self, e: ExprId) {
        assert!(
            e.index() < self.body.nodes.len(),
            "{e:?} is not a node of this body (it has {} nodes)",
            self.body.nodes.len()
        );
    }

    #[inline]
    fn node(&mut self, node: Node) -> ExprId {
        self.body.spans.push(NO_SPAN);
        self.body.nodes.push(node)
    }
}
