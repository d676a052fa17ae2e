//! `ToANormalForm` and `ToGraphNormalForm`.

use irpass::{PassContext, function_pass};
use irpass_ir::visit::{Memo, Mutator, free_vars, with_stack};
use irpass_ir::{Call, Callee, Expr, ExprKind, Function, Module, Var, VarMap};
use rustc_hash::{FxHashMap, FxHashSet};

/// Binds every intermediate value to a `let`, in evaluation order, so that each computation
/// has a name and happens once: A-normal form. A value shared by several places is bound once,
/// in the innermost scope (function body, `if` branch) that contains all its uses.
#[function_pass(opt_level = 0, name = "ToANormalForm")]
pub fn to_a_normal_form(func: Function, _module: &Module, _ctx: &PassContext) -> Function {
    Anf::default().function(&func)
}

/// Replaces `let` bindings by the values themselves (shared graph nodes), the inverse of
/// `ToANormalForm`: dataflow graph form. A recursive `let` (a closure that calls itself)
/// stays.
#[function_pass(opt_level = 0, name = "ToGraphNormalForm")]
pub fn to_graph_normal_form(func: Function, _module: &Module, _ctx: &PassContext) -> Function {
    let mut g = Gnf {
        subst: VarMap::default(),
        recursive: FxHashSet::default(),
        memo: Memo::default(),
    };
    g.mutate_function(&func)
}

struct Gnf {
    subst: VarMap<Expr>,
    /// Variables (ids) of `let`s whose value is a closure that refers to the variable itself.
    recursive: FxHashSet<u64>,
    memo: Memo,
}

impl Mutator for Gnf {
    fn memo(&mut self) -> &mut Memo {
        &mut self.memo
    }

    /// Only a closure can refer to the variable it is bound to. Asked of the value as
    /// written, before earlier values are substituted into it: the rewritten value holds the
    /// whole graph built so far, and searching it at every `let` was quadratic.
    fn keep_let(&mut self, var: &Var, value: &Expr) -> bool {
        if let ExprKind::Function(_) = value.kind {
            let mut free = Vec::new();
            free_vars(value, &mut free);
            if free.contains(var) {
                self.recursive.insert(var.id());
            }
        }
        true
    }

    fn visit_let(&mut self, var: &Var, value: Expr) -> Option<Expr> {
        if self.recursive.contains(&var.id()) {
            return Some(value);
        }
        self.subst.insert(var.id(), value);
        None
    }

    fn rewrite(&mut self, e: Expr) -> Expr {
        match &e.kind {
            ExprKind::Var(v) => self.subst.get(&v.id()).cloned().unwrap_or(e),
            _ => e,
        }
    }
}

/// One step of the evaluation order: a node to bind, or the point where a block binds its
/// `i`th variable (after its value, before the later bindings and the body).
enum Step {
    Node(Expr),
    Let(Expr, usize),
}

/// Where a node is used: by another node (it lives in that node's scope), or as the result of
/// a scope (a branch of an `if`, a closure's body, the function's body).
#[derive(Clone, Copy)]
enum Use {
    Node(usize),
    Scope(usize),
}

#[derive(Default)]
struct Anf {
    /// Each scope's parent (the root is its own parent).
    parents: Vec<usize>,
    /// The node (address) that owns each scope: the `if` or closure it belongs to.
    owners: Vec<Option<usize>>,
    /// Scope of each bound node (address).
    scope: FxHashMap<usize, usize>,
    /// Where each node is used.
    uses: FxHashMap<usize, Vec<Use>>,
    /// Scopes of `if` branches and closure bodies, by the root expression's address and the
    /// owner node.
    child_scopes: FxHashMap<(usize, usize), usize>,
    order: Vec<Step>,
    seen: FxHashSet<usize>,
    /// The atom each processed node is referred to by.
    atoms: FxHashMap<usize, Expr>,
    /// Bindings emitted per scope, in order.
    lets: FxHashMap<usize, Vec<(Var, Expr)>>,
    counter: usize,
}

fn is_atom(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::Var(_) | ExprKind::GlobalVar(_) | ExprKind::Constant(_)
    )
}

impl Anf {
    fn new_scope(&mut self, parent: usize, owner: Option<usize>) -> usize {
        self.parents.push(parent);
        self.owners.push(owner);
        self.parents.len() - 1
    }

    fn depth(&self, mut s: usize) -> usize {
        let mut d = 0;
        while self.parents[s] != s {
            s = self.parents[s];
            d += 1;
        }
        d
    }

    fn lca(&self, mut a: usize, mut b: usize) -> usize {
        let (mut da, mut db) = (self.depth(a), self.depth(b));
        while da > db {
            a = self.parents[a];
            da -= 1;
        }
        while db > da {
            b = self.parents[b];
            db -= 1;
        }
        while a != b {
            a = self.parents[a];
            b = self.parents[b];
        }
        a
    }

