//! `ToGraphNormalForm`: the pass and its rewrite of a function's code.

use irpass::{PassContext, function_pass};
use irpass_ir::{Function, Module};

use irpass_ir::body::{ArenaFunction, ExprId, VarId};

use irpass_ir::rewrite::{LetAction, Rewrite, RewriteCx};

/// Replaces `let` bindings by the values themselves (shared graph nodes), the inverse of
/// `ToANormalForm`: dataflow graph form. A recursive `let` (a closure that calls itself)
/// stays.
#[function_pass(opt_level = 0, name = "ToGraphNormalForm")]
pub fn transform(func: Function, _module: &Module, _ctx: &PassContext) -> Function {
    func.with_code(to_graph_normal_form(&func.code))
}
/// Replaces every `let` binding by its value (a shared graph node): dataflow graph form. A
/// closure bound to a variable it calls stays bound (the rewriter keeps a binding whose
/// variable its own value uses). `None` when there is no binding.
pub fn to_graph_normal_form(f: &ArenaFunction) -> Option<ArenaFunction> {
    f.rewrite(&mut Gnf)
}

struct Gnf;

impl Rewrite for Gnf {
    fn visit_let(&mut self, _cx: &mut RewriteCx<'_>, _var: VarId, _value: ExprId) -> LetAction {
        LetAction::Inline
    }
}
