//! `EliminateCommonSubexpr`, as a rewrite of a function's code.

use std::hash::{Hash, Hasher};

use hashbrown::HashTable;
use irpass_ir::body::{ArenaFunction, Body, ExprId, Idx, Node, VarId};
use irpass_ir::rewrite::{LetAction, OldId, Rewrite, RewriteCx, Rewritten, rewrite_body};
use rustc_hash::FxHasher;

/// Merges structurally identical calls, tuples, projections and equal constants into one node
/// (only calls with `calls_only`), and drops a `let` whose value an earlier `let` in scope
/// already binds (or that binds a variable), its uses becoming the earlier variable. Operands
/// are merged before their users, so equal nodes have equal operand ids: a node is its own
/// key. Calls of the operators named in `skip_ops` are never merged (TVM's `fskip`). `None`
/// when nothing merges.
pub fn eliminate_common_subexpr(
    f: &ArenaFunction,
    calls_only: bool,
    skip_ops: &[String],
) -> Option<Rewritten> {
    let mut cse = Cse {
        calls_only,
        skip_ops,
        table: HashTable::with_capacity(f.body.len()),
        binders: Vec::with_capacity(f.body.len()),
        open: Vec::new(),
        stack: Vec::new(),
    };
    rewrite_body(&f.body, &f.params, f.root, &mut cse)
}

struct Cse<'s> {
    calls_only: bool,
    /// Operators whose calls are left apart.
    skip_ops: &'s [String],
    /// The distinct mergeable nodes of the new body, with their hash.
    table: HashTable<ExprId>,
    /// By value (new id), the variable that first bound it and the block it is in: a dense
    /// table, as the new ids grow in the order the walk makes them (a hash map here was the
    /// pass's cache misses on a large function).
    binders: Vec<Option<(VarId, usize)>>,
    /// Per block ever entered: whether it is still open.
    open: Vec<bool>,
    /// The open blocks, innermost last.
    stack: Vec<usize>,
}

/// The hash of what makes `id` mergeable, or `None` if it is not merged.
fn key_hash(body: &Body, id: ExprId, calls_only: bool) -> Option<u64> {
    let mut h = FxHasher::default();
    std::mem::discriminant(body.node(id)).hash(&mut h);
    match body.node(id) {
        Node::CallOp { sig, args } => {
            // Signatures are interned: one id per operator and attribute set.
            sig.hash(&mut h);
            body.list(*args).hash(&mut h);
        }
        Node::Call { callee, args } => {
            callee.hash(&mut h);
            body.list(*args).hash(&mut h);
        }
        Node::Tuple(fields) if !calls_only => body.list(*fields).hash(&mut h),
        Node::Proj(t, i) if !calls_only => (t, i).hash(&mut h),
        Node::Constant(k) if !calls_only => body.constant_hash(*k).hash(&mut h),
        _ => return None,
    }
    Some(h.finish())
}

/// Whether `a` and `b` compute the same value by [`key_hash`]'s criteria.
fn same_key(body: &Body, a: ExprId, b: ExprId) -> bool {
    match (body.node(a), body.node(b)) {
        (
            Node::CallOp { sig, args },
            Node::CallOp {
                sig: sig2,
                args: args2,
            },
        ) => sig == sig2 && body.list(*args) == body.list(*args2),
        (
            Node::Call { callee, args },
            Node::Call {
                callee: callee2,
                args: args2,
            },
        ) => callee == callee2 && body.list(*args) == body.list(*args2),
        (Node::Tuple(p), Node::Tuple(q)) => body.list(*p) == body.list(*q),
        (Node::Proj(t, i), Node::Proj(u, j)) => t == u && i == j,
        (Node::Constant(k), Node::Constant(l)) => {
            body.constant_hash(*k) == body.constant_hash(*l)
                && body.constant(*k).bit_eq(body.constant(*l))
        }
        _ => false,
    }
}

impl Rewrite for Cse<'_> {
    fn enter_block(&mut self) {
        self.stack.push(self.open.len());
        self.open.push(true);
    }

    fn leave_block(&mut self) {
        if let Some(s) = self.stack.pop() {
            self.open[s] = false;
        }
    }

    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, _old: OldId, id: ExprId) -> Option<ExprId> {
        let body = cx.new.body();
        if !self.skip_ops.is_empty() {
            if let Some((op, _, _)) = body.op_call(id) {
                if self.skip_ops.iter().any(|s| s == op.name()) {
                    return None;
                }
            }
        }
        let hash = key_hash(body, id, self.calls_only)?;
        // The table holds ids only (4 bytes an entry, so a large function's table stays
        // small in the cache); a hash is made again only if the table grows past the room
        // reserved for every node of the body.
        let calls_only = self.calls_only;
        match self.table.find(hash, |&e| same_key(body, e, id)) {
            Some(&earlier) => {
                crate::passes::cse::EXPRESSIONS_MERGED.inc();
                Some(earlier)
            }
            None => {
                self.table.insert_unique(hash, id, |&e| {
                    key_hash(body, e, calls_only).unwrap_or_default()
                });
                None
            }
        }
    }

    fn visit_let(&mut self, cx: &mut RewriteCx<'_>, var: VarId, value: ExprId) -> LetAction {
        if matches!(cx.new.body().node(value), Node::Var(_)) {
            return LetAction::Inline;
        }
        let here = self.stack.last().copied().unwrap_or(usize::MAX);
        if self.binders.len() <= value.index() {
            self.binders.resize(value.index() + 1, None);
        }
        match self.binders[value.index()] {
            Some((earlier, scope)) if self.open.get(scope).is_some_and(|&o| o) => {
                LetAction::Substitute(cx.new.use_var(earlier))
            }
            _ => {
                self.binders[value.index()] = Some((var, here));
                LetAction::Keep
            }
        }
    }
}
