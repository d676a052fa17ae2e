//! `Inline`: the pass and its rewrite of a module.

use irpass::{PassContext, module_pass};
use irpass_ir::body::{ClosureData, ExprId, Idx, Node, VarId, copy_region, post_order};
use irpass_ir::rewrite::{OldId, Rewrite, RewriteCx};
use irpass_ir::{Function, Module};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::analyses::{Calls, globals_in};

/// Replaces each call of a global function marked `Inline=1` by the function's body (its
/// parameters bound to the arguments, its local variables renamed so each stays bound once),
/// and a reference to one that is only used as a value (never called) by a function literal
/// of it (attributes kept), then removes those functions that inlining left without references (as TVM, an inline
/// function nothing referred to in the first place stays). A function that calls
/// itself is not inlined, nor is a call that would close a cycle of inline functions calling
/// each other.
#[module_pass(opt_level = 1, name = "Inline")]
pub fn transform(module: Module, _ctx: &PassContext) -> Module {
    inline(&module)
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
        if let Node::Call { callee, args } = body.node(e)
            && let Node::Global(g) = body.node(*callee)
            && let Some((&name, g)) = inlinable.get_key_value(body.global(*g))
            && g.code.params.len() == args.len()
        {
            out.push(name);
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
    let out = code.rewrite(&mut Inliner {
        inlinable,
        expanded,
        values_only,
    });
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
        if self.values_only[old.index()]
            && let Node::Global(g) = cx.old.node(old)
        {
            let name = cx.old.body().global(*g);
            if self.inlinable.contains_key(name) {
                return self.literal(cx, name);
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
