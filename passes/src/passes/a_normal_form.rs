//! `ToANormalForm`: the pass and its rewrite of a function's code.

use irpass::{PassContext, function_pass};
use irpass_ir::{Function, Module};

use irpass_ir::body::{ArenaFunction, Body, BodyBuilder, ClosureData, ExprId, Idx, Node, VarId};

/// Binds every intermediate value to a `let`, in evaluation order, so that each computation
/// has a name and happens once: A-normal form. A value shared by several places is bound once,
/// in the innermost scope (function body, `if` branch) that contains all its uses.
#[function_pass(opt_level = 0, name = "ToANormalForm")]
pub fn transform(func: Function, _module: &Module, _ctx: &PassContext) -> Function {
    func.with_code(Some(to_a_normal_form(&func.code)))
}

/// Binds every intermediate value and constant to a `let`, in evaluation order, as the
/// registered `ToANormalForm`: each value shared by several places is bound once, in the innermost scope
/// (function body, `if` branch, closure body) that contains all its uses. Always returns the
/// new function.
pub fn to_a_normal_form(f: &ArenaFunction) -> ArenaFunction {
    let mut anf = Anf::new(&f.body);
    let root = anf.new_scope(0, None);
    anf.walk(f.root, Use::Scope(root), root);
    anf.find_binders();
    anf.settle();
    let order = std::mem::take(&mut anf.order);
    for step in &order {
        anf.emit(step);
    }
    let root = anf.close(root, f.root);
    ArenaFunction {
        body: anf.b.finish(),
        params: f.params.clone(),
        root,
    }
}

/// A step of the evaluation order: a node to bind, or the point where a block binds its
/// `i`th variable (after its value, before the later bindings and the body).
enum Step {
    Node(ExprId),
    Let(ExprId, usize),
}

/// Where a node is used: by another node (it lives in that node's scope), or as the result of
/// a scope (a branch of an `if`, a closure's body, the function's body).
#[derive(Clone, Copy)]
enum Use {
    Node(ExprId),
    Scope(usize),
}

/// The walk's work: a use to record (and a node to visit the first time), a step of the
/// order, or the branches of an `if` (after its condition).
enum Task {
    Use(ExprId, Use, usize),
    Order(Step),
    Branches(ExprId, usize),
}

struct Anf<'b> {
    old: &'b Body,
    b: BodyBuilder,
    /// Each scope's parent (the root is its own parent).
    parents: Vec<usize>,
    /// The node that owns each scope: the `if` or closure it belongs to.
    owners: Vec<Option<ExprId>>,
    /// Scope of each bound node.
    scope: Vec<Option<usize>>,
    /// Where each node is used.
    uses: Vec<Vec<Use>>,
    /// The scopes of each `if` (then, else) and closure (body, body).
    child_scopes: Vec<Option<(usize, usize)>>,
    order: Vec<Step>,
    seen: Vec<bool>,
    /// The atom (of the new body) each processed node is referred to by.
    atoms: Vec<Option<ExprId>>,
    /// Bindings emitted per scope, in order.
    lets: Vec<Vec<(VarId, ExprId)>>,
    /// For a value that a `let` binds and nothing else uses, the `let`'s variable: the value
    /// is bound to it directly, not to a fresh variable copied into it (which made the pass
    /// add a copy on every run, and left a recursive closure's own name unbound in its body).
    binder: Vec<Option<VarId>>,
    counter: usize,
}

/// What is used as it is, never bound: variables and globals. (Constants are bound, as TVM
/// binds them: `1 + 2` becomes `let %x1 = 1; let %x2 = 2; let %x3 = add(%x1, %x2); %x3`.)
fn is_atom(b: &Body, e: ExprId) -> bool {
    matches!(b.node(e), Node::Var(_) | Node::Global(_))
}

impl<'b> Anf<'b> {
    fn new(old: &'b Body) -> Self {
        let n = old.len();
        Anf {
            old,
            b: BodyBuilder::for_rewrite_of(old),
            parents: Vec::new(),
            owners: Vec::new(),
            scope: vec![None; n],
            uses: vec![Vec::new(); n],
            child_scopes: vec![None; n],
            order: Vec::new(),
            seen: vec![false; n],
            atoms: vec![None; n],
            lets: Vec::new(),
            binder: vec![None; n],
            counter: 0,
        }
    }

