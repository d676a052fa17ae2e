//! Traversals: a visitor that sees each shared node once, a memoising mutator that rebuilds
//! only what changed (sharing preserved), and free variables.

use rustc_hash::{FxHashMap, FxHashSet};

pub use super::expr::with_stack;
use super::{Args, Binding, Call, Callee, Expr, ExprKind, Var, VarSet};
use crate::expr::Function;

/// Calls `f` on every node reachable from `root`, children before parents, each node once
/// (a DAG is visited once per node, not once per path). Closure bodies are included.
pub fn post_order(root: &Expr, f: &mut dyn FnMut(&Expr)) {
    let mut seen = FxHashSet::default();
    with_stack(|| walk(root, false, &mut seen, f));
}

/// Only nodes that can be reached twice go in `seen`: a node with one parent is reached once,
/// through it, unless that parent is the body of a function object two closures share
/// (`via_shared`).
fn walk(e: &Expr, via_shared: bool, seen: &mut FxHashSet<usize>, f: &mut dyn FnMut(&Expr)) {
    if (via_shared || e.is_shared()) && !seen.insert(e.addr()) {
        return;
    }
    match &e.kind {
        ExprKind::Function(func) => {
            with_stack(|| walk(&func.body, func.is_shared(), seen, f));
        }
        _ => e.for_each_child(|c| with_stack(|| walk(c, false, seen, f))),
    }
    f(e);
}

/// The number of distinct nodes reachable from `root`.
pub fn count_nodes(root: &Expr) -> usize {
    let mut n = 0;
    post_order(root, &mut |_| n += 1);
    n
}

/// The free variables of `e` (used but not bound inside it), in first-use order.
pub fn free_vars(e: &Expr, out: &mut Vec<Var>) {
    let mut bound = VarSet::default();
    post_order(e, &mut |n| match &n.kind {
        ExprKind::Let(bindings, _) => bound.extend(bindings.iter().map(|(v, _)| v.id())),
        ExprKind::Function(f) => {
            bound.extend(f.params.iter().map(Var::id));
        }
        _ => {}
    });
    let mut seen = VarSet::default();
    post_order(e, &mut |n| {
        if let ExprKind::Var(v) = &n.kind {
            if !bound.contains(&v.id()) && seen.insert(v.id()) {
                out.extend(n.as_var());
            }
        }
    });
}

/// The memo table of a [`Mutator`]: node address to its rewritten form.
pub type Memo = FxHashMap<usize, Expr>;

/// A rewriting of expressions: override [`Mutator::rewrite`] to replace a node after its
/// children were rewritten. [`Mutator::mutate`] memoises by node, so a shared node is rewritten
/// once and stays shared, and a node whose children did not change is returned as is (same
/// `Arc`), so unchanged graphs keep their identity. Nodes with a single parent
/// ([`Expr::is_shared`] false) are reached once and get no memo entry; nor do variables, which
/// are rewritten at each use.
pub trait Mutator {
    /// Rewrites `e`, whose children are already rewritten (`e` is the rebuilt node, or the
    /// original when nothing below changed). The default keeps it.
    fn rewrite(&mut self, e: Expr) -> Expr {
        e
    }

    /// The memo table (node address to result).
    fn memo(&mut self) -> &mut Memo;

    /// Whether to keep the binding of `var` to `value` at all, asked before the value is
    /// visited (dead code elimination answers no for unused variables). The default keeps it.
    fn keep_let(&mut self, _var: &Var, _value: &Expr) -> bool {
        true
    }

    /// Called with each kept binding's rewritten value before the later bindings of its block
    /// and the block's body are visited: return the value to bind, or `None` to drop the
    /// binding (the mutator then rewrites the variable's references itself, e.g. to the
    /// value). The default keeps it.
    fn visit_let(&mut self, _var: &Var, value: Expr) -> Option<Expr> {
        Some(value)
    }

