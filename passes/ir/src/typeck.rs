//! Type inference by unification, with operators' type relations solved as soon as their
//! argument types are known. Results are recorded on the nodes (`checked_type()`).

use std::sync::Arc;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::error::{ErrorKind, IrError, Problem};
use super::expr::with_stack;
use super::op::Op;
use super::{Attrs, Call, Callee, DType, Dim, Expr, ExprKind, Span, TensorType, Type, Var, VarMap};
use crate::expr::Function;
use crate::module::Module;

/// A type during inference: `Var` is an unknown to be solved.
#[derive(Clone, Debug)]
enum T {
    /// Shared: types are cloned a lot during inference.
    Tensor(Arc<TensorType>),
    Tuple(Vec<T>),
    Func(Vec<T>, Box<T>),
    Var(usize),
}

struct Pending {
    op: Op,
    args: Vec<T>,
    attrs: Attrs,
    out: T,
    span: Option<Span>,
}

struct Proj {
    tuple: T,
    index: usize,
    out: T,
    span: Option<Span>,
}

struct Infer<'m> {
    module: &'m Module,
    subst: Vec<Option<T>>,
    vars: VarMap<T>,
    globals: HashMap<String, T>,
    /// Argument types for a relation (kept to reuse its allocation).
    scratch: Vec<Type>,
    /// The argument types of the calls being typed, innermost last (one stack instead of a
    /// vector per call).
    args: Vec<T>,
    /// The tensor types met in the function being typed, so that equal types are one `Arc`:
    /// most nodes have the type of their operands, so the recorded types then cost a count
    /// increment each instead of an allocation, and stay in cache. Cleared per top-level
    /// function, so that functions share no count that parallel passes would contend on.
    tensor_types: HashSet<Arc<TensorType>>,
    /// Shared nodes (more than one parent) already typed, by address.
    memo: HashMap<usize, T>,
    /// Nodes whose type was not fully known when visited, to record when inference succeeds
    /// (the others are recorded at once, while the node is in cache).
    nodes: Vec<(Expr, T)>,
    funcs: Vec<(Function, T)>,
    /// Variables whose type was not fully known when bound, likewise.
    binders: Vec<(Var, T)>,
    pending: Vec<Pending>,
    projs: Vec<Proj>,
    problems: Vec<Problem>,
    /// Whether a node typed by an earlier inference, that mentions no global, can be taken at
    /// its recorded type without visiting it (see [`Infer::trusted`]): off when checking from
    /// scratch, and inside a function with a parameter whose type is not fixed.
    trust: bool,
    /// Whether a global occurred in the node being typed (so far), to record on it.
    saw_global: bool,
    /// Whether this inference is incremental, for the whole run (`trust` starts equal and is
    /// switched off inside functions that cannot trust): then a binding may have been skipped
    /// (see [`Infer::binding`]), and its variable is read at its recorded type.
    incremental: bool,
    /// The nodes visited (not taken at their recorded type), for the tests.
    #[cfg(test)]
    visited: usize,
}

/// Infers the types of every function of `m` and records them on the nodes.
///
/// Incremental: a node typed by an earlier inference keeps its type as long as it mentions no
/// global (a node's type then depends only on the nodes below it and on the variables it uses,
/// whose types never change once recorded), so after a pass only the nodes it built and the
/// ones above them are visited. [`check_module`] types everything from scratch.
pub fn infer_module(m: &Module) -> Result<(), IrError> {
    infer(m, true)
}

/// Infers the types of every node of `m` from scratch, as if none had been typed before, and
/// checks that every type recorded before agrees with the new one (a pass that changes what a
/// node or variable computes must build a new one: a recorded type never changes).
pub fn check_module(m: &Module) -> Result<(), IrError> {
    infer(m, false)
}

fn infer(m: &Module, trust: bool) -> Result<(), IrError> {
    type_functions(m, trust).finish()
}