    /// Fills `binder`: each `let` binding whose value is not an atom and has no other use.
    fn find_binders(&mut self) {
        let old = self.old;
        for e in old.ids().filter(|e| self.seen[e.index()]) {
            let Node::Let { bindings, .. } = old.node(e) else {
                continue;
            };
            for &(v, value) in old.bindings(*bindings) {
                let only_here = matches!(self.uses[value.index()][..], [Use::Node(p)] if p == e);
                if !is_atom(old, value) && only_here && self.binder[value.index()].is_none() {
                    self.binder[value.index()] = Some(v);
                }
            }
        }
    }

    fn new_scope(&mut self, parent: usize, owner: Option<ExprId>) -> usize {
        self.parents.push(parent);
        self.owners.push(owner);
        self.lets.push(Vec::new());
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

    /// Records every use below `root` and the evaluation order, depth first, with an explicit
    /// stack.
    fn walk(&mut self, root: ExprId, site: Use, s: usize) {
        let old = self.old;
        let mut tasks = vec![Task::Use(root, site, s)];
        while let Some(task) = tasks.pop() {
            match task {
                Task::Order(step) => self.order.push(step),
                Task::Branches(e, s) => {
                    let Node::If(_, t, o) = *old.node(e) else {
                        unreachable!("an if")
                    };
                    let (st, so) = (self.new_scope(s, Some(e)), self.new_scope(s, Some(e)));
                    self.child_scopes[e.index()] = Some((st, so));
                    tasks.push(Task::Order(Step::Node(e)));
                    tasks.push(Task::Use(o, Use::Scope(so), so));
                    tasks.push(Task::Use(t, Use::Scope(st), st));
                }
                Task::Use(e, site, s) => {
                    if is_atom(old, e) {
                        continue;
                    }
                    self.uses[e.index()].push(site);
                    self.scope[e.index()].get_or_insert(s);
                    if std::mem::replace(&mut self.seen[e.index()], true) {
                        continue;
                    }
                    let me = Use::Node(e);
                    match old.node(e) {
                        Node::Let { bindings, body } => {
                            tasks.push(Task::Order(Step::Node(e)));
                            tasks.push(Task::Use(*body, me, s));
                            for (i, &(_, value)) in old.bindings(*bindings).iter().enumerate().rev()
                            {
                                tasks.push(Task::Order(Step::Let(e, i)));
                                tasks.push(Task::Use(value, me, s));
                            }
                        }
                        Node::If(c, _, _) => {
                            tasks.push(Task::Branches(e, s));
                            tasks.push(Task::Use(*c, me, s));
                        }
                        Node::Closure(c) => {
                            let sb = self.new_scope(s, Some(e));
                            self.child_scopes[e.index()] = Some((sb, sb));
                            tasks.push(Task::Order(Step::Node(e)));
                            tasks.push(Task::Use(old.closure(*c).body, Use::Scope(sb), sb));
                        }
                        _ => {
                            tasks.push(Task::Order(Step::Node(e)));
                            let mut ops = Vec::new();
                            old.for_each_operand(e, |o| ops.push(o));
                            tasks.extend(ops.into_iter().rev().map(|o| Task::Use(o, me, s)));
                        }
                    }
                }
            }
        }
    }

    /// Places every node in the innermost scope that contains all its uses, and every branch
    /// or closure scope under the scope of its owner, repeating until nothing moves.
    fn settle(&mut self) {
        loop {
            let mut changed = false;
            for s in 0..self.parents.len() {
                if let Some(owner) = self.owners[s] {
                    let p = self.scope[owner.index()].unwrap_or(0);
                    if self.parents[s] != p {
                        self.parents[s] = p;
                        changed = true;
                    }
                }
            }
            for step in &self.order {
                let (Step::Node(e) | Step::Let(e, _)) = *step;
                let uses = &self.uses[e.index()];
                if uses.is_empty() {
                    continue;
                }
                let mut best: Option<usize> = None;
                for u in uses {
                    let s = match *u {
                        Use::Node(p) => self.scope[p.index()].unwrap_or(0),
                        Use::Scope(s) => s,
                    };
                    best = Some(match best {
                        Some(b) => self.lca(b, s),
                        None => s,
                    });
                }
                if let Some(b) = best
                    && self.scope[e.index()] != Some(b)
                {
                    self.scope[e.index()] = Some(b);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// The atom of the new body that old node `e` is referred to by.
    fn atom(&mut self, e: ExprId) -> ExprId {
        let old = self.old;
        let new = match old.node(e) {
            Node::Var(v) => return self.b.use_var(*v),
            Node::Global(g) => self.b.global(old.global(*g)),
            _ => return self.atoms[e.index()].expect("bound before its uses"),
        };
        self.b.set_span(new, old.span(e));
        new
    }

    /// The body of scope `s` ending in `result`: its bindings as `let`s.
    fn close(&mut self, s: usize, result: ExprId) -> ExprId {
        let body = self.atom(result);
        let lets = std::mem::take(&mut self.lets[s]);
        self.b.lets(&lets, body)
    }

    fn emit(&mut self, step: &Step) {
        let old = self.old;
        match *step {
            Step::Let(e, i) => {
                let Node::Let { bindings, .. } = old.node(e) else {
                    return;
                };
                let (v, value) = old.bindings(*bindings)[i];
                if self.binder[value.index()] == Some(v) {
                    return; // The value was bound to `v` itself.
                }
                let s = self.scope[e.index()].expect("placed");
                let atom = self.atom(value);
                self.lets[s].push((v, atom));
            }
            Step::Node(e) => {
                let s = self.scope[e.index()].expect("placed");
                let value = match old.node(e) {
                    Node::Let { body, .. } => {
                        let a = self.atom(*body);
                        self.atoms[e.index()] = Some(a);
                        return;
                    }
                    Node::CallOp { .. } => {
                        let (op, args, attrs) = old.op_call(e).expect("a call");
                        let args: Vec<ExprId> = args.iter().map(|&a| self.atom(a)).collect();
                        self.b.call_op(op, &args, attrs.clone())
                    }
                    Node::Call { callee, args } => {
                        let callee = self.atom(*callee);
                        let args: Vec<ExprId> =
                            old.list(*args).iter().map(|&a| self.atom(a)).collect();
                        self.b.call(callee, &args)
                    }
                    Node::Tuple(fields) => {
                        let fields: Vec<ExprId> =
                            old.list(*fields).iter().map(|&a| self.atom(a)).collect();
                        self.b.tuple(&fields)
                    }
                    Node::Proj(t, i) => {
                        let t = self.atom(*t);
                        self.b.proj(t, *i)
                    }
                    Node::If(c, t, o) => {
                        let (st, so) = self.child_scopes[e.index()].expect("its scopes");
                        let then = self.close(st, *t);
                        let other = self.close(so, *o);
                        let c = self.atom(*c);
                        self.b.if_(c, then, other)
                    }
                    Node::Closure(c) => {
                        let (sb, _) = self.child_scopes[e.index()].expect("its scope");
                        let data = old.closure(*c);
                        let body = self.close(sb, data.body);
                        self.b.closure(ClosureData {
                            params: data.params.clone(),
                            ret_type: data.ret_type.clone(),
                            attrs: data.attrs.clone(),
                            body,
                        })
                    }
                    Node::Constant(k) => {
                        let c = self
                            .b
                            .constant_hashed(old.constant(*k).clone(), old.constant_hash(*k));
                        self.b.set_span(c, old.span(e));
                        c
                    }
                    Node::Var(_) | Node::Global(_) => return,
                };
                let v = match self.binder[e.index()] {
                    Some(v) => v,
                    None => {
                        self.counter += 1;
                        self.b.var(&format!("x{}", self.counter), None, None)
                    }
                };
                self.lets[s].push((v, value));
                let a = self.b.use_var(v);
                self.atoms[e.index()] = Some(a);
            }
        }
    }
}
