//! Structural equality and hashing of arena functions, sharing included: two functions are
//! equal when a one-to-one map between their nodes and variables makes one the other, so a
//! node used twice is not equal to the same computation written twice (a missing CSE shows).
//! Variables are compared by position (alpha-equivalence), never by name (free variables too).
//! A block nested in body position is the two blocks joined (`let a = x; let b = y; r` either
//! way), as the text writes both alike. No recursion: both walks use an explicit stack.

use std::hash::{Hash, Hasher};

use rustc_hash::FxHasher;

use crate::body::ArenaFunction;
use crate::body::Idx;
use crate::body::{Body, ExprId, List, Node, VarId};

/// Whether `a` and `b` are the same function up to the ids and names of their nodes and
/// variables, sharing included.
///
/// ```
/// use irpass_ir::Module;
/// use irpass_ir::structural::structurally_equal;
/// let arena = |text: &str| Module::parse(text).unwrap().get("main").unwrap().code.clone();
/// let shared = arena("def @main(%x: float32) { %0 = exp(%x); add(%0, %0) }");
/// let renamed = arena("def @main(%y: float32) { %0 = exp(%y); add(%0, %0) }");
/// let twice = arena("def @main(%x: float32) { add(exp(%x), exp(%x)) }");
/// assert!(structurally_equal(&shared, &renamed));
/// assert!(!structurally_equal(&shared, &twice));
/// ```
pub fn structurally_equal(a: &ArenaFunction, b: &ArenaFunction) -> bool {
    if a.params.len() != b.params.len() {
        return false;
    }
    let mut m = Matcher {
        a: &a.body,
        b: &b.body,
        exprs: (vec![None; a.body.len()], vec![None; b.body.len()]),
        vars: (
            vec![None; a.body.var_count()],
            vec![None; b.body.var_count()],
        ),
        stack: vec![(a.root, b.root)],
    };
    if !a
        .params
        .iter()
        .zip(&b.params)
        .all(|(&x, &y)| m.var_pair(x, y))
    {
        return false;
    }
    while let Some((x, y)) = m.stack.pop() {
        if !m.pair(x, y) {
            return false;
        }
    }
    true
}

/// A hash that [`structurally_equal`] functions share.
pub fn structural_hash(f: &ArenaFunction) -> u64 {
    let body = &f.body;
    let mut h = FxHasher::default();
    // First-visit numbers of nodes and variables: a node seen again hashes as a reference to
    // its number, a variable as its number (so names and ids do not count).
    let mut seen: Vec<Option<u32>> = vec![None; body.len()];
    let mut var_numbers: Vec<Option<u32>> = vec![None; body.var_count()];
    let mut next_var = 0u32;
    let mut var_number = |v: VarId, h: &mut FxHasher| {
        let n = *var_numbers[v.index()].get_or_insert_with(|| {
            next_var += 1;
            next_var - 1
        });
        n.hash(h);
        body.var(v).annotation.hash(h);
    };
    f.params.len().hash(&mut h);
    for &p in &f.params {
        var_number(p, &mut h);
    }
    let mut visited = 0u32;
    let mut stack = vec![f.root];
    while let Some(e) = stack.pop() {
        if let Some(n) = seen[e.index()] {
            (u8::MAX, n).hash(&mut h);
            continue;
        }
        seen[e.index()] = Some(visited);
        visited += 1;
        let node = body.node(e);
        std::mem::discriminant(node).hash(&mut h);
        match node {
            Node::Var(v) => var_number(*v, &mut h),
            Node::Global(g) => body.global(*g).hash(&mut h),
            Node::Constant(k) => body.constant(*k).hash_bits(&mut h),
            Node::CallOp { sig, args } => {
                let sig = body.sig(*sig);
                (sig.op.name(), body.attrs(sig.attrs), args.len()).hash(&mut h);
            }
            Node::Call { args, .. } | Node::Tuple(args) => args.len().hash(&mut h),
            Node::Proj(_, i) => i.hash(&mut h),
            Node::If(..) => {}
            Node::Let {
                bindings,
                body: result,
            } => {
                let (joined, result) = joined_block(body, *bindings, *result);
                joined.len().hash(&mut h);
                for &(v, _) in &joined {
                    var_number(v, &mut h);
                }
                stack.push(result);
                stack.extend(joined.iter().rev().map(|&(_, value)| value));
                continue;
            }
            Node::Closure(c) => {
                let data = body.closure(*c);
                (&data.ret_type, &data.attrs, data.params.len()).hash(&mut h);
                for &p in &data.params {
                    var_number(p, &mut h);
                }
            }
        }
        let at = stack.len();
        body.for_each_operand(e, |o| stack.push(o));
        stack[at..].reverse();
    }
    h.finish()
}

