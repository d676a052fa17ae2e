//! `ToGraphNormalForm`, as a rewrite of a function's code.

use irpass_ir::body::{ArenaFunction, ExprId, VarId};

use irpass_ir::rewrite::{LetAction, Rewrite, RewriteCx, Rewritten, rewrite_body};

/// Replaces every `let` binding by its value (a shared graph node): dataflow graph form. A
/// closure bound to a variable it calls stays bound (the rewriter keeps a binding whose
/// variable its own value uses). `None` when there is no binding.
pub fn to_graph_normal_form(f: &ArenaFunction) -> Option<Rewritten> {
    rewrite_body(&f.body, &f.params, f.root, &mut Gnf)
}

struct Gnf;

impl Rewrite for Gnf {
    fn visit_let(&mut self, _cx: &mut RewriteCx<'_>, _var: VarId, _value: ExprId) -> LetAction {
        LetAction::Inline
    }
}