/// Types every function of `m`; [`Infer::finish`] gives the outcome.
fn type_functions(m: &Module, trust: bool) -> Infer<'_> {
    let mut inf = Infer::new(m, trust);
    for (name, f) in m.iter() {
        let t = inf.signature(f);
        inf.globals.insert(name.to_string(), t);
    }
    for (name, f) in m.iter() {
        inf.tensor_types.clear();
        let declared = inf.globals[name].clone();
        let t = with_stack(|| inf.function(f));
        inf.unify(&declared, &t, f.span, || format!("the type of `@{name}`"));
    }
    inf
}

/// Infers the type of a closed expression (free variables must be annotated).
pub fn infer_expr(e: &Expr) -> Result<Type, IrError> {
    let module = Module::new();
    let mut inf = Infer::new(&module, true);
    let t = with_stack(|| inf.expr(e));
    inf.solve();
    let out = inf.zonk(&t);
    inf.finish()?;
    Ok(out)
}

fn bool_scalar() -> T {
    T::Tensor(Arc::new(TensorType::scalar(DType::Bool)))
}

impl<'m> Infer<'m> {
    /// An inference over `module`, incremental or from scratch.
    fn new(module: &'m Module, incremental: bool) -> Self {
        Infer {
            module,
            subst: Vec::new(),
            vars: VarMap::default(),
            globals: HashMap::default(),
            scratch: Vec::new(),
            args: Vec::new(),
            tensor_types: HashSet::default(),
            memo: HashMap::default(),
            nodes: Vec::new(),
            funcs: Vec::new(),
            binders: Vec::new(),
            pending: Vec::new(),
            projs: Vec::new(),
            problems: Vec::new(),
            trust: incremental,
            saw_global: false,
            incremental,
            #[cfg(test)]
            visited: 0,
        }
    }

    fn fresh(&mut self) -> T {
        self.subst.push(None);
        T::Var(self.subst.len() - 1)
    }

    fn problem(&mut self, message: String, span: Option<Span>) {
        if self.problems.len() < 20 {
            self.problems.push(Problem {
                message,
                span,
                note: None,
            });
        }
    }

    /// The one `Arc` of the function for tensor type `tt`; `make` gives it when `tt` is new
    /// (so a caller holding `tt` by value allocates an `Arc` only then).
    fn intern(
        &mut self,
        tt: &TensorType,
        make: impl FnOnce() -> Arc<TensorType>,
    ) -> Arc<TensorType> {
        if let Some(known) = self.tensor_types.get(tt) {
            return known.clone();
        }
        let shared = make();
        self.tensor_types.insert(shared.clone());
        shared
    }

    /// A written type, `_` parts becoming unknowns.
    fn lift(&mut self, t: &Type) -> T {
        match t {
            Type::Tensor(tt) => T::Tensor(self.intern(tt, || tt.clone())),
            Type::Tuple(fields) => T::Tuple(fields.iter().map(|f| self.lift(f)).collect()),
            Type::Func(f) => {
                let params = f.params.iter().map(|p| self.lift(p)).collect();
                T::Func(params, Box::new(self.lift(&f.ret)))
            }
            Type::Unknown => self.fresh(),
        }
    }

    fn annotation(&mut self, ann: &Option<Type>) -> T {
        match ann {
            Some(t) => self.lift(t),
            None => self.fresh(),
        }
    }

    /// `t` with solved unknowns at its head followed (borrowed: no count is touched).
    fn head<'a>(&'a self, mut t: &'a T) -> &'a T {
        while let T::Var(v) = t {
            match &self.subst[*v] {
                Some(s) => t = s,
                None => return t,
            }
        }
        t
    }

    fn resolve(&self, t: &T) -> T {
        self.head(t).clone()
    }

    /// `t` with every solved unknown replaced; `None` where still unknown.
    fn concrete(&self, t: &T) -> Option<Type> {
        match self.head(t) {
            T::Tensor(tt) => Some(Type::Tensor(tt.clone())),
            T::Tuple(fields) => fields
                .iter()
                .map(|f| self.concrete(f))
                .collect::<Option<Vec<_>>>()
                .map(Type::Tuple),
            T::Func(params, ret) => {
                let params = params
                    .iter()
                    .map(|p| self.concrete(p))
                    .collect::<Option<Vec<_>>>()?;
                Some(Type::func(params, self.concrete(ret)?))
            }
            T::Var(_) => None,
        }
    }

