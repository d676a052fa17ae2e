//! `EliminateCommonSubexpr`: the pass and its rewrite of a function's code.

use hashbrown::HashTable;
use irpass::{PassContext, PassOptions, function_pass, pass_config_option};
use irpass_ir::body::{ArenaFunction, Body, ExprId, Idx, Node, VarId};
use irpass_ir::rewrite::{LetAction, OldId, Rewrite, RewriteCx};
use irpass_ir::{Function, Module};
use rustc_hash::FxHasher;
use serde::Deserialize;
use std::hash::{Hash, Hasher};

irpass::statistic! {
    /// Expressions `EliminateCommonSubexpr` replaced by an equal earlier one.
    pub static EXPRESSIONS_MERGED: "EliminateCommonSubexpr", "expressions merged with an equal earlier one";
}

pass_config_option! {
    /// When true, `EliminateCommonSubexpr` merges only calls (not tuples, projections or
    /// constants).
    pub CSE_CALLS_ONLY: bool = "relay.EliminateCommonSubexpr.calls_only";
}

pass_config_option! {
    /// Operators whose calls `EliminateCommonSubexpr` never merges, e.g. `["add"]` (TVM's
    /// `fskip` callback, as data).
    pub CSE_SKIP_OPS: Vec<String> = "relay.EliminateCommonSubexpr.skip_ops";
}

/// `EliminateCommonSubexpr` and its options (each overrides its config key for this pass).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, PassOptions)]
#[serde(default)]
pub struct EliminateCommonSubexpr {
    /// Merge only calls, not tuples, projections or constants.
    #[option(config = CSE_CALLS_ONLY, default = false)]
    pub calls_only: Option<bool>,
    /// Operators whose calls are never merged (TVM's fskip, as data).
    #[option(config = CSE_SKIP_OPS, default = Vec::new(), type_name = "[operator names]")]
    pub skip_ops: Option<Vec<String>>,
}

/// Merges structurally identical expressions into one shared node: calls of the same operator
/// with the same attributes on the same arguments (calls that differ in an attribute stay
/// apart; references to one variable are the same argument), tuples, projections and equal
/// constants. A `let` whose value is already bound by an earlier `let` (or is a variable) is
/// dropped and its variable replaced by the earlier one. One linear pass, bottom-up: once the
/// arguments are merged, equal calls have identical keys. `relay.EliminateCommonSubexpr.skip_ops`
/// lists operators whose calls stay apart (or the option: `EliminateCommonSubexpr{skip_ops=[add]}`).
#[function_pass(opt_level = 3, default, options)]
impl EliminateCommonSubexpr {
    fn transform_function(&self, func: Function, _module: &Module, ctx: &PassContext) -> Function {
        let skip = self.skip_ops(ctx);
        func.with_code(eliminate_common_subexpr(
            &func.code,
            self.calls_only(ctx),
            &skip,
        ))
    }
}

/// Merges structurally identical calls, tuples, projections and equal constants into one node
/// (only calls with `calls_only`), and drops a `let` whose value an earlier `let` in scope
/// already binds (or that binds a variable), its uses becoming the earlier variable. Operands
/// are merged before their users, so equal nodes have equal operand ids: a node is its own
/// key. Calls of stateful operators (`irpass_ir::op::Stateful`, two draws) and of the operators
/// named in `skip_ops` are never merged (TVM's `fskip`). `None`
/// when nothing merges.
pub fn eliminate_common_subexpr(
    f: &ArenaFunction,
    calls_only: bool,
    skip_ops: &[String],
) -> Option<ArenaFunction> {
    let mut cse = Cse {
        calls_only,
        skip_ops,
        table: HashTable::with_capacity(f.body.len()),
        binders: Vec::with_capacity(f.body.len()),
        open: Vec::new(),
        stack: Vec::new(),
    };
    f.rewrite(&mut cse)
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
        // Two calls of a stateful operator are two draws.
        if let Some((op, _, _)) = body.op_call(id)
            && (op.is_stateful() || self.skip_ops.iter().any(|s| s == op.name()))
        {
            return None;
        }
        let hash = key_hash(body, id, self.calls_only)?;
        // The table holds ids only (4 bytes an entry, so a large function's table stays
        // small in the cache); a hash is made again only if the table grows past the room
        // reserved for every node of the body.
        let calls_only = self.calls_only;
        match self.table.find(hash, |&e| same_key(body, e, id)) {
            Some(&earlier) => {
                EXPRESSIONS_MERGED.inc();
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
