//! `EliminateCommonSubexpr`.

use std::hash::{Hash, Hasher};

use hashbrown::HashTable;
use hashbrown::hash_table::Entry;
use irpass::{PassContext, function_pass, pass_config_option};
use irpass_ir::visit::{Memo, Mutator, rebuild_children};
use irpass_ir::{Callee, Expr, ExprKind, Function, Module, Var, VarMap};
use rustc_hash::{FxHashMap, FxHasher};

irpass::statistic! {
    /// Expressions `EliminateCommonSubexpr` replaced by an equal earlier one.
    pub static EXPRESSIONS_MERGED: "EliminateCommonSubexpr", "expressions merged with an equal earlier one";
}

pass_config_option! {
    /// When true, `EliminateCommonSubexpr` merges only calls (not tuples, projections or
    /// constants).
    pub CSE_CALLS_ONLY: bool = "relay.EliminateCommonSubexpr.calls_only";
}

/// Merges structurally identical expressions into one shared node: calls of the same operator
/// with the same attributes on the same arguments (calls that differ in an attribute stay
/// apart; references to one variable are the same argument), tuples, projections and equal
/// constants. A `let` whose value is already bound by an earlier `let` (or is a variable) is
/// dropped and its variable replaced by the earlier one. One linear pass, bottom-up: once the
/// arguments are merged, equal calls have identical keys.
#[function_pass(opt_level = 3, name = "EliminateCommonSubexpr", required = [crate::InferType])]
pub fn eliminate_common_subexpr(func: Function, _module: &Module, ctx: &PassContext) -> Function {
    let calls_only = ctx.get(&CSE_CALLS_ONLY).copied().unwrap_or(false);
    let mut cse = Cse {
        calls_only,
        table: Interned::default(),
        consts: Interned::default(),
        subst: VarMap::default(),
        bound: FxHashMap::default(),
        scopes: Scopes::default(),
        memo: Memo::default(),
    };
    cse.mutate_function(&func)
}

struct Cse {
    calls_only: bool,
    /// The merged calls, tuples and projections, by [`key_hash`] and compared by [`same_key`]
    /// (no key is built: the node is its own key), each with the variable of the first `let`
    /// that binds it.
    table: Interned<(Expr, Option<Binder>)>,
    /// The distinct constants, by a hash of their bits.
    consts: Interned<Expr>,
    /// Variables (ids) of dropped `let`s to what replaces their references.
    subst: VarMap<Expr>,
    /// Values that are not in `table` (address) to the variable of the `let` binding them.
    bound: FxHashMap<usize, Binder>,
    scopes: Scopes,
    memo: Memo,
}

/// A `let` variable and the chain of bindings it belongs to: it may replace a later variable
/// only while that chain is being visited (a binding in one branch of an `if` is not in scope
/// in the other).
#[derive(Clone)]
struct Binder {
    var: Var,
    scope: usize,
}

/// The chains of `let`s (scopes) entered and not yet left.
#[derive(Default)]
struct Scopes {
    /// Per scope ever entered: whether it is still open.
    open: Vec<bool>,
    /// The open scopes, innermost last.
    stack: Vec<usize>,
}

impl Scopes {
    fn enter(&mut self) {
        self.stack.push(self.open.len());
        self.open.push(true);
    }

    fn leave(&mut self) {
        if let Some(s) = self.stack.pop() {
            self.open[s] = false;
        }
    }

    fn current(&self) -> usize {
        self.stack.last().copied().unwrap_or(usize::MAX)
    }

    /// `b`'s variable if it is in scope here.
    fn visible(&self, b: &Binder) -> Option<Expr> {
        self.open
            .get(b.scope)
            .is_some_and(|&open| open)
            .then(|| Expr::var(&b.var))
    }
}

/// An operand's identity: its node (a variable is one node for all its uses, and other
/// operands are already merged), so an operand is hashed and compared without reading it.
fn operand_hash(e: &Expr, h: &mut FxHasher) {
    e.addr().hash(h);
}

fn same_operand(a: &Expr, b: &Expr) -> bool {
    Expr::ptr_eq(a, b)
}

/// The hash of what makes `e` mergeable: operator or callee, attributes and operands.
fn key_hash(e: &Expr) -> u64 {
    let mut h = FxHasher::default();
    match &e.kind {
        ExprKind::Call(call) => {
            0u8.hash(&mut h);
            match &call.callee {
                Callee::Op(op) => op.name().hash(&mut h),
                Callee::Expr(f) => operand_hash(f, &mut h),
            }
            call.attrs.hash(&mut h);
            call.args.iter().for_each(|a| operand_hash(a, &mut h));
        }
        ExprKind::Tuple(fields) => {
            1u8.hash(&mut h);
            fields.iter().for_each(|f| operand_hash(f, &mut h));
        }
        ExprKind::TupleGetItem(t, i) => {
            2u8.hash(&mut h);
            operand_hash(t, &mut h);
            i.hash(&mut h);
        }
        _ => {}
    }
    h.finish()
}

