//! `DeadCodeElimination`, as a rewrite of a function's code.

use std::borrow::Cow;

use irpass_ir::body::{ArenaFunction, ExprId, Idx, VarId, live_vars};
use irpass_ir::rewrite::{LetAction, OldBody, OldId, Rewrite, RewriteCx, Rewritten, rewrite_body};

/// Removes `let` bindings whose variable nothing live uses (chains of them included): one
/// liveness walk, then one rewrite that copies only the live bindings. With `inline_once`
/// (TVM's `inline_once`), a binding whose variable is then used exactly once is inlined into
/// that use too. `None` when nothing changes.
pub fn dead_code_elimination(f: &ArenaFunction, inline_once: bool) -> Option<Rewritten> {
    let live = live_vars(&f.body, f.root);
    let removed = rewrite_body(&f.body, &f.params, f.root, &mut Remover { live });
    if !inline_once {
        return removed;
    }
    // The input itself when nothing was removed (no copy of the body).
    let base: Cow<'_, ArenaFunction> = match removed {
        Some(r) => Cow::Owned(ArenaFunction::from(r)),
        None => Cow::Borrowed(f),
    };
    let uses = base.body.use_counts(base.root);
    let once: Vec<bool> = (0..base.body.var_count())
        .map(|v| {
            base.body
                .var_node(VarId::new(v))
                .is_some_and(|n| uses[n.index()] == 1)
        })
        .collect();
    match rewrite_body(
        &base.body,
        &base.params,
        base.root,
        &mut InlineOnce { once },
    ) {
        Some(r) => Some(r),
        None => match base {
            Cow::Owned(base) => Some(Rewritten {
                body: base.body,
                params: base.params,
                root: base.root,
            }),
            Cow::Borrowed(_) => None,
        },
    }
}

/// Inlines the bindings whose variable has one use.
struct InlineOnce {
    once: Vec<bool>,
}

impl Rewrite for InlineOnce {
    fn visit_let(&mut self, _cx: &mut RewriteCx<'_>, var: VarId, _value: ExprId) -> LetAction {
        if self.once[var.index()] {
            LetAction::Inline
        } else {
            LetAction::Keep
        }
    }
}

struct Remover {
    live: Vec<bool>,
}

impl Rewrite for Remover {
    fn keep_binding(&mut self, _old: OldBody<'_>, var: VarId, _value: OldId) -> bool {
        let live = self.live[var.index()];
        if !live {
            crate::passes::dead_code::BINDINGS_REMOVED.inc();
        }
        live
    }
}