    /// Rewrites `e` and everything below it.
    ///
    /// The memo is keyed by node address: call it on nodes that stay alive while the mutator
    /// is in use (the program being rewritten), not on temporaries, whose address the
    /// allocator could give to a later node. A node with one parent is not memoised (it is
    /// reached once); calling `mutate` twice on such a node rewrites it twice.
    fn mutate(&mut self, e: &Expr) -> Expr {
        let shared = e.needs_memo();
        if shared {
            if let Some(done) = self.memo().get(&e.addr()) {
                return done.clone();
            }
        }
        let rebuilt = with_stack(|| self.rebuild(e));
        let out = self.rewrite(rebuilt);
        if shared {
            self.memo().insert(e.addr(), out.clone());
        }
        out
    }

    /// `e` with its children mutated (the same node if none changed). Override to skip or
    /// reorder children; [`rebuild_children`] is the default.
    fn rebuild(&mut self, e: &Expr) -> Expr {
        rebuild_children(self, e)
    }

    /// Rewrites a function's body (the same function if nothing changed).
    fn mutate_function(&mut self, f: &Function) -> Function {
        let body = self.mutate(&f.body);
        if Expr::ptr_eq(&body, &f.body) {
            f.clone()
        } else {
            f.with_body(body)
        }
    }
}

/// A [`Mutator`] from a closure: `map(|e| ...)` rewrites each node after its children.
pub struct MapMutator<F: FnMut(Expr) -> Expr> {
    f: F,
    memo: Memo,
}

impl<F: FnMut(Expr) -> Expr> MapMutator<F> {
    /// A mutator applying `f`.
    pub fn new(f: F) -> Self {
        MapMutator {
            f,
            memo: Memo::default(),
        }
    }
}

impl<F: FnMut(Expr) -> Expr> Mutator for MapMutator<F> {
    fn rewrite(&mut self, e: Expr) -> Expr {
        (self.f)(e)
    }
    fn memo(&mut self) -> &mut Memo {
        &mut self.memo
    }
}

/// `e` with its children mutated by `m` (the same node if none changed): the default
/// [`Mutator::rebuild`].
pub fn rebuild_children<M: Mutator + ?Sized>(m: &mut M, e: &Expr) -> Expr {
    let same = |a: &Expr, b: &Expr| Expr::ptr_eq(a, b);
    let kind = match &e.kind {
        ExprKind::Var(_) | ExprKind::GlobalVar(_) | ExprKind::Constant(_) => return e.clone(),
        ExprKind::Call(call) => {
            let callee = match &call.callee {
                Callee::Op(op) => Callee::Op(*op),
                Callee::Expr(f) => Callee::Expr(m.mutate(f)),
            };
            let callee_same = match (&callee, &call.callee) {
                (Callee::Expr(a), Callee::Expr(b)) => same(a, b),
                _ => true,
            };
            let args = match (mutate_all(m, &call.args), callee_same) {
                (Some(args), _) => args,
                (None, true) => return e.clone(),
                (None, false) => call.args.clone(),
            };
            ExprKind::Call(Call {
                callee,
                args,
                attrs: call.attrs.clone(),
            })
        }
        ExprKind::Let(..) => return rebuild_let_spine(m, e),
        ExprKind::Tuple(fields) => match mutate_all(m, fields) {
            Some(nf) => ExprKind::Tuple(nf.into_vec()),
            None => return e.clone(),
        },
        ExprKind::TupleGetItem(t, i) => {
            let nt = m.mutate(t);
            if same(&nt, t) {
                return e.clone();
            }
            ExprKind::TupleGetItem(nt, *i)
        }
        ExprKind::If(c, t, o) => {
            let (nc, nt, no) = (m.mutate(c), m.mutate(t), m.mutate(o));
            if same(&nc, c) && same(&nt, t) && same(&no, o) {
                return e.clone();
            }
            ExprKind::If(nc, nt, no)
        }
        ExprKind::Function(f) => {
            let nb = m.mutate(&f.body);
            if same(&nb, &f.body) {
                return e.clone();
            }
            ExprKind::Function(f.with_body(nb))
        }
    };
    Expr::with_span(kind, e.span)
}

