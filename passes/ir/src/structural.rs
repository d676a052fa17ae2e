//! Structural equality (bound variables up to renaming, floats bit-exact) and a matching hash.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use rustc_hash::FxHasher;

use super::expr::with_stack;
use super::{Binding, Callee, Expr, ExprKind, Var, VarNode};
use crate::expr::Function;
use crate::module::Module;

/// Whether `a` and `b` are structurally equal: same shape of expression, operators, attributes,
/// constants (bit-exact) and annotations, with bound variables matched up to renaming and free
/// variables matched by name. Sharing does not matter (a DAG equals its unfolded tree).
pub fn exprs_equal(a: &Expr, b: &Expr) -> bool {
    Eq::default().expr(a, b)
}

/// Whether two functions are structurally equal.
pub fn functions_equal(a: &Function, b: &Function) -> bool {
    Eq::default().function(a, b)
}

/// Whether two modules have the same function names and structurally equal functions.
pub fn modules_equal(a: &Module, b: &Module) -> bool {
    a.len() == b.len()
        && a.iter()
            .all(|(name, fa)| b.get(name).is_some_and(|fb| functions_equal(fa, fb)))
}

#[derive(Default)]
struct Eq {
    /// Bound variable of `a` to its counterpart in `b`.
    map: HashMap<u64, u64>,
    /// Variables of `b` that some variable of `a` maps to.
    mapped: HashSet<u64>,
    /// Node pairs already found equal.
    memo: HashSet<(usize, usize)>,
}

impl Eq {
    fn bind(&mut self, a: &Var, b: &Var) -> bool {
        if a.annotation != b.annotation {
            return false;
        }
        match self.map.get(&a.id()) {
            Some(&m) => m == b.id(),
            None => {
                self.map.insert(a.id(), b.id());
                self.mapped.insert(b.id());
                true
            }
        }
    }

    fn var(&self, a: &VarNode, b: &VarNode) -> bool {
        match self.map.get(&a.id()) {
            Some(&m) => m == b.id(),
            None => {
                !self.mapped.contains(&b.id())
                    && (a.id() == b.id() || (a.name == b.name && a.annotation == b.annotation))
            }
        }
    }

    fn function(&mut self, a: &Function, b: &Function) -> bool {
        a.params.len() == b.params.len()
            && a.ret_type == b.ret_type
            && a.attrs == b.attrs
            && a.params.iter().zip(&b.params).all(|(x, y)| self.bind(x, y))
            && self.expr(&a.body, &b.body)
    }

    fn expr(&mut self, a: &Expr, b: &Expr) -> bool {
        if self.memo.contains(&(a.addr(), b.addr())) {
            return true;
        }
        let equal = with_stack(|| self.expr_inner(a, b));
        if equal {
            self.memo.insert((a.addr(), b.addr()));
        }
        equal
    }

    fn expr_inner(&mut self, a: &Expr, b: &Expr) -> bool {
        match (&a.kind, &b.kind) {
            (ExprKind::Var(x), ExprKind::Var(y)) => self.var(x, y),
            (ExprKind::GlobalVar(x), ExprKind::GlobalVar(y)) => x == y,
            (ExprKind::Constant(x), ExprKind::Constant(y)) => x.bit_eq(y),
            (ExprKind::Call(x), ExprKind::Call(y)) => {
                let callee = match (&x.callee, &y.callee) {
                    (Callee::Op(p), Callee::Op(q)) => p == q,
                    (Callee::Expr(p), Callee::Expr(q)) => self.expr(p, q),
                    _ => false,
                };
                callee
                    && x.attrs == y.attrs
                    && x.args.len() == y.args.len()
                    && x.args.iter().zip(&y.args).all(|(p, q)| self.expr(p, q))
            }
            (ExprKind::Let(..), ExprKind::Let(..)) => {
                let ((xs, ba), (ys, bb)) = (flat_block(a), flat_block(b));
                // Each variable is bound before its value (a let-bound closure may recurse).
                xs.len() == ys.len()
                    && xs
                        .iter()
                        .zip(&ys)
                        .all(|((va, xa), (vb, xb))| self.bind(va, vb) && self.expr(xa, xb))
                    && self.expr(ba, bb)
            }
            (ExprKind::Tuple(x), ExprKind::Tuple(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(p, q)| self.expr(p, q))
            }
            (ExprKind::TupleGetItem(x, i), ExprKind::TupleGetItem(y, j)) => {
                i == j && self.expr(x, y)
            }
            (ExprKind::If(c1, t1, e1), ExprKind::If(c2, t2, e2)) => {
                self.expr(c1, c2) && self.expr(t1, t2) && self.expr(e1, e2)
            }
            (ExprKind::Function(f), ExprKind::Function(g)) => self.function(f, g),
            _ => false,
        }
    }
}

