//! `ToANormalForm` and `ToGraphNormalForm`.

use irpass::ir::visit::{Memo, Mutator, free_vars, with_stack};
use irpass::ir::{Call, Callee, Expr, ExprKind, Function, Module, Var};
use irpass::{PassContext, function_pass};
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
        subst: FxHashMap::default(),
        memo: Memo::default(),
    };
    g.mutate_function(&func)
}

struct Gnf {
    subst: FxHashMap<u64, Expr>,
    memo: Memo,
}

impl Mutator for Gnf {
    fn memo(&mut self) -> &mut Memo {
        &mut self.memo
    }

    fn visit_let(&mut self, var: &Var, value: Expr) -> Option<Expr> {
        let mut free = Vec::new();
        free_vars(&value, &mut free);
        if free.iter().any(|f| f == var) {
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

/// One step of the evaluation order: a node to bind, or the point where a `let` binds its
/// variable (after its value, before its body).
enum Step {
    Node(Expr),
    Let(Expr),
}

#[derive(Default)]
struct Anf {
    /// Scope of each scope id's parent (root: itself).
    parents: Vec<usize>,
    /// Scope of each bound node (address).
    scope: FxHashMap<usize, usize>,
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
    fn new_scope(&mut self, parent: usize) -> usize {
        self.parents.push(parent);
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

    fn use_in(&mut self, e: &Expr, s: usize) {
        if is_atom(e) {
            return;
        }
        let key = e.addr();
        let new = match self.scope.get(&key) {
            Some(&old) => self.lca(old, s),
            None => s,
        };
        self.scope.insert(key, new);
        if !self.seen.insert(key) {
            return;
        }
        with_stack(|| match &e.kind {
            ExprKind::Let(_, value, body) => {
                self.use_in(value, s);
                self.order.push(Step::Let(e.clone()));
                self.use_in(body, s);
            }
            ExprKind::If(c, t, o) => {
                self.use_in(c, s);
                let (st, so) = (self.new_scope(s), self.new_scope(s));
                self.child_scopes.insert((key, t.addr()), st);
                self.child_scopes.insert((key, o.addr() ^ 1), so);
                self.use_in(t, st);
                self.use_in(o, so);
            }
            ExprKind::Function(f) => {
                let sb = self.new_scope(s);
                self.child_scopes.insert((key, f.body.addr()), sb);
                self.use_in(&f.body, sb);
            }
            _ => {
                for c in e.children() {
                    self.use_in(c, s);
                }
            }
        });
        self.order.push(Step::Node(e.clone()));
    }

    /// Makes every node's scope contain the scopes of the nodes that use it (a node reached
    /// first from an inner scope and later from an outer one moves out, its operands too).
    fn settle(&mut self) {
        for step in self.order.iter().rev() {
            let (Step::Node(e) | Step::Let(e)) = step;
            let Some(&s) = self.scope.get(&e.addr()) else {
                continue;
            };
            let children: Vec<&Expr> = match &e.kind {
                ExprKind::If(c, _, _) => vec![c],
                ExprKind::Function(_) => vec![],
                ExprKind::Let(_, value, body) => vec![value, body],
                _ => e.children(),
            };
            for c in children {
                if is_atom(c) {
                    continue;
                }
                if let Some(&cs) = self.scope.get(&c.addr()) {
                    let l = self.lca(cs, s);
                    self.scope.insert(c.addr(), l);
                }
            }
        }
    }

    fn function(&mut self, f: &Function) -> Function {
        let root = self.new_scope(0);
        self.use_in(&f.body, root);
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
        let mut body = self.atom(result);
        for (v, value) in self.lets.remove(&s).unwrap_or_default().into_iter().rev() {
            body = Expr::let_(&v, value, body);
        }
        body
    }

    fn emit(&mut self, step: &Step) {
        match step {
            Step::Let(e) => {
                let ExprKind::Let(v, value, _) = &e.kind else {
                    return;
                };
                let s = self.scope[&e.addr()];
                let atom = self.atom(value);
                self.lets.entry(s).or_default().push((v.clone(), atom));
            }
            Step::Node(e) => {
                let s = self.scope[&e.addr()];
                let value = match &e.kind {
                    ExprKind::Let(_, _, body) => {
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
