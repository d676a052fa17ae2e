//! `DeadCodeElimination`.

use irpass::ir::visit::{Memo, Mutator, rebuild_children};
use irpass::ir::{Expr, ExprKind, Function, Module, VarSet};
use irpass::{PassContext, function_pass};

/// Removes `let` bindings whose variable is never used (every expression of the IR is pure, so
/// an unused value can go), including chains of them, in one linear pass: liveness flows from
/// the result backwards, a binding's value is looked at only if its variable is live. Unused
/// graph nodes need no removal: nothing refers to them.
#[function_pass(opt_level = 1, name = "DeadCodeElimination")]
pub fn dead_code_elimination(func: Function, _module: &Module, _ctx: &PassContext) -> Function {
    let mut remover = Remover {
        live: VarSet::default(),
        memo: Memo::default(),
    };
    remover.mutate_function(&func)
}

/// One traversal: a chain of `let`s is walked from its final body back to its first binding,
/// so each variable's uses are all seen before its binding is kept or dropped.
struct Remover {
    /// Variables (ids) used by what was kept so far.
    live: VarSet,
    memo: Memo,
}

impl Mutator for Remover {
    fn memo(&mut self) -> &mut Memo {
        &mut self.memo
    }

    fn rewrite(&mut self, e: Expr) -> Expr {
        if let ExprKind::Var(v) = &e.kind {
            self.live.insert(v.id());
        }
        e
    }

    fn rebuild(&mut self, e: &Expr) -> Expr {
        if !matches!(e.kind, ExprKind::Let(..)) {
            return rebuild_children(self, e);
        }
        // The chain, first binding first; it stops at a shared inner `let` (already rewritten
        // if it was reached before, through the memo).
        let mut spine = vec![e];
        let mut cur = e;
        while let ExprKind::Let(_, _, body) = &cur.kind {
            if !matches!(body.kind, ExprKind::Let(..)) || body.is_shared() {
                break;
            }
            spine.push(body);
            cur = body;
        }
        let ExprKind::Let(_, _, last_body) = &cur.kind else {
            unreachable!("the spine holds `let`s only")
        };
        let mut acc = self.mutate(last_body);
        for node in spine.into_iter().rev() {
            let ExprKind::Let(v, value, body) = &node.kind else {
                continue;
            };
            // Every use of `v` is in the part of the chain already walked (its scope), so
            // its entry is no longer needed: the set holds only the variables whose binding is
            // still ahead, and stays small (and in cache) however long the chain is.
            if !self.live.remove(&v.id()) {
                continue; // dropped: `acc` stays the rewritten body
            }
            let nv = self.mutate(value);
            acc = if Expr::ptr_eq(&nv, value) && Expr::ptr_eq(&acc, body) {
                node.clone()
            } else {
                Expr::with_span(ExprKind::Let(v.clone(), nv, acc), node.span)
            };
        }
        acc
    }
}
