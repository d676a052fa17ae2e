//! `DeadCodeElimination`.

use irpass::{PassContext, function_pass};
use irpass_ir::visit::{Memo, Mutator, joined_blocks, rebuild_children};
use irpass_ir::{Binding, Expr, ExprKind, Function, Module, VarSet};

irpass::statistic! {
    /// `let` bindings `DeadCodeElimination` removed.
    pub static BINDINGS_REMOVED: "DeadCodeElimination", "unused bindings removed";
}

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

/// One traversal: a block of `let`s is walked from its final body back to its first binding,
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
        // The block and the blocks joined to it; a shared inner block is left to the memo.
        let (blocks, cur) = joined_blocks(e);
        let body = self.mutate(cur);
        let mut changed = !Expr::ptr_eq(&body, cur);
        // Kept bindings, last first.
        let mut kept: Vec<Binding> = Vec::new();
        for (v, value) in blocks.iter().rev().flat_map(|b| b.iter().rev()) {
            // Every use of `v` is in the part already walked (its scope), so its entry is no
            // longer needed: the set holds only the variables whose binding is still ahead,
            // and stays small (and in cache) however long the block is.
            if !self.live.remove(&v.id()) {
                changed = true; // dropped
                BINDINGS_REMOVED.inc();
                continue;
            }
            let nv = self.mutate(value);
            changed |= !Expr::ptr_eq(&nv, value);
            kept.push((v.clone(), nv));
        }
        if !changed {
            return e.clone();
        }
        kept.reverse();
        Expr::lets_with_span(kept, body, e.span)
    }
}