    /// Records that `e` is used at `site` (whose scope is `s` now) and visits it the first time.
    fn use_in(&mut self, e: &Expr, site: Use, s: usize) {
        if is_atom(e) {
            return;
        }
        let key = e.addr();
        self.uses.entry(key).or_default().push(site);
        self.scope.entry(key).or_insert(s);
        if !self.seen.insert(key) {
            return;
        }
        let me = Use::Node(key);
        with_stack(|| match &e.kind {
            ExprKind::Let(bindings, body) => {
                for (i, (_, value)) in bindings.iter().enumerate() {
                    self.use_in(value, me, s);
                    self.order.push(Step::Let(e.clone(), i));
                }
                self.use_in(body, me, s);
            }
            ExprKind::If(c, t, o) => {
                self.use_in(c, me, s);
                let (st, so) = (self.new_scope(s, Some(key)), self.new_scope(s, Some(key)));
                self.child_scopes.insert((key, t.addr()), st);
                self.child_scopes.insert((key, o.addr() ^ 1), so);
                self.use_in(t, Use::Scope(st), st);
                self.use_in(o, Use::Scope(so), so);
            }
            ExprKind::Function(f) => {
                let sb = self.new_scope(s, Some(key));
                self.child_scopes.insert((key, f.body.addr()), sb);
                self.use_in(&f.body, Use::Scope(sb), sb);
            }
            _ => {
                for c in e.children() {
                    self.use_in(c, me, s);
                }
            }
        });
        self.order.push(Step::Node(e.clone()));
    }

    /// Places every node in the innermost scope that contains all its uses, and every branch
    /// or closure scope under the scope of its owner, repeating until nothing moves (a node
    /// that moves out takes its operands and its own scopes along).
    fn settle(&mut self) {
        loop {
            let mut changed = false;
            for s in 0..self.parents.len() {
                if let Some(owner) = self.owners[s] {
                    let p = self.scope.get(&owner).copied().unwrap_or(0);
                    if self.parents[s] != p {
                        self.parents[s] = p;
                        changed = true;
                    }
                }
            }
            for step in &self.order {
                let (Step::Node(e) | Step::Let(e, _)) = step;
                let key = e.addr();
                let Some(uses) = self.uses.get(&key) else {
                    continue;
                };
                let mut best: Option<usize> = None;
                for u in uses {
                    let s = match *u {
                        Use::Node(p) => self.scope.get(&p).copied().unwrap_or(0),
                        Use::Scope(s) => s,
                    };
                    best = Some(match best {
                        Some(b) => self.lca(b, s),
                        None => s,
                    });
                }
                if let Some(b) = best {
                    if self.scope.get(&key) != Some(&b) {
                        self.scope.insert(key, b);
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }

    fn function(&mut self, f: &Function) -> Function {
        let root = self.new_scope(0, None);
        self.use_in(&f.body, Use::Scope(root), root);
        self.settle();
        let order = std::mem::take(&mut self.order);
        for step in &order {
            self.emit(step);
        }
        let body = self.close(root, &f.body);
        Function::new(f.params.clone(), f.ret_type.clone(), body, f.attrs.clone())
    }

    fn atom(&self, e: &Expr) -> Expr {
        if is_atom(e) {
            return e.clone();
        }
        self.atoms
            .get(&e.addr())
            .cloned()
            .unwrap_or_else(|| e.clone())
    }

    /// The body of scope `s` ending in `result`: its bindings as `let`s.
    fn close(&mut self, s: usize, result: &Expr) -> Expr {
        let body = self.atom(result);
        Expr::lets(self.lets.remove(&s).unwrap_or_default(), body)
    }

    fn emit(&mut self, step: &Step) {
        match step {
            Step::Let(e, i) => {
                let ExprKind::Let(bindings, _) = &e.kind else {
                    return;
                };
                let (v, value) = &bindings[*i];
                let s = self.scope[&e.addr()];
                let atom = self.atom(value);
                self.lets.entry(s).or_default().push((v.clone(), atom));
            }
            Step::Node(e) => {
                let s = self.scope[&e.addr()];
                let value = match &e.kind {
                    ExprKind::Let(_, body) => {
                        let a = self.atom(body);
                        self.atoms.insert(e.addr(), a);
                        return;
                    }
                    ExprKind::Call(call) => {
                        let callee = match &call.callee {
                            Callee::Op(op) => Callee::Op(*op),
                            Callee::Expr(f) => Callee::Expr(self.atom(f)),
                        };
                        Expr::new(ExprKind::Call(Call {
                            callee,
                            args: call.args.iter().map(|a| self.atom(a)).collect(),
                            attrs: call.attrs.clone(),
                        }))
                    }
                    ExprKind::Tuple(fields) => {
                        Expr::tuple(fields.iter().map(|f| self.atom(f)).collect())
                    }
                    ExprKind::TupleGetItem(t, i) => Expr::get(self.atom(t), *i),
                    ExprKind::If(c, t, o) => {
                        let st = self.child_scopes[&(e.addr(), t.addr())];
                        let so = self.child_scopes[&(e.addr(), o.addr() ^ 1)];
                        let then = self.close(st, t);
                        let other = self.close(so, o);
                        Expr::if_(self.atom(c), then, other)
                    }
                    ExprKind::Function(f) => {
                        let sb = self.child_scopes[&(e.addr(), f.body.addr())];
                        let body = self.close(sb, &f.body);
                        Expr::function(Function::new(
                            f.params.clone(),
                            f.ret_type.clone(),
                            body,
                            f.attrs.clone(),
                        ))
                    }
                    _ => return,
                };
                self.counter += 1;
                let v = Var::new(format!("x{}", self.counter), None);
                self.lets.entry(s).or_default().push((v.clone(), value));
                self.atoms.insert(e.addr(), Expr::var(&v));
            }
        }
    }
}
