//! `LambdaLift`: the pass and its rewrite of a module.

use irpass::{PassContext, module_pass};
use irpass_ir::body::{
    ArenaFunction, Body, BodyBuilder, ClosureData, ExprId, Node, VarId, copy_region, post_order,
};
use irpass_ir::rewrite::{OldId, Rewrite, RewriteCx};
use irpass_ir::{AttrValue, Attrs, Function, Module};
use rustc_hash::{FxHashMap, FxHashSet};

/// Lifts every closure to a global function: one without free variables becomes
/// `@<outer>_lifted_<n>` and is referred to by name; one with free variables becomes a global
/// that takes them and returns the closure (marked `Closure=1`), called where the closure was;
/// the closure such a global returns is not lifted again, so the pass is idempotent.
/// A `let`-bound closure that calls itself calls the lifted global instead. Fused
/// (`Primitive=1`) functions stay where they are.
#[module_pass(opt_level = 0, name = "LambdaLift")]
pub fn transform(module: Module, _ctx: &PassContext) -> Module {
    lambda_lift(&module)
}

/// Lifts every closure to a global function, as the registered `LambdaLift` (whose doc
/// comment gives the rules). A lifted function's new parameters (the closure's captures) are
/// annotated with the types of the captured variables where the module was typed.
pub fn lambda_lift(module: &Module) -> Module {
    let mut out = module.clone();
    let mut taken: FxHashSet<String> = module.names().map(str::to_string).collect();
    for (name, f) in module.iter() {
        let code = &f.code;
        let body = &code.body;
        // Closures bound by a `let` (closure node to its variable), for recursion.
        let mut let_closures: FxHashMap<ExprId, VarId> = FxHashMap::default();
        for e in body.ids() {
            if let Node::Let { bindings, .. } = body.node(e) {
                for &(v, value) in body.bindings(*bindings) {
                    if matches!(body.node(value), Node::Closure(_)) {
                        let_closures.insert(value, v);
                    }
                }
            }
        }
        let types = f.types();
        let mut lifter = Lifter {
            outer: name,
            taken: &mut taken,
            next_name: 0,
            lifted: Vec::new(),
            let_closures,
            // A lifted closure with captures (`Closure=1`) returns its closure: that one stays
            // (lifting it again made `@f_lifted_0_lifted_0` on every run), as in TVM.
            keep: f.has_attr("Closure").then_some(code.root),
            var_type: &|v: VarId| {
                let data = body.var(v);
                match &data.annotation {
                    Some(t) if t.is_complete() => Some(t.clone()),
                    _ => types
                        .as_ref()
                        .map(|t| t.var(v).clone())
                        .filter(|t| t.is_complete()),
                }
            },
        };
        let rewritten = code.rewrite(&mut lifter);
        let lifted = std::mem::take(&mut lifter.lifted);
        if !lifted.is_empty() {
            out.replace(name, f.with_code(rewritten));
            for (n, lf) in lifted {
                out.add(n, lf);
            }
        }
    }
    out
}

struct Lifter<'a> {
    outer: &'a str,
    taken: &'a mut FxHashSet<String>,
    /// The suffix the next lifted closure's name tries first.
    next_name: usize,
    lifted: Vec<(String, Function)>,
    let_closures: FxHashMap<ExprId, VarId>,
    /// The closure that is the result of a `Closure=1` function: not lifted.
    keep: Option<ExprId>,
    /// The type of a variable of the function: its annotation, else the inferred one.
    var_type: &'a dyn Fn(VarId) -> Option<irpass_ir::Type>,
}

impl Lifter<'_> {
    fn fresh_name(&mut self) -> String {
        loop {
            let n = format!("{}_lifted_{}", self.outer, self.next_name);
            self.next_name += 1;
            if self.taken.insert(n.clone()) {
                return n;
            }
        }
    }
}

/// The variables of `body` used in the region of `root` and not bound in it, in first-use
/// order.
fn free_vars(body: &Body, root: ExprId) -> Vec<VarId> {
    let order = post_order(body, root);
    let mut bound: FxHashSet<VarId> = FxHashSet::default();
    for &e in &order {
        match body.node(e) {
            Node::Let { bindings, .. } => {
                bound.extend(body.bindings(*bindings).iter().map(|b| b.0))
            }
            Node::Closure(c) => bound.extend(body.closure(*c).params.iter().copied()),
            _ => {}
        }
    }
    let mut seen: FxHashSet<VarId> = FxHashSet::default();
    order
        .into_iter()
        .filter_map(|e| match body.node(e) {
            Node::Var(v) if !bound.contains(v) && seen.insert(*v) => Some(*v),
            _ => None,
        })
        .collect()
}

impl Rewrite for Lifter<'_> {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: OldId, new: ExprId) -> Option<ExprId> {
        let Node::Closure(c) = *cx.new.body().node(new) else {
            return None;
        };
        let data = cx.new.body().closure(c).clone();
        if Some(old.id()) == self.keep || data.attrs.is_true("Primitive") {
            return None;
        }
        let self_var = self.let_closures.get(&old.id()).copied();
        let src = cx.new.body();
        let captured: Vec<VarId> = free_vars(src, new)
            .into_iter()
            .filter(|v| Some(*v) != self_var)
            .collect();
        let name = self.fresh_name();
        // The lifted function's arena: the captures become its parameters; inside, the
        // closure itself is the global applied to them.
        let mut b = BodyBuilder::new();
        let new_params: Vec<VarId> = captured
            .iter()
            .map(|&v| b.var(&src.var(v).name, (self.var_type)(v), None))
            .collect();
        let mut subst: FxHashMap<VarId, ExprId> = FxHashMap::default();
        for (&v, &p) in captured.iter().zip(&new_params) {
            subst.insert(v, b.use_var(p));
        }
        if let Some(sv) = self_var {
            let global = b.global(&name);
            let me = if new_params.is_empty() {
                global
            } else {
                let args: Vec<ExprId> = new_params.iter().map(|&p| b.use_var(p)).collect();
                b.call(global, &args)
            };
            subst.insert(sv, me);
        }
        let inner_params: Vec<VarId> = data
            .params
            .iter()
            .map(|&p| b.add_var(src.var(p).clone()))
            .collect();
        for (&p, &np) in data.params.iter().zip(&inner_params) {
            subst.insert(p, b.use_var(np));
        }
        let inner_root = copy_region(src, data.body, &mut b, &subst);
        let global = if new_params.is_empty() {
            // The closure's own parameters and body become the function's.
            let code = ArenaFunction {
                body: b.finish(),
                params: inner_params,
                root: inner_root,
            };
            Function::new(code, data.ret_type.clone(), data.attrs.clone(), None)
        } else {
            let closure = b.closure(ClosureData {
                params: inner_params,
                ret_type: data.ret_type.clone(),
                attrs: data.attrs.clone(),
                body: inner_root,
            });
            let code = ArenaFunction {
                body: b.finish(),
                params: new_params,
                root: closure,
            };
            let attrs = Attrs::from_pairs([("Closure", AttrValue::Int(1))]);
            Function::new(code, None, attrs, None)
        };
        self.lifted.push((name.clone(), global));
        let g = cx.new.global(&name);
        Some(if captured.is_empty() {
            g
        } else {
            let args: Vec<ExprId> = captured.iter().map(|&v| cx.new.use_var(v)).collect();
            cx.new.call(g, &args)
        })
    }
}