    /// `t` with unknowns left as `_`.
    fn zonk(&self, t: &T) -> Type {
        match self.head(t) {
            T::Tensor(tt) => Type::Tensor(tt.clone()),
            T::Tuple(fields) => Type::Tuple(fields.iter().map(|f| self.zonk(f)).collect()),
            T::Func(params, ret) => Type::func(
                params.iter().map(|p| self.zonk(p)).collect(),
                self.zonk(ret),
            ),
            T::Var(_) => Type::Unknown,
        }
    }

    fn occurs(&self, v: usize, t: &T) -> bool {
        match self.head(t) {
            T::Var(w) => v == *w,
            T::Tensor(_) => false,
            T::Tuple(fields) => fields.iter().any(|f| self.occurs(v, f)),
            T::Func(params, ret) => params.iter().any(|p| self.occurs(v, p)) || self.occurs(v, ret),
        }
    }

    /// Unifies `a` and `b`; on a mismatch, reports `what` (built only then) with both types.
    fn unify(&mut self, a: &T, b: &T, span: Option<Span>, what: impl FnOnce() -> String) -> bool {
        match self.unify_inner(a, b) {
            Ok(()) => true,
            Err(detail) => {
                let (ea, eb) = (self.zonk(a), self.zonk(b));
                self.problem(
                    format!("{}: expected `{ea}`, found `{eb}`{detail}", what()),
                    span,
                );
                false
            }
        }
    }

    fn unify_inner(&mut self, a: &T, b: &T) -> Result<(), String> {
        if let (T::Tensor(p), T::Tensor(q)) = (self.head(a), self.head(b)) {
            if Arc::ptr_eq(p, q) {
                return Ok(()); // one shared type: the common case
            }
        }
        let (a, b) = (self.resolve(a), self.resolve(b));
        match (&a, &b) {
            (T::Var(x), T::Var(y)) if x == y => Ok(()),
            (T::Var(x), other) | (other, T::Var(x)) => {
                if self.occurs(*x, other) {
                    return Err(" (a type cannot contain itself)".into());
                }
                self.subst[*x] = Some(other.clone());
                Ok(())
            }
            (T::Tensor(p), T::Tensor(q)) => {
                if p.dtype != q.dtype {
                    return Err(format!(" (dtype {} vs {})", p.dtype, q.dtype));
                }
                if p.rank() != q.rank() {
                    return Err(format!(" (rank {} vs {})", p.rank(), q.rank()));
                }
                for (i, (x, y)) in p.shape.iter().zip(&q.shape).enumerate() {
                    if let (Dim::Static(x), Dim::Static(y)) = (x, y) {
                        if x != y {
                            return Err(format!(" (dimension {i}: {x} vs {y})"));
                        }
                    }
                }
                Ok(())
            }
            (T::Tuple(p), T::Tuple(q)) => {
                if p.len() != q.len() {
                    return Err(format!(" ({} fields vs {})", p.len(), q.len()));
                }
                for (x, y) in p.iter().zip(q) {
                    self.unify_inner(x, y)?;
                }
                Ok(())
            }
            (T::Func(pa, ra), T::Func(pb, rb)) => {
                if pa.len() != pb.len() {
                    return Err(format!(" ({} parameters vs {})", pa.len(), pb.len()));
                }
                for (x, y) in pa.iter().zip(pb) {
                    self.unify_inner(x, y)?;
                }
                self.unify_inner(ra, rb)
            }
            _ => Err(String::new()),
        }
    }

    fn signature(&mut self, f: &Function) -> T {
        let params = f
            .params
            .iter()
            .map(|p| self.annotation(&p.annotation))
            .collect();
        let ret = self.annotation(&f.ret_type);
        T::Func(params, Box::new(ret))
    }

