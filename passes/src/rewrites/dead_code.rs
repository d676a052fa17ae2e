//! `DeadCodeElimination`, as a rewrite of a function's code.

use irpass_ir::arena::{
    ArenaFunction, Body, ExprId, Idx, Rewrite, Rewritten, VarId, live_vars, rewrite_body,
};

/// Removes `let` bindings whose variable nothing live uses (chains of them included): one
/// liveness walk, then one rewrite that copies only the live bindings. `None` when every
/// binding is live.
pub fn dead_code_elimination(f: &ArenaFunction) -> Option<Rewritten> {
    let live = live_vars(&f.body, f.root);
    rewrite_body(&f.body, &f.params, f.root, &mut Remover { live })
}

struct Remover {
    live: Vec<bool>,
}

impl Rewrite for Remover {
    fn keep_binding(&mut self, _old: &Body, var: VarId, _value: ExprId) -> bool {
        let live = self.live[var.index()];
        if !live {
            crate::passes::dead_code::BINDINGS_REMOVED.inc();
        }
        live
    }
}