/// `exprs` mutated by `m` in order, or `None` when every one came back as the same node: the
/// common case allocates nothing (most calls a pass visits are left as they are).
fn mutate_all<M: Mutator + ?Sized>(m: &mut M, exprs: &[Expr]) -> Option<Args> {
    let mut out: Option<Args> = None;
    for (i, e) in exprs.iter().enumerate() {
        let ne = m.mutate(e);
        match &mut out {
            Some(out) => out.push(ne),
            None if !Expr::ptr_eq(&ne, e) => {
                let mut changed = Args::with_capacity(exprs.len());
                changed.extend(exprs[..i].iter().cloned());
                changed.push(ne);
                out = Some(changed);
            }
            None => {}
        }
    }
    out
}

/// The bindings of the block `e` and of the blocks joined to it — nested in body position
/// and not shared (a shared block is a node of its own, rewritten once through the memo) —
/// in order, and the body after the last of them. A traversal handles them as one block.
///
/// ```
/// use irpass_ir::visit::joined_blocks;
/// use irpass_ir::{Expr, Var};
/// let (a, b) = (Var::new("a", None), Var::new("b", None));
/// let e = Expr::let_(&a, Expr::var(&b), Expr::let_(&b, Expr::var(&a), Expr::var(&b)));
/// let (blocks, body) = joined_blocks(&e);
/// assert_eq!(blocks.len(), 2);
/// assert!(matches!(body.kind, irpass_ir::ExprKind::Var(_)));
/// ```
pub fn joined_blocks(e: &Expr) -> (Vec<&[Binding]>, &Expr) {
    let mut blocks = Vec::new();
    let mut cur = e;
    while let ExprKind::Let(bindings, body) = &cur.kind {
        if !Expr::ptr_eq(cur, e) && cur.is_shared() {
            break;
        }
        blocks.push(bindings.as_slice());
        cur = body;
    }
    (blocks, cur)
}

/// A block of `let`s and the blocks joined to it ([`joined_blocks`]), handled with a loop
/// rather than recursion, so that a body of a hundred thousand bindings neither overflows the
/// stack nor pays for deep recursion. Each binding goes through [`Mutator::keep_let`] and
/// [`Mutator::visit_let`], in order. The result is one block (the same node when nothing
/// changed).
fn rebuild_let_spine<M: Mutator + ?Sized>(m: &mut M, e: &Expr) -> Expr {
    let (blocks, last) = joined_blocks(e);
    let bindings = || blocks.iter().flat_map(|b| b.iter());
    let total = blocks.iter().map(|b| b.len()).sum();
    // The bindings of the result, once one differs; until then only how many came back as
    // they were (no variable is touched for a block that stays as it is).
    let mut out: Option<Vec<Binding>> = None;
    let mut same = 0;
    for (v, value) in bindings() {
        let kept = if m.keep_let(v, value) {
            let nv = m.mutate(value);
            m.visit_let(v, nv)
        } else {
            None
        };
        match (&mut out, kept) {
            (None, Some(nv)) if Expr::ptr_eq(&nv, value) => same += 1,
            (Some(out), Some(nv)) => out.push((v.clone(), nv)),
            (Some(_), None) => {}
            (None, kept) => {
                // Room for every binding at once, rather than growing a list of maybe 10⁵
                // bindings by doubling (each step a large allocation and a copy).
                let mut changed: Vec<Binding> = Vec::with_capacity(total);
                changed.extend(bindings().take(same).cloned());
                changed.extend(kept.map(|nv| (v.clone(), nv)));
                out = Some(changed);
            }
        }
    }
    let body = m.mutate(last);
    match out {
        None if Expr::ptr_eq(&body, last) => e.clone(),
        None => Expr::lets_with_span(bindings().take(same).cloned().collect(), body, e.span),
        Some(out) => Expr::lets_with_span(out, body, e.span),
    }
}