/// The bindings of the block `bindings; result` joined with those of the blocks nested in its
/// body position, and the innermost result.
fn joined_block(body: &Body, bindings: List, mut result: ExprId) -> (Vec<(VarId, ExprId)>, ExprId) {
    let mut joined = body.bindings(bindings).to_vec();
    while let Node::Let {
        bindings,
        body: inner,
    } = body.node(result)
    {
        joined.extend_from_slice(body.bindings(*bindings));
        result = *inner;
    }
    (joined, result)
}

struct Matcher<'a> {
    a: &'a Body,
    b: &'a Body,
    /// The node map, both ways (a bijection).
    exprs: (Vec<Option<ExprId>>, Vec<Option<ExprId>>),
    /// The variable map, both ways.
    vars: (Vec<Option<VarId>>, Vec<Option<VarId>>),
    stack: Vec<(ExprId, ExprId)>,
}

impl Matcher<'_> {
    /// Maps variable `x` of `a` to `y` of `b`, or checks that they are mapped to each other.
    fn var_pair(&mut self, x: VarId, y: VarId) -> bool {
        match (self.vars.0[x.index()], self.vars.1[y.index()]) {
            (Some(my), Some(mx)) => my == y && mx == x,
            (None, None) => {
                self.vars.0[x.index()] = Some(y);
                self.vars.1[y.index()] = Some(x);
                self.a.var(x).annotation == self.b.var(y).annotation
            }
            _ => false,
        }
    }

    /// Maps node `x` to `y` and queues their operands, or checks an existing mapping.
    fn pair(&mut self, x: ExprId, y: ExprId) -> bool {
        match (self.exprs.0[x.index()], self.exprs.1[y.index()]) {
            (Some(my), Some(mx)) => return my == y && mx == x,
            (None, None) => {}
            _ => return false,
        }
        self.exprs.0[x.index()] = Some(y);
        self.exprs.1[y.index()] = Some(x);
        let (a, b) = (self.a, self.b);
        let lists = |p: List, q: List, stack: &mut Vec<(ExprId, ExprId)>| {
            let (p, q) = (a.list(p), b.list(q));
            stack.extend(p.iter().copied().zip(q.iter().copied()));
            p.len() == q.len()
        };
        match (a.node(x), b.node(y)) {
            (Node::Var(v), Node::Var(w)) => self.var_pair(*v, *w),
            (Node::Global(g), Node::Global(h)) => a.global(*g) == b.global(*h),
            (Node::Constant(k), Node::Constant(l)) => a.constant(*k).bit_eq(b.constant(*l)),
            (
                Node::CallOp { sig, args },
                Node::CallOp {
                    sig: sig2,
                    args: args2,
                },
            ) => {
                let (p, q) = (a.sig(*sig), b.sig(*sig2));
                p.op == q.op
                    && a.attrs(p.attrs) == b.attrs(q.attrs)
                    && lists(*args, *args2, &mut self.stack)
            }
            (
                Node::Call { callee, args },
                Node::Call {
                    callee: callee2,
                    args: args2,
                },
            ) => {
                self.stack.push((*callee, *callee2));
                lists(*args, *args2, &mut self.stack)
            }
            (Node::Tuple(p), Node::Tuple(q)) => lists(*p, *q, &mut self.stack),
            (Node::Proj(t, i), Node::Proj(u, j)) => {
                self.stack.push((*t, *u));
                i == j
            }
            (Node::If(c, t, o), Node::If(c2, t2, o2)) => {
                self.stack.extend([(*c, *c2), (*t, *t2), (*o, *o2)]);
                true
            }
            (
                Node::Let { bindings, body },
                Node::Let {
                    bindings: bindings2,
                    body: body2,
                },
            ) => {
                let (p, body) = joined_block(a, *bindings, *body);
                let (q, body2) = joined_block(b, *bindings2, *body2);
                let (body, body2) = (&body, &body2);
                if p.len() != q.len() {
                    return false;
                }
                for (&(v, e), &(w, f)) in p.iter().zip(&q) {
                    if !self.var_pair(v, w) {
                        return false;
                    }
                    self.stack.push((e, f));
                }
                self.stack.push((*body, *body2));
                true
            }
            (Node::Closure(c), Node::Closure(d)) => {
                let (p, q) = (a.closure(*c), b.closure(*d));
                if p.params.len() != q.params.len()
                    || p.ret_type != q.ret_type
                    || p.attrs != q.attrs
                {
                    return false;
                }
                for (&v, &w) in p.params.iter().zip(&q.params) {
                    if !self.var_pair(v, w) {
                        return false;
                    }
                }
                self.stack.push((p.body, q.body));
                true
            }
            _ => false,
        }
    }
}
