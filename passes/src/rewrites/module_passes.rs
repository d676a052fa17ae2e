//! `Inline`, `RemoveUnusedFunctions` and `LambdaLift` on arena modules.

use irpass_ir::body::{
    ArenaFunction, Body, BodyBuilder, ClosureData, ExprId, Idx, Node, VarId, copy_region,
    post_order,
};

use irpass_ir::{Function, Module};

use irpass_ir::rewrite::{OldId, Rewrite, RewriteCx, rewrite_body};
use irpass_ir::{AttrValue, Attrs};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::analyses::{Calls, globals_in};

/// Removes the functions that `entries` do not reach through calls or references, as the
/// registered `RemoveUnusedFunctions` (which checks the entries first).
pub fn remove_unused_functions(module: &Module, entries: Vec<String>) -> Module {
    remove_unused_functions_in(module, entries, &Calls::of(module))
}

/// As [`remove_unused_functions`], with the references read from a call graph of `module`
/// (the [`CallGraph`](crate::analyses::CallGraph) analysis).
pub fn remove_unused_functions_in(module: &Module, entries: Vec<String>, calls: &Calls) -> Module {
    let reached = calls.reached_from(entries);
    let mut out = module.clone();
    out.retain(|name, _| reached.contains(name));
    out
}

/// Replaces each call of a global function marked `Inline=1` by the function's body, as the
/// registered `Inline` (whose doc comment gives the rules), then removes those functions that
/// inlining left without references (one nothing referred to in the first place stays).
pub fn inline(module: &Module) -> Module {
    let inlinable: FxHashMap<&str, &Function> = module
        .iter()
        .filter(|(name, f)| f.has_attr("Inline") && !globals_in(f).any(|g| g == *name))
        .collect();
    if inlinable.is_empty() {
        return module.clone();
    }
    // Expand the inline functions callees first (a depth-first walk with an explicit stack,
    // in the order the rewrite meets the calls); a call that closes a cycle stays.
    let mut expanded: FxHashMap<String, Function> = FxHashMap::default();
    let mut expanding: FxHashSet<String> = FxHashSet::default();
    let order: Vec<&str> = module
        .names()
        .filter(|n| inlinable.contains_key(n))
        .collect();
    for start in order {
        let mut stack: Vec<(&str, bool)> = vec![(start, false)];
        while let Some((name, ready)) = stack.pop() {
            if expanded.contains_key(name) {
                continue;
            }
            let f = inlinable[name];
            if ready {
                let out = inline_calls(f, &inlinable, &expanded);
                expanding.remove(name);
                expanded.insert(name.to_string(), out);
                continue;
            }
            if !expanding.insert(name.to_string()) {
                continue;
            }
            stack.push((name, true));
            let callees: Vec<&str> = called_inlinable(f, &inlinable)
                .into_iter()
                .filter(|c| !expanded.contains_key(*c) && !expanding.contains(*c))
                .collect();
            // Visited in call order: the first callee is expanded first.
            let mut unique: Vec<&str> = Vec::new();
            for c in callees {
                if !unique.contains(&c) {
                    unique.push(c);
                }
            }
            stack.extend(unique.into_iter().rev().map(|c| (c, false)));
        }
    }
    let mut out = module.clone();
    for (name, f) in module.iter() {
        let nf = match expanded.get(name) {
            Some(e) => e.clone(),
            None => inline_calls(f, &inlinable, &expanded),
        };
        if !Function::ptr_eq(&nf, f) {
            out.replace(name, nf);
        }
    }
    // An inline function goes only when inlining removed the last reference to it: one that
    // nothing referred to before the pass stays (TVM's `test_entry_with_inline`).
    let before = Calls::of(module);
    let roots: Vec<String> = out
        .names()
        .filter(|name| !inlinable.contains_key(name) || *name == "main" || !before.is_called(name))
        .map(str::to_string)
        .collect();
    let used = Calls::of(&out).reached_from(roots);
    out.retain(|name, _| used.contains(name));
    out
}

