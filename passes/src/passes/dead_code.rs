//! `DeadCodeElimination`: the pass and its rewrite of a function's code.

use irpass::{PassContext, PassOptions, function_pass, pass_config_option};
use irpass_ir::body::{ArenaFunction, Body, ExprId, Idx, Node, VarId, live_vars};
use irpass_ir::rewrite::{LetAction, OldBody, OldId, Rewrite, RewriteCx};
use irpass_ir::{Function, Module};
use serde::Deserialize;
use std::borrow::Cow;

irpass::statistic! {
    /// `let` bindings `DeadCodeElimination` removed.
    pub static BINDINGS_REMOVED: "DeadCodeElimination", "unused bindings removed";
}

pass_config_option! {
    /// When true, `DeadCodeElimination` also inlines each binding whose variable is used
    /// exactly once (TVM's `inline_once`).
    pub DCE_INLINE_ONCE: bool = "relay.DeadCodeElimination.inline_once";
}

/// `DeadCodeElimination` and its option (it overrides the config key for this pass).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, PassOptions)]
#[serde(default)]
pub struct DeadCodeElimination {
    /// Also inline each binding whose variable is used exactly once (TVM's inline_once).
    #[option(config = DCE_INLINE_ONCE, default = false)]
    pub inline_once: Option<bool>,
}

/// Removes `let` bindings whose variable is never used (every expression of the IR is pure, so
/// an unused value can go), including chains of them, in one linear pass: liveness flows from
/// the result backwards, a binding's value is looked at only if its variable is live. Unused
/// graph nodes need no removal: nothing refers to them. With
/// `relay.DeadCodeElimination.inline_once` (or the option, `DeadCodeElimination{inline_once=true}`),
/// a binding used exactly once is inlined into its use.
#[function_pass(opt_level = 1, default, options)]
impl DeadCodeElimination {
    fn transform_function(&self, func: Function, _module: &Module, ctx: &PassContext) -> Function {
        func.with_code(dead_code_elimination(&func.code, self.inline_once(ctx)))
    }
}

/// Removes `let` bindings whose variable nothing live uses (chains of them included): one
/// liveness walk, then one rewrite that copies only the live bindings. With `inline_once`
/// (TVM's `inline_once`), a binding whose variable is then used exactly once is inlined into
/// that use too, unless the use is in another function than the binding (a closure, which may
/// run many times: inlining into it would compute the value on every call, as TVM's
/// `test_inline_into_function` keeps it outside). `None` when nothing changes.
pub fn dead_code_elimination(f: &ArenaFunction, inline_once: bool) -> Option<ArenaFunction> {
    let live = live_vars(&f.body, f.root);
    let removed = f.rewrite(&mut Remover { live });
    if !inline_once {
        return removed;
    }
    // The input itself when nothing was removed (no copy of the body).
    let base: Cow<'_, ArenaFunction> = match removed {
        Some(r) => Cow::Owned(r),
        None => Cow::Borrowed(f),
    };
    let body = &base.body;
    let uses = body.use_counts(base.root);
    let scope = scopes(body, base.root);
    let mut bound_in = vec![MIXED; body.var_count()];
    for e in body.ids() {
        if let Node::Let { bindings, .. } = body.node(e) {
            for &(v, _) in body.bindings(*bindings) {
                bound_in[v.index()] = scope[e.index()];
            }
        }
    }
    let once: Vec<bool> = (0..body.var_count())
        .map(|v| {
            body.var_node(VarId::new(v)).is_some_and(|n| {
                uses[n.index()] == 1 && scope[n.index()] != MIXED && scope[n.index()] == bound_in[v]
            })
        })
        .collect();
    match base.rewrite(&mut InlineOnce { once }) {
        Some(r) => Some(r),
        None => match base {
            Cow::Owned(base) => Some(base),
            Cow::Borrowed(_) => None,
        },
    }
}

/// The function a node is used in, for [`scopes`]: 0 for the body's own, `c + 1` for closure
/// `c`'s; [`MIXED`] for a node used in several (or none).
const MIXED: u32 = u32::MAX;

/// The function each node reachable from `root` is used in (one backward scan: operands have
/// smaller ids than their users, and a closure's body is used in the closure).
fn scopes(body: &Body, root: ExprId) -> Vec<u32> {
    const UNSEEN: u32 = u32::MAX - 1;
    let mut scope = vec![UNSEEN; body.len()];
    scope[root.index()] = 0;
    for e in body.ids().rev() {
        let s = scope[e.index()];
        if s == UNSEEN {
            continue;
        }
        let inner = match body.node(e) {
            Node::Closure(c) => c.index() as u32 + 1,
            _ => s,
        };
        body.for_each_operand(e, |o| {
            let t = &mut scope[o.index()];
            *t = match *t {
                UNSEEN => inner,
                prev if prev == inner => prev,
                _ => MIXED,
            };
        });
    }
    scope
        .iter_mut()
        .filter(|s| **s == UNSEEN)
        .for_each(|s| *s = MIXED);
    scope
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
            BINDINGS_REMOVED.inc();
        }
        live
    }
}
