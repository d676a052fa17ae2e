//! `DeadCodeElimination`.

use irpass::ir::visit::{Memo, Mutator};
use irpass::ir::{Expr, ExprKind, Function, Module, Var};
use irpass::{PassContext, function_pass};
use rustc_hash::FxHashSet;

/// Removes `let` bindings whose variable is never used (every expression of the IR is pure, so
/// an unused value can go), including chains of them, in one linear pass: liveness flows from
/// the result backwards, a binding's value is looked at only if its variable is live. Unused
/// graph nodes need no removal: nothing refers to them.
#[function_pass(opt_level = 1, name = "DeadCodeElimination")]
pub fn dead_code_elimination(func: Function, _module: &Module, _ctx: &PassContext) -> Function {
    let mut live = Liveness::default();
    live.mark(&func.body);
    if live.dead_lets == 0 {
        return func;
    }
    let mut remover = Remover {
        live: &live.vars,
        memo: Memo::default(),
    };
    remover.mutate_function(&func)
}

#[derive(Default)]
struct Liveness {
    vars: FxHashSet<u64>,
    seen: FxHashSet<usize>,
    dead_lets: usize,
}

impl Liveness {
    fn mark(&mut self, e: &Expr) {
        if !self.seen.insert(e.addr()) {
            return;
        }
        irpass_stack(|| match &e.kind {
            ExprKind::Var(v) => {
                self.vars.insert(v.id());
            }
            ExprKind::Let(..) => {
                // The chain of lets iteratively: the final body first, then each value whose
                // variable is live, innermost first.
                let mut spine = Vec::new();
                let mut cur = e;
                while let ExprKind::Let(v, value, body) = &cur.kind {
                    spine.push((v, value));
                    cur = body;
                    if !self.seen.insert(cur.addr()) {
                        break;
                    }
                }
                if !matches!(cur.kind, ExprKind::Let(..)) {
                    for c in cur.children() {
                        self.mark(c);
                    }
                    if let ExprKind::Var(v) = &cur.kind {
                        self.vars.insert(v.id());
                    }
                }
                for (v, value) in spine.into_iter().rev() {
                    if self.vars.contains(&v.id()) {
                        self.mark(value);
                    } else {
                        self.dead_lets += 1;
                    }
                }
            }
            _ => {
                for c in e.children() {
                    self.mark(c);
                }
            }
        });
    }
}

struct Remover<'a> {
    live: &'a FxHashSet<u64>,
    memo: Memo,
}

impl Mutator for Remover<'_> {
    fn memo(&mut self) -> &mut Memo {
        &mut self.memo
    }

    fn keep_let(&mut self, var: &Var, _value: &Expr) -> bool {
        self.live.contains(&var.id())
    }
}

/// Recursion with enough stack for long chains.
pub(crate) fn irpass_stack<R>(f: impl FnOnce() -> R) -> R {
    irpass::ir::visit::with_stack(f)
}