/// The inline functions `f` calls (with the right number of arguments), in evaluation order.
fn called_inlinable<'m>(f: &Function, inlinable: &FxHashMap<&'m str, &Function>) -> Vec<&'m str> {
    let body = &f.code.body;
    let mut out = Vec::new();
    for e in post_order(body, f.code.root) {
        if let Node::Call { callee, args } = body.node(e) {
            if let Node::Global(g) = body.node(*callee) {
                if let Some((&name, g)) = inlinable.get_key_value(body.global(*g)) {
                    if g.code.params.len() == args.len() {
                        out.push(name);
                    }
                }
            }
        }
    }
    out
}

/// `f` with every call of an expanded inline function replaced by a copy of its body.
fn inline_calls(
    f: &Function,
    inlinable: &FxHashMap<&str, &Function>,
    expanded: &FxHashMap<String, Function>,
) -> Function {
    let code = &f.code;
    // Globals of inline functions used as values only (never called): they become function
    // literals, as TVM inlines them (`if (%p) { @g1 } else { @g2 }` then a call of the result).
    let body = &code.body;
    let mut called = vec![false; body.len()];
    let mut as_value = vec![false; body.len()];
    for e in post_order(body, code.root) {
        let callee = match body.node(e) {
            Node::Call { callee, .. } => Some(*callee),
            _ => None,
        };
        body.for_each_operand(e, |o| {
            if matches!(body.node(o), Node::Global(_)) {
                if Some(o) == callee {
                    called[o.index()] = true;
                } else {
                    as_value[o.index()] = true;
                }
            }
        });
    }
    let values_only: Vec<bool> = (0..body.len()).map(|i| as_value[i] && !called[i]).collect();
    let out = rewrite_body(
        &code.body,
        &code.params,
        code.root,
        &mut Inliner {
            inlinable,
            expanded,
            values_only,
        },
    );
    f.with_code(out)
}

struct Inliner<'a> {
    inlinable: &'a FxHashMap<&'a str, &'a Function>,
    expanded: &'a FxHashMap<String, Function>,
    /// Global nodes of the input used as values and never called.
    values_only: Vec<bool>,
}

impl Inliner<'_> {
    /// The inline function `name` as a function literal of the new body (its attributes
    /// kept), when it is expanded.
    fn literal(&self, cx: &mut RewriteCx<'_>, name: &str) -> Option<ExprId> {
        let f = self.expanded.get(name)?;
        let mut params = Vec::new();
        let mut subst: FxHashMap<VarId, ExprId> = FxHashMap::default();
        for &p in &f.code.params {
            let data = f.code.body.var(p);
            let v = cx.new.var(&data.name, data.annotation.clone(), data.span);
            params.push(v);
            subst.insert(p, cx.new.use_var(v));
        }
        let body = copy_region(&f.code.body, f.code.root, &mut cx.new, &subst);
        Some(cx.new.closure(ClosureData {
            params,
            ret_type: f.ret_type.clone(),
            attrs: f.attrs.clone(),
            body,
        }))
    }
}

impl Rewrite for Inliner<'_> {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: OldId, new: ExprId) -> Option<ExprId> {
        if self.values_only[old.index()] {
            if let Node::Global(g) = cx.old.node(old) {
                let name = cx.old.body().global(*g);
                if self.inlinable.contains_key(name) {
                    return self.literal(cx, name);
                }
            }
        }
        let b = cx.new.body();
        let Node::Call { callee, args } = b.node(new) else {
            return None;
        };
        let Node::Global(g) = b.node(*callee) else {
            return None;
        };
        let name = b.global(*g);
        let params = self.inlinable.get(name)?.code.params.len();
        let args = b.list(*args).to_vec();
        if params != args.len() {
            return None;
        }
        let f = self.expanded.get(name)?;
        let subst: FxHashMap<VarId, ExprId> = f.code.params.iter().copied().zip(args).collect();
        Some(copy_region(&f.code.body, f.code.root, &mut cx.new, &subst))
    }
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
        let rewritten = rewrite_body(body, &code.params, code.root, &mut lifter);
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
