//! Module passes: `Inline`, `RemoveUnusedFunctions`, `LambdaLift`.

use irpass::{IrModule, PassContext, module_pass, pass_config_option};
use irpass_ir::visit::{Memo, Mutator, free_vars, post_order, rebuild_children};
use irpass_ir::{Args, AttrValue, Attrs, Callee, Expr, ExprKind, Function, Module, Var, VarMap};
use rustc_hash::{FxHashMap, FxHashSet};

use super::rename::Renamer;

/// The global functions an expression refers to.
fn globals_in(e: &Expr, out: &mut FxHashSet<String>) {
    post_order(e, &mut |n| {
        if let ExprKind::GlobalVar(g) = &n.kind {
            out.insert(g.clone());
        }
    });
}

/// The names of `roots` and of every global function they reach through references, in the
/// module as it is.
fn reachable(module: &Module, roots: impl IntoIterator<Item = String>) -> FxHashSet<String> {
    let mut reached: FxHashSet<String> = FxHashSet::default();
    let mut work: Vec<String> = roots.into_iter().collect();
    while let Some(name) = work.pop() {
        if !reached.insert(name.clone()) {
            continue;
        }
        if let Some(f) = module.get(&name) {
            let mut refs = FxHashSet::default();
            globals_in(&f.body, &mut refs);
            work.extend(refs.into_iter().filter(|r| !reached.contains(r)));
        }
    }
    reached
}

/// Replaces each call of a global function marked `Inline=1` by the function's body (its
/// parameters bound to the arguments, its local variables renamed so each stays bound once),
/// then removes those functions when nothing refers to them any more. A function that calls
/// itself is not inlined, nor is a call that would close a cycle of inline functions calling
/// each other.
#[module_pass(opt_level = 1, name = "Inline")]
pub fn inline(module: Module, _ctx: &PassContext) -> Module {
    let inlinable: FxHashMap<&str, &Function> = module
        .iter()
        .filter(|(name, f)| {
            f.has_attr("Inline") && {
                let mut refs = FxHashSet::default();
                globals_in(&f.body, &mut refs);
                !refs.contains(*name)
            }
        })
        .collect();
    if inlinable.is_empty() {
        return module;
    }
    let mut inliner = Inliner {
        funcs: &inlinable,
        expanded: FxHashMap::default(),
        expanding: Vec::new(),
        memo: Memo::default(),
    };
    // One walk of every function (inline ones too: their bodies, with the calls inside them
    // inlined, are what their call sites receive, so chains flatten in this one walk).
    let mut out = module.clone();
    for (name, f) in module.iter() {
        let nf = if inlinable.contains_key(name) {
            inliner.expanded(name).unwrap_or_else(|| f.clone())
        } else {
            inliner.mutate_function(f)
        };
        if !Function::ptr_eq(&nf, f) {
            out.replace_function(name, nf);
        }
    }
    // An inline function stays if a function that stays refers to it (a call that closed a
    // cycle, or a reference as a value), directly or through other inline functions.
    let roots: Vec<String> = out
        .names()
        .filter(|name| !inlinable.contains_key(name) || *name == "main")
        .map(str::to_string)
        .collect();
    let used = reachable(&out, roots);
    out.retain(|name, _| used.contains(name));
    out
}

struct Inliner<'a> {
    funcs: &'a FxHashMap<&'a str, &'a Function>,
    /// Inline functions whose body has had its own calls inlined, by name.
    expanded: FxHashMap<String, Function>,
    /// The inline functions whose bodies are being expanded (a call of one of them stays).
    expanding: Vec<String>,
    memo: Memo,
}

impl Inliner<'_> {
    /// Function `name` with the calls in its body inlined, or `None` while that is under way
    /// (the call being looked at is inside it: a cycle).
    fn expanded(&mut self, name: &str) -> Option<Function> {
        if let Some(f) = self.expanded.get(name) {
            return Some(f.clone());
        }
        if self.expanding.iter().any(|n| n == name) {
            return None;
        }
        let f = *self.funcs.get(name)?;
        self.expanding.push(name.to_string());
        let f = self.mutate_function(f);
        self.expanding.pop();
        self.expanded.insert(name.to_string(), f.clone());
        Some(f)
    }
}

impl Mutator for Inliner<'_> {
    fn memo(&mut self) -> &mut Memo {
        &mut self.memo
    }

    fn rewrite(&mut self, e: Expr) -> Expr {
        let ExprKind::Call(call) = &e.kind else {
            return e;
        };
        let Callee::Expr(callee) = &call.callee else {
            return e;
        };
        let ExprKind::GlobalVar(name) = &callee.kind else {
            return e;
        };
        let Some(params) = self.funcs.get(name.as_str()).map(|f| f.params.len()) else {
            return e;
        };
        if params != call.args.len() {
            return e;
        }
        let Some(f) = self.expanded(name) else {
            return e;
        };
        let subst = f
            .params
            .iter()
            .map(Var::id)
            .zip(call.args.iter().cloned())
            .collect();
        let mut renamer = Renamer::new(subst, true);
        renamer.mutate(&f.body)
    }
}

pass_config_option! {
    /// The functions `RemoveUnusedFunctions` keeps with everything they reach (default `["main"]`).
    pub ENTRY_FUNCTIONS: Vec<String> = "relay.RemoveUnusedFunctions.entry_functions";
}