/// The bindings of the block `e` followed by those of the blocks in its body position, and the
/// final body: a block whose body is a block means the two joined.
fn flat_block(e: &Expr) -> (Vec<&Binding>, &Expr) {
    let mut out = Vec::new();
    let mut cur = e;
    while let ExprKind::Let(bindings, body) = &cur.kind {
        out.extend(bindings);
        cur = body;
    }
    (out, cur)
}

/// A hash consistent with [`exprs_equal`]: equal expressions hash equally. Bound variables
/// hash by their annotation only (their names do not matter), free variables by name.
pub fn expr_hash(e: &Expr) -> u64 {
    let mut bound = HashSet::new();
    collect_bound(e, &mut bound);
    let mut memo = HashMap::new();
    hash_expr(e, &bound, &mut memo)
}

/// The hash of a function (see [`expr_hash`]).
pub fn function_hash(f: &Function) -> u64 {
    let mut h = FxHasher::default();
    f.params.len().hash(&mut h);
    for p in &f.params {
        p.annotation.hash(&mut h);
    }
    f.ret_type.hash(&mut h);
    f.attrs.hash(&mut h);
    let mut bound: HashSet<u64> = f.params.iter().map(Var::id).collect();
    collect_bound(&f.body, &mut bound);
    let mut memo = HashMap::new();
    hash_expr(&f.body, &bound, &mut memo).hash(&mut h);
    h.finish()
}

/// The hash of a module: names and function hashes, independent of definition order.
pub fn module_hash(m: &Module) -> u64 {
    let mut parts: Vec<(String, u64)> = m
        .iter()
        .map(|(n, f)| (n.to_string(), function_hash(f)))
        .collect();
    parts.sort();
    let mut h = FxHasher::default();
    parts.hash(&mut h);
    h.finish()
}

fn collect_bound(e: &Expr, out: &mut HashSet<u64>) {
    super::visit::post_order(e, &mut |n| match &n.kind {
        ExprKind::Let(bindings, _) => out.extend(bindings.iter().map(|(v, _)| v.id())),
        ExprKind::Function(f) => out.extend(f.params.iter().map(Var::id)),
        _ => {}
    });
}

fn hash_expr(e: &Expr, bound: &HashSet<u64>, memo: &mut HashMap<usize, u64>) -> u64 {
    if let Some(&h) = memo.get(&e.addr()) {
        return h;
    }
    let mut h = FxHasher::default();
    std::mem::discriminant(&e.kind).hash(&mut h);
    match &e.kind {
        ExprKind::Var(v) => {
            if bound.contains(&v.id()) {
                0u8.hash(&mut h);
            } else {
                v.name.hash(&mut h);
            }
            v.annotation.hash(&mut h);
        }
        ExprKind::GlobalVar(n) => n.hash(&mut h),
        ExprKind::Constant(t) => t.hash_bits(&mut h),
        ExprKind::Call(c) => {
            match &c.callee {
                Callee::Op(op) => op.name().hash(&mut h),
                Callee::Expr(f) => with_stack(|| hash_expr(f, bound, memo)).hash(&mut h),
            }
            c.attrs.hash(&mut h);
            for a in &c.args {
                with_stack(|| hash_expr(a, bound, memo)).hash(&mut h);
            }
        }
        ExprKind::Let(..) => {
            let (bindings, body) = flat_block(e);
            for (v, value) in bindings {
                v.annotation.hash(&mut h);
                with_stack(|| hash_expr(value, bound, memo)).hash(&mut h);
            }
            with_stack(|| hash_expr(body, bound, memo)).hash(&mut h);
        }
        ExprKind::Tuple(fields) => {
            fields.len().hash(&mut h);
            for f in fields {
                with_stack(|| hash_expr(f, bound, memo)).hash(&mut h);
            }
        }
        ExprKind::TupleGetItem(t, i) => {
            i.hash(&mut h);
            with_stack(|| hash_expr(t, bound, memo)).hash(&mut h);
        }
        ExprKind::If(c, t, o) => {
            for x in [c, t, o] {
                with_stack(|| hash_expr(x, bound, memo)).hash(&mut h);
            }
        }
        ExprKind::Function(f) => {
            f.params.len().hash(&mut h);
            for p in &f.params {
                p.annotation.hash(&mut h);
            }
            f.ret_type.hash(&mut h);
            f.attrs.hash(&mut h);
            with_stack(|| hash_expr(&f.body, bound, memo)).hash(&mut h);
        }
    }
    let out = h.finish();
    memo.insert(e.addr(), out);
    out
}
