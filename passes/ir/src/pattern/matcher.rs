//! Matching a compiled pattern at a node: TVM's `DFPatternMatcher` on the arena, with a memo per
//! pattern node (a node used twice matches one expression) undone on backtracking.

use std::sync::Arc;

use super::compile::{CompiledPattern, Flat, PId, PNode, attr_eq};
use crate::body::{Body, ExprId, Idx, Node, VarId};
use crate::infer::LocalTyper;
use crate::{AttrValue, Dim, Op, Type};

/// A match: the node matched and what each named hole captured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Match {
    /// The node the pattern matched.
    pub root: ExprId,
    /// The pattern's hole names (shared by all its matches).
    names: Arc<[Arc<str>]>,
    /// What each hole captured (`None` for a hole on the side of an alternative not taken).
    values: Vec<Option<ExprId>>,
    /// The nodes inside the match (what non-leaf patterns and constant patterns matched),
    /// sorted, when the matcher records them ([`Matcher::new`] does); what wildcards and
    /// variable patterns matched are its inputs.
    pub region: Vec<ExprId>,
}

impl Match {
    /// What the hole `name` captured.
    pub fn get(&self, name: &str) -> Option<ExprId> {
        let i = self.names.iter().position(|n| &**n == name)?;
        self.values[i]
    }

    /// Each hole that captured something, and what, in the pattern's order.
    pub fn captures(&self) -> impl Iterator<Item = (&str, ExprId)> {
        self.names
            .iter()
            .zip(&self.values)
            .filter_map(|(n, v)| Some((&**n, (*v)?)))
    }
}

impl std::ops::Index<&str> for Match {
    type Output = ExprId;

    /// What the hole captured; panics for a name the pattern does not have (a rule's code
    /// names only its own pattern's holes, which the rule macro checks).
    fn index(&self, name: &str) -> &ExprId {
        self.names
            .iter()
            .position(|n| &**n == name)
            .and_then(|i| self.values[i].as_ref())
            .unwrap_or_else(|| panic!("the pattern has no hole `?{name}`, or it matched nothing"))
    }
}

/// Where [`Matcher::find_next`] is in the enumeration of a node's matches.
#[derive(Clone, Debug, Default)]
pub struct Skip {
    script: Vec<u8>,
    done: bool,
}

impl Skip {
    /// Back to the first match (keeping the memory).
    pub fn reset(&mut self) {
        self.script.clear();
        self.done = false;
    }
}

/// Where the types a type constraint reads come from.
enum Types<'b> {
    Borrowed(&'b mut LocalTyper),
    Owned(Box<LocalTyper>),
}

/// Matches compiled patterns against the nodes of one body.
pub struct Matcher<'b> {
    body: &'b Body,
    types: Types<'b>,
    buf: Buffers,
}

/// A matcher's working memory, kept across matchers by a caller that matches often (a rule
/// set tries rules at every node), so that a match allocates nothing.
#[derive(Default)]
pub(crate) struct Buffers {
    memo: Vec<Option<ExprId>>,
    trail: Vec<PId>,
    region: Vec<ExprId>,
    /// Whether to record the region (what partitioning needs; a rewrite does not).
    record_region: bool,
    /// The choices made at the choice points of the match found (option, whether the other
    /// is untried), in the order met.
    trace: Vec<(u8, bool)>,
    /// The choices forced at the first choice points (the rest are free).
    script: Vec<u8>,
}