/// Removes the global functions that the entry functions do not reach through calls or
/// references. The entry functions are the config key
/// `relay.RemoveUnusedFunctions.entry_functions` (default `["main"]`). A listed entry function
/// that the module does not have, or an empty list, is an error (either would delete every
/// function); with the default and no `@main`, nothing is removed.
#[module_pass(opt_level = 1, name = "RemoveUnusedFunctions")]
pub fn remove_unused_functions(module: Module, ctx: &PassContext) -> irpass::Result<Module> {
    let entries = match ctx.get(&ENTRY_FUNCTIONS) {
        Some(list) if list.is_empty() => {
            return Err(format!(
                "`{}` is empty: every function would be removed; name at least one entry \
                 function",
                ENTRY_FUNCTIONS.name()
            )
            .into());
        }
        Some(list) => {
            if let Some(missing) = list.iter().find(|n| module.get(n).is_none()) {
                // One suggestion: the closest function name.
                let close = irpass::suggest::closest(missing, module.names());
                let hint = irpass::suggest::did_you_mean(close.get(..1).unwrap_or_default());
                return Err(format!(
                    "`{}` names `{missing}`, which the module does not define{hint}",
                    ENTRY_FUNCTIONS.name()
                )
                .into());
            }
            list.clone()
        }
        None if module.get("main").is_none() => return Ok(module),
        None => vec!["main".to_string()],
    };
    let reached = reachable(&module, entries);
    let mut out = module;
    out.retain(|name, _| reached.contains(name));
    Ok(out)
}

/// Lifts every closure to a global function: one without free variables becomes
/// `@<outer>_lifted_<n>` and is referred to by name; one with free variables becomes a global
/// that takes them and returns the closure (marked `Closure=1`), called where the closure was.
/// A `let`-bound closure that calls itself calls the lifted global instead. Fused
/// (`Primitive=1`) functions stay where they are.
#[module_pass(opt_level = 0, name = "LambdaLift")]
pub fn lambda_lift(module: Module, _ctx: &PassContext) -> Module {
    let mut out = module.clone();
    let mut taken: FxHashSet<String> = module.names().map(str::to_string).collect();
    for (name, f) in module.iter() {
        let mut lifter = Lifter {
            outer: name.to_string(),
            taken: &mut taken,
            next_name: 0,
            lifted: Vec::new(),
            let_closures: FxHashMap::default(),
            current: None,
            memo: Memo::default(),
        };
        let body = lifter.mutate(&f.body);
        let lifted = std::mem::take(&mut lifter.lifted);
        if !lifted.is_empty() {
            out.replace_function(name, f.with_body(body));
            for (n, lf) in lifted {
                out.add(n, lf);
            }
        }
    }
    out
}

struct Lifter<'a> {
    outer: String,
    taken: &'a mut FxHashSet<String>,
    /// The suffix the next lifted closure's name tries first: counting on from the last one
    /// instead of from 0 (which made naming the n-th closure of a function cost n tries).
    next_name: usize,
    lifted: Vec<(String, Function)>,
    /// Closures bound by a `let` (node address to the variable), for recursion.
    let_closures: FxHashMap<usize, Var>,
    /// The original node of the closure being rewritten.
    current: Option<usize>,
    memo: Memo,
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

    /// Lifts closure `f` (its body already lifted); `self_var` is its `let` variable when it
    /// calls itself. Returns what replaces the closure.
    fn lift(&mut self, f: &Function, self_var: Option<&Var>) -> Expr {
        let mut free = Vec::new();
        free_vars(&Expr::function(f.clone()), &mut free);
        let captured: Vec<Var> = free.into_iter().filter(|v| Some(v) != self_var).collect();
        let name = self.fresh_name();
        let new_params: Vec<Var> = captured
            .iter()
            .map(|v| Var::new(v.name.clone(), v.ty().cloned()))
            .collect();
        let mut subst: VarMap<Expr> = captured
            .iter()
            .zip(&new_params)
            .map(|(v, p)| (v.id(), Expr::var(p)))
            .collect();
        // Inside the lifted code, the closure itself is the global applied to its captures.
        let me = if new_params.is_empty() {
            Expr::global(&name)
        } else {
            Expr::call(
                Expr::global(&name),
                new_params.iter().map(Expr::var).collect::<Args>(),
            )
        };
        if let Some(sv) = self_var {
            subst.insert(sv.id(), me);
        }
        let mut renamer = Renamer::new(subst, false);
        let body = renamer.mutate(&f.body);
        let inner = Function::new(f.params.clone(), f.ret_type.clone(), body, f.attrs.clone());
        let global = if new_params.is_empty() {
            inner
        } else {
            let attrs = Attrs::from_pairs([("Closure", AttrValue::Int(1))]);
            Function::new(new_params, None, Expr::function(inner), attrs)
        };
        self.lifted.push((name.clone(), global));
        if captured.is_empty() {
            Expr::global(name)
        } else {
            Expr::call(
                Expr::global(name),
                captured.iter().map(Expr::var).collect::<Args>(),
            )
        }
    }
}

impl Mutator for Lifter<'_> {
    fn memo(&mut self) -> &mut Memo {
        &mut self.memo
    }

    fn rebuild(&mut self, e: &Expr) -> Expr {
        let rebuilt = rebuild_children(self, e);
        // `rewrite` sees the rebuilt node; remember which original closure it was.
        self.current = matches!(e.kind, ExprKind::Function(_)).then(|| e.addr());
        rebuilt
    }

    fn keep_let(&mut self, var: &Var, value: &Expr) -> bool {
        if matches!(value.kind, ExprKind::Function(_)) {
            self.let_closures.insert(value.addr(), var.clone());
        }
        true
    }

    fn rewrite(&mut self, e: Expr) -> Expr {
        match &e.kind {
            ExprKind::Function(f) if !f.has_attr("Primitive") => {
                let self_var = self
                    .current
                    .and_then(|addr| self.let_closures.get(&addr))
                    .cloned();
                self.lift(&f.clone(), self_var.as_ref())
            }
            _ => e,
        }
    }
}