    fn function(&mut self, f: &Function) -> T {
        // Typed nodes are trusted only where every variable has a fixed type: a parameter
        // without one is inferred from its uses, all of which must then be visited.
        let outer_trust = self.trust;
        self.trust = outer_trust && f.params.iter().all(|p| p.ty().is_some());
        let mut params = Vec::with_capacity(f.params.len());
        for p in &f.params {
            let t = match p.ty() {
                Some(ty) if self.trust => self.lift(ty),
                _ => self.annotation(&p.annotation),
            };
            self.vars.insert(p.id(), t.clone());
            params.push(t);
        }
        let ret = self.annotation(&f.ret_type);
        let body = self.expr(&f.body);
        self.unify(&ret, &body, operand_span(&f.body, f.span), || {
            "the function's body does not have its declared result type".to_string()
        });
        // Recorded only if inference succeeds: a recorded parameter type lets later
        // inferences trust the function's typed nodes.
        for (p, t) in f.params.iter().zip(&params) {
            self.binders.push((p.clone(), t.clone()));
        }
        self.trust = outer_trust;
        let t = T::Func(params, Box::new(ret));
        self.funcs.push((f.clone(), t.clone()));
        t
    }

    /// The recorded type of `e`, if inference can take it without visiting `e`: typed before,
    /// completely, mentioning no global, in a function whose variables have fixed types.
    fn trusted(&mut self, e: &Expr) -> Option<T> {
        let ty = self.trusted_type(e)?;
        Some(self.reuse(ty))
    }