/// Whether `a` and `b` compute the same value by [`key_hash`]'s criteria.
fn same_key(a: &Expr, b: &Expr) -> bool {
    let same_operands = |x: &[Expr], y: &[Expr]| {
        x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_operand(p, q))
    };
    match (&a.kind, &b.kind) {
        (ExprKind::Call(p), ExprKind::Call(q)) => {
            let callee = match (&p.callee, &q.callee) {
                (Callee::Op(x), Callee::Op(y)) => x.name() == y.name(),
                (Callee::Expr(x), Callee::Expr(y)) => same_operand(x, y),
                _ => false,
            };
            callee && p.attrs == q.attrs && same_operands(&p.args, &q.args)
        }
        (ExprKind::Tuple(p), ExprKind::Tuple(q)) => same_operands(p, q),
        (ExprKind::TupleGetItem(p, i), ExprKind::TupleGetItem(q, j)) => {
            i == j && same_operand(p, q)
        }
        _ => false,
    }
}

impl Mutator for Cse {
    fn memo(&mut self) -> &mut Memo {
        &mut self.memo
    }

    fn rebuild(&mut self, e: &Expr) -> Expr {
        if !matches!(e.kind, ExprKind::Let(..)) {
            return rebuild_children(self, e);
        }
        self.scopes.enter();
        let out = rebuild_children(self, e);
        self.scopes.leave();
        out
    }

    fn visit_let(&mut self, var: &Var, value: Expr) -> Option<Expr> {
        let here = Binder {
            var: var.clone(),
            scope: self.scopes.current(),
        };
        let earlier = match &value.kind {
            ExprKind::Var(_) => Some(value.clone()),
            _ if self.is_candidate(&value) => {
                // `value` is in the table (merged by `rewrite` just before): the same slot.
                let hash = key_hash(&value);
                match self.table.find_mut(hash, |(c, _)| Expr::ptr_eq(c, &value)) {
                    Some((_, binder)) => {
                        let earlier = binder.as_ref().and_then(|b| self.scopes.visible(b));
                        if earlier.is_none() {
                            *binder = Some(here);
                        }
                        earlier
                    }
                    None => None,
                }
            }
            _ => {
                let earlier = self
                    .bound
                    .get(&value.addr())
                    .and_then(|b| self.scopes.visible(b));
                if earlier.is_none() {
                    self.bound.insert(value.addr(), here);
                }
                earlier
            }
        };
        match earlier {
            Some(earlier) => {
                // The variable means the earlier one: later references to it are rewritten.
                self.subst.insert(var.id(), earlier);
                None
            }
            None => Some(value),
        }
    }

    fn rewrite(&mut self, e: Expr) -> Expr {
        match &e.kind {
            ExprKind::Var(v) => self.subst.get(&v.id()).cloned().unwrap_or(e),
            ExprKind::Constant(t) if !self.calls_only => {
                let mut h = FxHasher::default();
                t.hash_bits(&mut h);
                let same = |c: &Expr| matches!(&c.kind, ExprKind::Constant(u) if u.bit_eq(t));
                self.consts
                    .get_or_insert(h.finish(), same, || e.clone())
                    .clone()
            }
            _ if self.is_candidate(&e) => self.merge(e),
            _ => e,
        }
    }
}

impl Cse {
    /// Whether `e` is merged through the table.
    fn is_candidate(&self, e: &Expr) -> bool {
        match e.kind {
            ExprKind::Call(_) => true,
            ExprKind::Tuple(_) | ExprKind::TupleGetItem(..) => !self.calls_only,
            _ => false,
        }
    }

    /// The node already in the table that computes what `e` does, else `e` (now in the table).
    fn merge(&mut self, e: Expr) -> Expr {
        let hash = key_hash(&e);
        let same = |(c, _): &(Expr, Option<Binder>)| same_key(c, &e);
        let found = self
            .table
            .get_or_insert(hash, same, || (e.clone(), None))
            .0
            .clone();
        if !Expr::ptr_eq(&found, &e) {
            EXPRESSIONS_MERGED.inc();
        }
        found
    }
}

/// Values found again by hash and equality. The table holds each value's hash beside its index
/// in `items`, so growing the table never goes back to the values (on a large function, a
/// rehash that re-read every node and its operands was most of the pass); the values stay in
/// the order they were met, and are released in that order rather than in hash order.
struct Interned<T> {
    table: HashTable<(u64, usize)>,
    items: Vec<T>,
}

impl<T> Default for Interned<T> {
    fn default() -> Self {
        Interned {
            table: HashTable::new(),
            items: Vec::new(),
        }
    }
}

impl<T> Interned<T> {
    /// The value of hash `hash` that `eq` accepts, if any.
    fn find_mut(&mut self, hash: u64, eq: impl Fn(&T) -> bool) -> Option<&mut T> {
        let items = &mut self.items;
        let &(_, i) = self
            .table
            .find(hash, |&(h, i)| h == hash && eq(&items[i]))?;
        Some(&mut items[i])
    }

    /// The value of hash `hash` that `eq` accepts, else `make()`, inserted.
    fn get_or_insert(
        &mut self,
        hash: u64,
        eq: impl Fn(&T) -> bool,
        make: impl FnOnce() -> T,
    ) -> &T {
        let items = &mut self.items;
        let same = |&(h, i): &(u64, usize)| h == hash && eq(&items[i]);
        let i = match self.table.entry(hash, same, |&(h, _)| h) {
            Entry::Occupied(found) => found.get().1,
            Entry::Vacant(slot) => {
                slot.insert((hash, items.len()));
                items.push(make());
                items.len() - 1
            }
        };
        &items[i]
    }
}