impl<'b> Matcher<'b> {
    /// A matcher over `body`; type constraints read `typer` when given (a rewrite passes the
    /// typer of the body it builds), else types inferred locally from annotations.
    pub fn new(body: &'b Body, typer: Option<&'b mut LocalTyper>) -> Matcher<'b> {
        Matcher {
            body,
            types: match typer {
                Some(t) => Types::Borrowed(t),
                None => Types::Owned(Box::default()),
            },
            buf: Buffers {
                record_region: true,
                ..Buffers::default()
            },
        }
    }

    /// A matcher working in `buf` (from [`Matcher::into_buffers`]), recording the region
    /// only when asked (an `exclusive` rule needs it, most rewrites do not).
    pub(crate) fn with_buffers(
        body: &'b Body,
        typer: &'b mut LocalTyper,
        mut buf: Buffers,
        record_region: bool,
    ) -> Matcher<'b> {
        buf.record_region = record_region;
        Matcher {
            body,
            types: Types::Borrowed(typer),
            buf,
        }
    }

    /// The working memory, for the next matcher.
    pub(crate) fn into_buffers(self) -> Buffers {
        self.buf
    }

    /// The match of `p` at `e` after `skip` (what an earlier call returned): the next one in
    /// depth-first order over the choice points (commutative operands, alternatives), or
    /// `None` when there is no other. Start with `Skip::default()`; a rule whose guard
    /// refuses a match asks for the next.
    pub fn find_next(&mut self, p: &CompiledPattern, e: ExprId, skip: &mut Skip) -> Option<Match> {
        if skip.done {
            return None;
        }
        // The buffers change hands: no allocation once they have grown.
        std::mem::swap(&mut self.buf.script, &mut skip.script);
        let found = self.find(p, e);
        // The next script: the last choice with an untried option, taken the other way.
        skip.script.clear();
        match self.buf.trace.iter().rposition(|&(_, untried)| untried) {
            Some(j) => {
                let taken = self.buf.trace[..j].iter().map(|&(o, _)| o);
                skip.script.extend(taken);
                skip.script.push(1);
            }
            None => skip.done = true,
        }
        self.buf.script.clear();
        found
    }

    /// The match of `p` at node `e`, if any.
    pub fn find(&mut self, p: &CompiledPattern, e: ExprId) -> Option<Match> {
        if let (Some(flat), false) = (&p.flat, self.buf.record_region) {
            return self.find_flat(p, flat, e);
        }
        self.buf.memo.clear();
        self.buf.memo.resize(p.nodes.len(), None);
        self.buf.trail.clear();
        self.buf.region.clear();
        self.buf.trace.clear();
        if !self.match_node(p, p.root, e) {
            return None;
        }
        let values = p
            .names
            .iter()
            .map(|&(_, id)| self.buf.memo[id as usize])
            .collect();
        let mut region = std::mem::take(&mut self.buf.region);
        region.sort_unstable();
        region.dedup();
        Some(Match {
            root: e,
            names: p.hole_names.clone(),
            values,
            region,
        })
    }

    /// [`Matcher::find`] for a flat pattern: the operator, the arity, and the holes bound in
    /// one pass over the arguments (the same choice point as the general matcher for the
    /// operands of `add` and `multiply`).
    fn find_flat(&mut self, p: &CompiledPattern, flat: &Flat, e: ExprId) -> Option<Match> {
        self.buf.trace.clear();
        let (op, args, _) = self.body.op_call(e)?;
        if args.len() != flat.args.len() || !flat.ops.contains(&op) {
            return None;
        }
        let commutative = args.len() == 2 && matches!(op.name(), "add" | "multiply");
        let bind = |order: [usize; 2]| -> Option<Vec<Option<ExprId>>> {
            let mut values = vec![None; p.names.len()];
            for (i, slot) in flat.args.iter().enumerate() {
                let arg = args[if commutative { order[i] } else { i }];
                if let Some(k) = *slot {
                    match values[k] {
                        Some(v) if v != arg => return None,
                        _ => values[k] = Some(arg),
                    }
                }
            }
            if let Some(k) = flat.root {
                values[k] = Some(e);
            }
            Some(values)
        };
        let values = if commutative {
            let options = self.options();
            let untried = options.len() == 2;
            options.iter().find_map(|&o| {
                let v = bind(if o == 0 { [0, 1] } else { [1, 0] })?;
                self.buf.trace.push((o, o == 0 && untried));
                Some(v)
            })?
        } else {
            bind([0, 1])?
        };
        Some(Match {
            root: e,
            names: p.hole_names.clone(),
            values,
            region: Vec::new(),
        })
    }

    fn ty(&mut self, e: ExprId) -> Option<Type> {
        let body = self.body;
        match &mut self.types {
            Types::Borrowed(t) => t.of(body, e).cloned(),
            Types::Owned(t) => t.of(body, e).cloned(),
        }
    }

    fn mark(&self) -> (usize, usize, usize) {
        (
            self.buf.trail.len(),
            self.buf.region.len(),
            self.buf.trace.len(),
        )
    }

    fn undo(&mut self, (trail, region, trace): (usize, usize, usize)) {
        for p in self.buf.trail.drain(trail..) {
            self.buf.memo[p as usize] = None;
        }
        self.buf.region.truncate(region);
        self.buf.trace.truncate(trace);
    }

    /// The options to try at the next choice point (a commutative call, an alternative): both
    /// in order, or the one the script forces.
    fn options(&self) -> &'static [u8] {
        match self.buf.script.get(self.buf.trace.len()) {
            Some(0) => &[0],
            Some(_) => &[1],
            None => &[0, 1],
        }
    }

    /// Tries `option` at a choice point, recording it on the trace when it succeeds (with
    /// whether option 1 is still untried).
    fn choose(&mut self, option: u8, untried: bool, ok: impl FnOnce(&mut Self) -> bool) -> bool {
        let mark = self.mark();
        let at = self.buf.trace.len();
        self.buf.trace.push((option, false));
        if ok(self) {
            self.buf.trace[at].1 = untried;
            true
        } else {
            self.undo(mark);
            false
        }
    }

    /// Whether pattern node `p` matches `e`: at once when `p` is already bound (to `e` or not),
    /// else by [`Matcher::match_unbound`]; on failure, nothing this call bound stays bound.
    fn match_node(&mut self, cp: &CompiledPattern, p: PId, e: ExprId) -> bool {
        if let Some(prev) = self.buf.memo[p as usize] {
            return prev == e;
        }
        let mark = self.mark();
        let ok = self.match_unbound(cp, p, e);
        if ok {
            self.buf.memo[p as usize] = Some(e);
            self.buf.trail.push(p);
        } else {
            self.undo(mark);
        }
        ok
    }

    /// Whether pattern node `p`, not bound yet, matches `e`, by the kind of `p`.
    fn match_unbound(&mut self, cp: &CompiledPattern, p: PId, e: ExprId) -> bool {
        let body = self.body;
        let node = body.node(e);
        match &cp.nodes[p as usize] {
            PNode::Wildcard => true,
            PNode::Named(inner) => self.match_node(cp, *inner, e),
            // Operators are not values: they match only in callee position.
            PNode::Op(_) => false,
            PNode::Call { callee, args } => self.call(cp, *callee, args.as_deref(), e),
            PNode::Var(name) => match node {
                Node::Var(v) => name.as_ref().is_none_or(|n| *body.var(*v).name == **n),
                _ => false,
            },
            PNode::Constant => {
                let ok = matches!(node, Node::Constant(_));
                self.inside(e, ok)
            }
            PNode::Literal(t) => {
                let ok = match node {
                    Node::Constant(k) => {
                        let c = body.constant(*k);
                        c.dtype() == t.dtype() && c.shape() == t.shape() && c.bit_eq(t)
                    }
                    _ => false,
                };
                self.inside(e, ok)
            }
            PNode::Tuple(fields) => match node {
                Node::Tuple(list) => {
                    let ok = match fields {
                        None => true,
                        Some(fs) => self.all(cp, fs, body.list(*list)),
                    };
                    self.inside(e, ok)
                }
                _ => false,
            },
            PNode::Proj(t, i) => match node {
                Node::Proj(te, j) if i.is_none_or(|i| i == *j) => {
                    let ok = self.match_node(cp, *t, *te);
                    self.inside(e, ok)
                }
                _ => false,
            },
            PNode::If(c, t, o) => match node {
                Node::If(ce, te, oe) => {
                    let ok = self.match_node(cp, *c, *ce)
                        && self.match_node(cp, *t, *te)
                        && self.match_node(cp, *o, *oe);
                    self.inside(e, ok)
                }
                _ => false,
            },
            PNode::Let(v, value, b) => match node {
                Node::Let { bindings, body: be } => {
                    let bs = body.bindings(*bindings);
                    let ok = bs.len() == 1
                        && self.var(cp, *v, bs[0].0)
                        && self.match_node(cp, *value, bs[0].1)
                        && self.match_node(cp, *b, *be);
                    self.inside(e, ok)
                }
                _ => false,
            },
            PNode::Function(params, b) => match node {
                Node::Closure(c) => {
                    let data = body.closure(*c);
                    let ok = params.as_ref().is_none_or(|ps| {
                        ps.len() == data.params.len()
                            && ps
                                .iter()
                                .zip(&data.params)
                                .all(|(&p, &v)| self.var(cp, p, v))
                    }) && self.match_node(cp, *b, data.body);
                    self.inside(e, ok)
                }
                _ => false,
            },
            PNode::Alt(a, b) => {
                let options = self.options();
                let untried = options.len() == 2;
                options.iter().any(|&o| {
                    let branch = if o == 0 { *a } else { *b };
                    self.choose(o, o == 0 && untried, |s| s.match_node(cp, branch, e))
                })
            }
            PNode::HasAttrs(inner, attrs) => {
                self.match_node(cp, *inner, e)
                    && attrs.iter().all(|(k, want)| match node {
                        Node::CallOp { sig, .. } => {
                            let s = body.sig(*sig);
                            s.op.attr_value(body.attrs(s.attrs), k)
                                .is_some_and(|have| attr_eq(&have, want))
                        }
                        Node::Closure(c) => body
                            .closure(*c)
                            .attrs
                            .get(k)
                            .is_some_and(|have| attr_eq(have, want)),
                        _ => false,
                    })
            }
            PNode::HasType(inner, t) => {
                self.match_node(cp, *inner, e) && self.ty(e).as_ref() == Some(t)
            }
            PNode::HasDtype(inner, d) => {
                self.match_node(cp, *inner, e)
                    && matches!(self.ty(e), Some(Type::Tensor(t)) if t.dtype == *d)
            }
            PNode::HasShape(inner, dims) => {
                self.match_node(cp, *inner, e)
                    && matches!(self.ty(e), Some(Type::Tensor(t)) if t.shape.len() == dims.len()
                        && t.shape.iter().zip(dims).all(|(have, want)| *want == Dim::Any || have == want))
            }
            PNode::Dominates {
                parent,
                path,
                child,
            } => self.dominates(cp, *parent, *path, *child, e),
        }
    }

    /// Records `e` as inside the match when `ok`.
    fn inside(&mut self, e: ExprId, ok: bool) -> bool {
        if ok && self.buf.record_region {
            self.buf.region.push(e);
        }
        ok
    }

    fn all(&mut self, cp: &CompiledPattern, ps: &[PId], es: &[ExprId]) -> bool {
        ps.len() == es.len() && ps.iter().zip(es).all(|(&p, &e)| self.match_node(cp, p, e))
    }

    /// Whether `p` matches variable `v` where it is bound (a parameter, a `let`): through its
    /// use node when it has one, else by name.
    fn var(&mut self, cp: &CompiledPattern, p: PId, v: VarId) -> bool {
        if let Some(n) = self.body.var_node(v) {
            return self.match_node(cp, p, n);
        }
        match &cp.nodes[p as usize] {
            PNode::Wildcard => true,
            PNode::Var(name) => name.as_ref().is_none_or(|n| *self.body.var(v).name == **n),
            PNode::Named(inner) => self.var(cp, *inner, v),
            _ => false,
        }
    }

    /// Whether the callee pattern `p` matches operator `op`.
    fn callee_op(&self, cp: &CompiledPattern, p: PId, op: Op) -> bool {
        match &cp.nodes[p as usize] {
            PNode::Wildcard => true,
            PNode::Op(o) => *o == Some(op),
            PNode::Named(inner) => self.callee_op(cp, *inner, op),
            PNode::Alt(a, b) => self.callee_op(cp, *a, op) || self.callee_op(cp, *b, op),
            PNode::HasAttrs(inner, attrs) => {
                self.callee_op(cp, *inner, op)
                    && attrs
                        .iter()
                        .all(|(k, want)| k == "TOpPattern" && op_pattern_is(op, want))
            }
            _ => false,
        }
    }

    fn call(&mut self, cp: &CompiledPattern, callee: PId, args: Option<&[PId]>, e: ExprId) -> bool {
        let body = self.body;
        let ok = match body.node(e) {
            Node::CallOp { sig, args: list } => {
                let op = body.sig(*sig).op;
                let actual = body.list(*list);
                let direct = self.callee_op(cp, callee, op)
                    && match args {
                        None => true,
                        Some(ps) => {
                            self.args(cp, ps, actual, matches!(op.name(), "add" | "multiply"))
                        }
                    };
                direct || args.is_some_and(|ps| self.associated(cp, callee, ps, e))
            }
            Node::Call {
                callee: ce,
                args: list,
            } => {
                let actual = body.list(*list);
                self.match_node(cp, callee, *ce)
                    && args.is_none_or(|ps| self.args(cp, ps, actual, false))
            }
            _ => false,
        };
        self.inside(e, ok)
    }

    /// Arguments in order, or (for a commutative operator of two) swapped.
    fn args(&mut self, cp: &CompiledPattern, ps: &[PId], es: &[ExprId], commutative: bool) -> bool {
        if !(commutative && ps.len() == 2 && es.len() == 2) {
            return self.all(cp, ps, es);
        }
        let options = self.options();
        let untried = options.len() == 2;
        options.iter().any(|&o| {
            let (x, y) = if o == 0 {
                (es[0], es[1])
            } else {
                (es[1], es[0])
            };
            self.choose(o, o == 0 && untried, |s| {
                s.match_node(cp, ps[0], x) && s.match_node(cp, ps[1], y)
            })
        })
    }

    /// TVM's association of `multiply` and `divide`: a pattern `(a * b) / c` matches
    /// `a * (b / c)` and `b * (a / c)`; a pattern `a * (b / c)` matches `(a * b) / c`.
    fn associated(&mut self, cp: &CompiledPattern, callee: PId, ps: &[PId], e: ExprId) -> bool {
        let PNode::Op(Some(pop)) = &cp.nodes[callee as usize] else {
            return false;
        };
        if ps.len() != 2 {
            return false;
        }
        let mark = self.mark();
        match pop.name() {
            "divide" => {
                let (Some([a, b]), c) = (binary(cp, ps[0], "multiply"), ps[1]) else {
                    return false;
                };
                let Some([x, y]) = self.binary_expr(e, "multiply") else {
                    return false;
                };
                // (a * b) / c as other * (kept / c), the product either way round.
                for (other, kept) in [(b, a), (a, b)] {
                    for (ox, dx) in [(x, y), (y, x)] {
                        if self.match_node(cp, other, ox) && self.divide_of(cp, kept, c, dx) {
                            return true;
                        }
                        self.undo(mark);
                    }
                }
                false
            }
            "multiply" => {
                let Some([x, y]) = self.binary_expr(e, "divide") else {
                    return false;
                };
                let Some([x0, x1]) = self.binary_expr(x, "multiply") else {
                    return false;
                };
                for k in 0..2 {
                    let Some([d0, d1]) = binary(cp, ps[k], "divide") else {
                        continue;
                    };
                    let other = ps[1 - k];
                    // a * (d0 / d1) as (d0 * a) / d1.
                    for (p0, p1) in [(d0, other), (other, d0)] {
                        if self.match_node(cp, p0, x0)
                            && self.match_node(cp, p1, x1)
                            && self.match_node(cp, d1, y)
                        {
                            return self.inside(x, true);
                        }
                        self.undo(mark);
                    }
                }
                false
            }
            _ => false,
        }
    }

    /// The operands of `e` when it calls the binary operator `name`.
    fn binary_expr(&self, e: ExprId, name: &str) -> Option<[ExprId; 2]> {
        let (o, a, _) = self.body.op_call(e)?;
        (o.name() == name && a.len() == 2).then(|| [a[0], a[1]])
    }

    /// Whether `e` is `divide(x, y)` with `x` matching `num` and `y` matching `den`.
    fn divide_of(&mut self, cp: &CompiledPattern, num: PId, den: PId, e: ExprId) -> bool {
        let Some([x, y]) = self.binary_expr(e, "divide") else {
            return false;
        };
        let ok = self.match_node(cp, num, x) && self.match_node(cp, den, y);
        self.inside(e, ok)
    }

    /// `dominates(parent, path, child)` at `e`: `e` matches `child`, and walking from its
    /// operands towards the inputs, every node matches `parent` (the walk stops there) or
    /// `path` (the walk goes on into its operands), and `parent` matches one node only.
    fn dominates(
        &mut self,
        cp: &CompiledPattern,
        parent: PId,
        path: PId,
        child: PId,
        e: ExprId,
    ) -> bool {
        if !self.match_node(cp, child, e) {
            return false;
        }
        let body = self.body;
        let mut stack = Vec::new();
        body.for_each_operand(e, |o| stack.push(o));
        let mut seen = vec![false; e.index()];
        while let Some(n) = stack.pop() {
            if std::mem::replace(&mut seen[n.index()], true) {
                continue;
            }
            let mark = self.mark();
            if self.match_node(cp, parent, n) {
                continue;
            }
            self.undo(mark);
            // Each node of the path matches on its own: its holes bind nothing for the rest.
            if !self.match_node(cp, path, n) {
                return false;
            }
            let kept = (mark.0, self.buf.region.len(), self.buf.trace.len());
            self.undo(kept);
            self.inside(n, true);
            body.for_each_operand(n, |o| stack.push(o));
        }
        self.buf.memo[parent as usize].is_some()
    }
}

/// The operands of pattern `p` when it calls the binary operator `name`.
fn binary(cp: &CompiledPattern, p: PId, name: &str) -> Option<[PId; 2]> {
    match &cp.nodes[p as usize] {
        PNode::Call {
            callee,
            args: Some(a),
        } if a.len() == 2
            && matches!(&cp.nodes[*callee as usize], PNode::Op(Some(o)) if o.name() == name) =>
        {
            Some([a[0], a[1]])
        }
        _ => None,
    }
}

/// Whether `op`'s fusion kind is `want` (TVM's `TOpPattern`: 0 elementwise, 1 broadcast, ...;
/// or its name).
fn op_pattern_is(op: Op, want: &AttrValue) -> bool {
    let kind = op.def().pattern;
    match want {
        AttrValue::Int(k) => kind as i64 == *k,
        AttrValue::Str(s) => format!("{kind:?}").eq_ignore_ascii_case(s),
        _ => false,
    }
}