    /// The type [`Infer::trusted`] takes for `e`, if any.
    fn trusted_type<'e>(&self, e: &'e Expr) -> Option<&'e Type> {
        if !self.trust || e.mentions_global() != Some(false) {
            return None;
        }
        e.checked_type().filter(|t| t.is_complete())
    }

    /// [`Infer::lift`] for a recorded type: its tensor types were interned by the inference
    /// that recorded them, so they are shared as they are instead of looked up again.
    fn reuse(&mut self, t: &Type) -> T {
        match t {
            Type::Tensor(tt) => T::Tensor(tt.clone()),
            Type::Tuple(fields) => T::Tuple(fields.iter().map(|f| self.reuse(f)).collect()),
            Type::Func(f) => {
                let params = f.params.iter().map(|p| self.reuse(p)).collect();
                T::Func(params, Box::new(self.reuse(&f.ret)))
            }
            Type::Unknown => self.fresh(),
        }
    }

    /// The type of shared node `e` if this inference has typed it already; a global below it
    /// counts for the node being typed.
    fn memoised(&mut self, e: &Expr) -> Option<T> {
        let t = self.memo.get(&e.addr())?.clone();
        self.saw_global |= e.mentions_global() != Some(false);
        Some(t)
    }

    fn expr(&mut self, e: &Expr) -> T {
        if let Some(t) = self.trusted(e) {
            return t;
        }
        // A node with one parent is reached once, and a variable is looked up in the variable
        // table at each use: only the others need the memo.
        let shared = e.needs_memo();
        if shared {
            if let Some(t) = self.memoised(e) {
                return t;
            }
        }
        #[cfg(test)]
        {
            self.visited += 1;
        }
        let outer = std::mem::take(&mut self.saw_global);
        let t = if let ExprKind::Let(..) = e.kind {
            self.let_chain(e, shared)
        } else {
            let t = with_stack(|| self.expr_inner(e));
            if shared {
                self.memo.insert(e.addr(), t.clone());
            }
            self.record_expr(e, &t);
            e.set_mentions_global(self.saw_global);
            t
        };
        self.saw_global |= outer;
        t
    }

    /// Records the type of `e` now if it is fully known (a type once known never changes), or
    /// keeps it for [`Infer::finish`].
    fn record_expr(&mut self, e: &Expr, t: &T) {
        match self.concrete(t) {
            Some(ty) => self.set_expr_type(e, ty),
            None => self.nodes.push((e.clone(), t.clone())),
        }
    }

    /// [`Infer::record_expr`] for a variable.
    fn record_var(&mut self, v: &Var, t: &T) {
        match self.concrete(t) {
            Some(ty) => self.set_var_type(v, ty),
            None => self.binders.push((v.clone(), t.clone())),
        }
    }

    /// Records `ty` on `e`, or reports that it differs from the type recorded before.
    fn set_expr_type(&mut self, e: &Expr, ty: Type) {
        if let Err((was, now)) = e.record_type(ty) {
            self.changed_type("this expression", was, &now, e.span);
        }
    }

    /// [`Infer::set_expr_type`] for a variable.
    fn set_var_type(&mut self, v: &Var, ty: Type) {
        if let Err((was, now)) = v.record_type(ty) {
            self.changed_type(&format!("`%{}`", v.name), was, &now, v.span());
        }
    }

    /// The problem of a node, variable or function whose new type differs from the one
    /// recorded before.
    fn changed_type(&mut self, what: &str, was: &Type, now: &Type, span: Option<Span>) {
        self.problem(
            format!(
                "{what} was typed `{was}` before and is now `{now}`: a type once recorded never \
                 changes (a pass that changes what a variable or node computes must make a new one)"
            ),
            span,
        );
    }

    /// One binding of a block written at `span`: the variable gets its value's type, or its
    /// annotation, which the value must have.
    fn binding(&mut self, v: &Var, value: &Expr, span: Option<Span>) {
        if v.annotation.is_none()
            && v.checked_type()
                .is_some_and(|vt| self.trusted_type(value) == Some(vt))
        {
            // A trusted value bound to a variable recorded with its type: nothing to check or
            // record, and the variable is not entered in `vars` (its uses read its recorded
            // type, see `expr_inner`). On a block of 10⁴ bindings of which a pass changed a
            // few, this is most of them.
            return;
        }
        let vt = if v.annotation.is_none() && !matches!(value.kind, ExprKind::Function(_)) {
            // Not annotated and not a (possibly recursive) function: the variable has its
            // value's type, and is not in scope in its value.
            let xt = self.expr(value);
            self.vars.insert(v.id(), xt.clone());
            xt
        } else {
            let vt = self.annotation(&v.annotation);
            self.vars.insert(v.id(), vt.clone());
            let xt = self.expr(value);
            self.unify(&vt, &xt, operand_span(value, v.span().or(span)), || {
                format!("the value of `%{}` does not have its declared type", v.name)
            });
            vt
        };
        self.record_var(v, &vt);
    }

    /// A block of bindings and the blocks in its body position, in a loop (not recursing per
    /// nested block): each binding in order, then the final body, whose type is the type of
    /// every block of the chain. `first_shared` says whether `first` is shared (counted before
    /// any clone of it was made).
    fn let_chain(&mut self, first: &Expr, first_shared: bool) -> T {
        let mut spine: Vec<(&Expr, bool)> = Vec::new();
        let mut cur = first;
        let mut shared = first_shared;
        let t = loop {
            let ExprKind::Let(bindings, body) = &cur.kind else {
                break self.expr(cur);
            };
            if !spine.is_empty() {
                if let Some(t) = self.trusted(cur) {
                    break t;
                }
                if shared {
                    if let Some(t) = self.memoised(cur) {
                        break t;
                    }
                }
            }
            for (v, value) in bindings {
                self.binding(v, value, cur.span);
            }
            spine.push((cur, shared));
            cur = body;
            shared = cur.is_shared();
        };
        // Each block gets the flag of the whole chain: at worst too cautious for the later
        // blocks, which are reached through the first anyway.
        for (node, shared) in spine {
            if shared {
                self.memo.insert(node.addr(), t.clone());
            }
            self.record_expr(node, &t);
            node.set_mentions_global(self.saw_global);
        }
        t
    }

    fn expr_inner(&mut self, e: &Expr) -> T {
        match &e.kind {
            ExprKind::Var(v) => {
                if let Some(t) = self.vars.get(&v.id()) {
                    return t.clone();
                }
                // Bound by a binding that `binding` took at its recorded type.
                let recorded = e.checked_type().filter(|t| t.is_complete());
                if let Some(ty) = recorded.filter(|_| self.incremental) {
                    return self.reuse(ty);
                }
                // A free variable: its annotation, else unknown.
                let t = self.annotation(&v.annotation);
                self.vars.insert(v.id(), t.clone());
                if let Some(var) = e.as_var() {
                    self.record_var(&var, &t);
                }
                t
            }
            ExprKind::GlobalVar(name) => {
                self.saw_global = true;
                match self.globals.get(name) {
                    Some(t) => t.clone(),
                    None => {
                        let msg = if self.module.get(name).is_none() {
                            format!("`@{name}` is not defined in the module")
                        } else {
                            format!("`@{name}` has no type")
                        };
                        self.problem(msg, e.span);
                        self.fresh()
                    }
                }
            }
            ExprKind::Constant(t) => {
                let tt = t.tensor_type();
                T::Tensor(self.intern(&tt, || Arc::new(tt.clone())))
            }
            ExprKind::Call(call) => {
                let base = self.args.len();
                for a in &call.args {
                    let t = self.expr(a);
                    self.args.push(t);
                }
                let t = self.call(e, call, base);
                self.args.truncate(base);
                t
            }
            // `Infer::expr` hands every `let` to `let_chain` before coming here.
            ExprKind::Let(..) => unreachable!("let chains are typed by `Infer::let_chain`"),
            ExprKind::Tuple(fields) => T::Tuple(fields.iter().map(|f| self.expr(f)).collect()),
            ExprKind::TupleGetItem(t, index) => {
                let tt = self.expr(t);
                let out = self.fresh();
                let p = Proj {
                    tuple: tt,
                    index: *index,
                    out: out.clone(),
                    span: e.span,
                };
                if !self.try_proj(&p) {
                    self.projs.push(p);
                }
                out
            }
            ExprKind::If(c, t, o) => {
                let ct = self.expr(c);
                self.unify(&bool_scalar(), &ct, operand_span(c, e.span), || {
                    "the condition of `if` must be a bool scalar".to_string()
                });
                let tt = self.expr(t);
                let ot = self.expr(o);
                self.unify(&tt, &ot, operand_span(o, e.span), || {
                    "the branches of `if` have different types".to_string()
                });
                tt
            }
            ExprKind::Function(f) => self.function(f),
        }
    }

    /// The type of call `e` (to `call`), whose argument types are `self.args[base..]`.
    fn call(&mut self, e: &Expr, call: &Call, base: usize) -> T {
        match &call.callee {
            Callee::Op(op) => {
                if let Err(msg) = op.check_arity(self.args.len() - base) {
                    self.problem(msg, e.span);
                    return self.fresh();
                }
                // All argument types known (the common case): the relation's result
                // is the type, with no unknown to solve later.
                if let Some(t) = self.relation_now(*op, base, &call.attrs, e.span) {
                    return t;
                }
                let out = self.fresh();
                let p = Pending {
                    op: *op,
                    args: self.args[base..].to_vec(),
                    attrs: call.attrs.clone(),
                    out: out.clone(),
                    span: e.span,
                };
                if !self.try_relation(&p) {
                    self.pending.push(p);
                }
                out
            }
            Callee::Expr(f) => {
                let ft = self.expr(f);
                let ret = self.fresh();
                let want = T::Func(self.args[base..].to_vec(), Box::new(ret.clone()));
                let ft_r = self.resolve(&ft);
                if let T::Func(params, _) = &ft_r {
                    if params.len() != call.args.len() {
                        self.problem(
                            format!(
                                "this function takes {} argument{}, {} given",
                                params.len(),
                                if params.len() == 1 { "" } else { "s" },
                                call.args.len()
                            ),
                            e.span,
                        );
                        return ret;
                    }
                } else if let T::Tensor(_) | T::Tuple(_) = &ft_r {
                    self.problem(
                        format!(
                            "a value of type `{}` is called, but it is not a function",
                            self.zonk(&ft_r)
                        ),
                        e.span,
                    );
                    return ret;
                }
                self.unify(&ft, &want, e.span, || {
                    "the arguments do not fit the function's parameters".to_string()
                });
                ret
            }
        }
    }

    /// The result type of `op` on the argument types `self.args[base..]` if every one is known
    /// (a relation error is reported and gives an unknown); `None` if one is still unknown.
    fn relation_now(
        &mut self,
        op: Op,
        base: usize,
        attrs: &Attrs,
        span: Option<Span>,
    ) -> Option<T> {
        let mut known = std::mem::take(&mut self.scratch);
        known.clear();
        for a in &self.args[base..] {
            match self.concrete(a) {
                Some(t) => known.push(t),
                None => {
                    self.scratch = known;
                    return None;
                }
            }
        }
        let out = match op.infer(&known, attrs) {
            Ok(t) => self.lift(&t),
            Err(msg) => {
                self.problem(msg, span);
                self.fresh()
            }
        };
        known.clear();
        self.scratch = known;
        Some(out)
    }

    fn try_relation(&mut self, p: &Pending) -> bool {
        let Some(args) = p
            .args
            .iter()
            .map(|a| self.concrete(a))
            .collect::<Option<Vec<Type>>>()
        else {
            return false;
        };
        match p.op.infer(&args, &p.attrs) {
            Ok(t) => {
                let t = self.lift(&t);
                self.unify(&p.out, &t, p.span, || {
                    format!("the result of `{}`", p.op.name())
                });
            }
            Err(msg) => {
                let out = self.fresh();
                self.problem(msg, p.span);
                let _ = out;
            }
        }
        true
    }

    fn try_proj(&mut self, p: &Proj) -> bool {
        match self.resolve(&p.tuple) {
            T::Tuple(fields) => {
                match fields.get(p.index) {
                    Some(f) => {
                        let f = f.clone();
                        self.unify(&p.out, &f, p.span, || "the projected field".to_string());
                    }
                    None => self.problem(
                        format!(
                            "field {} of a tuple of {} fields does not exist",
                            p.index,
                            fields.len()
                        ),
                        p.span,
                    ),
                }
                true
            }
            T::Var(_) => false,
            other => {
                self.problem(
                    format!(
                        "`.{}` projects a tuple field, but the value has type `{}`",
                        p.index,
                        self.zonk(&other)
                    ),
                    p.span,
                );
                true
            }
        }
    }

    fn solve(&mut self) {
        loop {
            let mut progress = false;
            let pending = std::mem::take(&mut self.pending);
            for p in pending {
                if self.try_relation(&p) {
                    progress = true;
                } else {
                    self.pending.push(p);
                }
            }
            let projs = std::mem::take(&mut self.projs);
            for p in projs {
                if self.try_proj(&p) {
                    progress = true;
                } else {
                    self.projs.push(p);
                }
            }
            if !progress {
                break;
            }
        }
        let pending = std::mem::take(&mut self.pending);
        for p in pending {
            self.problem(
                format!(
                    "cannot infer the argument types of `{}`: annotate the variables involved",
                    p.op.name()
                ),
                p.span,
            );
        }
        let projs = std::mem::take(&mut self.projs);
        for p in projs {
            self.problem(
                "cannot infer the type of the tuple projected here: annotate it".to_string(),
                p.span,
            );
        }
    }

    fn finish(mut self) -> Result<(), IrError> {
        self.solve();
        if self.problems.is_empty() {
            for (e, t) in std::mem::take(&mut self.nodes) {
                let ty = self.zonk(&t);
                self.set_expr_type(&e, ty);
            }
            for (v, t) in std::mem::take(&mut self.binders) {
                let ty = self.zonk(&t);
                self.set_var_type(&v, ty);
            }
            for (f, t) in std::mem::take(&mut self.funcs) {
                if let Err((was, now)) = f.record_type(self.zonk(&t)) {
                    self.changed_type("the function", was, &now, f.span);
                }
            }
            if self.problems.is_empty() {
                return Ok(());
            }
        }
        let mut problems = self.problems;
        problems.sort_by_key(|p| p.span.map_or(u32::MAX, |s| s.start));
        Err(IrError {
            kind: ErrorKind::Type,
            problems,
            source: self.module.source().cloned(),
        })
    }
}

#[cfg(test)]
#[path = "typeck_tests.rs"]
mod tests;

/// Where a problem with operand `e` of a node written at `user` is reported: at the operand,
/// unless it is a variable, which is one node for all its uses, written where it is defined.
fn operand_span(e: &Expr, user: Option<Span>) -> Option<Span> {
    if matches!(e.kind, ExprKind::Var(_)) {
        user
    } else {
        e.span.or(user)
    }
}
