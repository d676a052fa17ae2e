//! `EliminateCommonSubexpr`.

use std::hash::{Hash, Hasher};

use hashbrown::HashTable;
use hashbrown::hash_table::Entry;
use irpass::ir::visit::{Memo, Mutator};
use irpass::ir::{Callee, Expr, ExprKind, Function, Module, Var};
use irpass::{PassContext, function_pass, pass_config_option};
use rustc_hash::{FxHashMap, FxHasher};

pass_config_option! {
    /// When true, `EliminateCommonSubexpr` merges only calls (not tuples, projections or
    /// constants).
    pub CSE_CALLS_ONLY: bool = "relay.EliminateCommonSubexpr.calls_only";
}

/// Merges structurally identical expressions into one shared node: calls of the same operator
/// with the same attributes on the same arguments (calls that differ in an attribute stay
/// apart), tuples, projections, equal constants, and references to the same variable. A `let`
/// whose value is already bound by an earlier `let` (or is a variable) is dropped and its
/// variable replaced by the earlier one. One linear pass, bottom-up: once the arguments are
/// merged, equal calls have identical keys.
#[function_pass(opt_level = 3, name = "EliminateCommonSubexpr", required = [crate::InferType])]
pub fn eliminate_common_subexpr(func: Function, _module: &Module, ctx: &PassContext) -> Function {
    let calls_only = ctx.get(&CSE_CALLS_ONLY).copied().unwrap_or(false);
    let mut cse = Cse {
        calls_only,
        table: HashTable::new(),
        consts: FxHashMap::default(),
        vars: FxHashMap::default(),
        bound: FxHashMap::default(),
        memo: Memo::default(),
    };
    cse.mutate_function(&func)
}

struct Cse {
    calls_only: bool,
    /// The merged calls, tuples and projections, hashed by [`key_hash`] and compared by
    /// [`same_key`]: no key is built, the node is its own key.
    table: HashTable<Expr>,
    /// Constants by a hash of their bits.
    consts: FxHashMap<u64, Vec<Expr>>,
    /// Variable (id) to its one reference node, or to the earlier variable's.
    vars: FxHashMap<u64, Expr>,
    /// Value node (address) to the variable of the `let` that binds it.
    bound: FxHashMap<usize, Expr>,
    memo: Memo,
}

/// The hash of what makes `e` mergeable: operator or callee, attributes and operand nodes
/// (operands are already merged, so equal operands are the same node).
fn key_hash(e: &Expr) -> u64 {
    let mut h = FxHasher::default();
    match &e.kind {
        ExprKind::Call(call) => {
            0u8.hash(&mut h);
            match &call.callee {
                Callee::Op(op) => op.name().hash(&mut h),
                Callee::Expr(f) => f.addr().hash(&mut h),
            }
            call.attrs.hash(&mut h);
            call.args.iter().for_each(|a| a.addr().hash(&mut h));
        }
        ExprKind::Tuple(fields) => {
            1u8.hash(&mut h);
            fields.iter().for_each(|f| f.addr().hash(&mut h));
        }
        ExprKind::TupleGetItem(t, i) => {
            2u8.hash(&mut h);
            (t.addr(), *i).hash(&mut h);
        }
        _ => {}
    }
    h.finish()
}

/// Whether `a` and `b` compute the same value by [`key_hash`]'s criteria.
fn same_key(a: &Expr, b: &Expr) -> bool {
    let same_nodes = |x: &[Expr], y: &[Expr]| {
        x.len() == y.len() && x.iter().zip(y).all(|(p, q)| Expr::ptr_eq(p, q))
    };
    match (&a.kind, &b.kind) {
        (ExprKind::Call(p), ExprKind::Call(q)) => {
            let callee = match (&p.callee, &q.callee) {
                (Callee::Op(x), Callee::Op(y)) => x.name() == y.name(),
                (Callee::Expr(x), Callee::Expr(y)) => Expr::ptr_eq(x, y),
                _ => false,
            };
            callee && p.attrs == q.attrs && same_nodes(&p.args, &q.args)
        }
        (ExprKind::Tuple(p), ExprKind::Tuple(q)) => same_nodes(p, q),
        (ExprKind::TupleGetItem(p, i), ExprKind::TupleGetItem(q, j)) => {
            i == j && Expr::ptr_eq(p, q)
        }
        _ => false,
    }
}

impl Mutator for Cse {
    fn memo(&mut self) -> &mut Memo {
        &mut self.memo
    }

    fn visit_let(&mut self, var: &Var, value: Expr) -> Option<Expr> {
        let earlier = match &value.kind {
            ExprKind::Var(_) => Some(value.clone()),
            _ => self.bound.get(&value.addr()).cloned(),
        };
        if let Some(earlier) = earlier {
            // The variable means the earlier one: later references to it are rewritten.
            self.vars.insert(var.id(), earlier);
            return None;
        }
        // The canonical reference node of the variable (not through `mutate`: a temporary node
        // would leave a memo entry under an address the allocator can reuse).
        let var_ref = self
            .vars
            .entry(var.id())
            .or_insert_with(|| Expr::var(var))
            .clone();
        self.bound.insert(value.addr(), var_ref);
        Some(value)
    }

    fn rewrite(&mut self, e: Expr) -> Expr {
        match &e.kind {
            // References to one variable become one node (so calls on it compare equal).
            ExprKind::Var(v) => self.vars.entry(v.id()).or_insert(e).clone(),
            ExprKind::Constant(t) if !self.calls_only => {
                let mut h = FxHasher::default();
                t.hash_bits(&mut h);
                let bucket = self.consts.entry(h.finish()).or_default();
                match bucket
                    .iter()
                    .find(|c| matches!(&c.kind, ExprKind::Constant(u) if u.bit_eq(t)))
                {
                    Some(c) => c.clone(),
                    None => {
                        bucket.push(e.clone());
                        e
                    }
                }
            }
            ExprKind::Call(_) => self.merge(e),
            ExprKind::Tuple(_) | ExprKind::TupleGetItem(..) if !self.calls_only => self.merge(e),
            _ => e,
        }
    }
}

impl Cse {
    /// The node already in the table that computes what `e` does, else `e` (now in the table).
    fn merge(&mut self, e: Expr) -> Expr {
        let hash = key_hash(&e);
        match self.table.entry(hash, |c| same_key(c, &e), key_hash) {
            Entry::Occupied(found) => found.get().clone(),
            Entry::Vacant(slot) => slot.insert(e.clone()).get().clone(),
        }
    }
}
