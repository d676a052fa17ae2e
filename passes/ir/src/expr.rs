//! Expressions: immutable nodes shared through `Arc`, so a program is a DAG.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use smallvec::SmallVec;

use super::op::Op;
use super::{Attrs, Tensor, Type};

/// A byte range in the source text a node was parsed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// The range `start..end`.
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// As a range of byte offsets.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

static NEXT_VAR: AtomicU64 = AtomicU64::new(1);

/// A variable: a function parameter, a `let` binding or a free variable. Two variables are the
/// same only if they are the same object (names are hints for printing).
///
/// As in Relay, a variable is an expression node: every use of it in a program is this one
/// node ([`Expr::var`] shares it), so a use costs no allocation, and a walk that reaches a use
/// soon after the binding finds the node in the cache.
///
/// ```
/// use irpass_ir::{Expr, Var};
/// let x = Var::new("x", None);
/// assert!(Expr::ptr_eq(&Expr::var(&x), &Expr::var(&x)));
/// assert_eq!(Expr::var(&x).as_var(), Some(x));
/// ```
#[derive(Clone)]
pub struct Var(Expr);

/// The data of a [`Var`], held by its expression node ([`ExprKind::Var`]).
pub struct VarNode {
    /// The name it was written with (without `%`).
    pub name: Box<str>,
    /// Its type annotation, if written.
    pub annotation: Option<Type>,
    id: u64,
}

impl VarNode {
    /// The variable's unique number (see [`Var::id`]).
    pub fn id(&self) -> u64 {
        self.id
    }
}

impl Var {
    /// A new variable, distinct from every other.
    pub fn new(name: impl Into<String>, annotation: Option<Type>) -> Var {
        Var::with_span(name, annotation, None)
    }

    /// A new variable defined at `span`.
    pub fn with_span(name: impl Into<String>, annotation: Option<Type>, span: Option<Span>) -> Var {
        let node = VarNode {
            name: name.into().into_boxed_str(),
            annotation,
            id: NEXT_VAR.fetch_add(1, Ordering::Relaxed),
        };
        Var(Expr::with_span(ExprKind::Var(node), span))
    }

    /// A unique number (allocation order), stable for the variable's lifetime.
    pub fn id(&self) -> u64 {
        self.node().id
    }

    /// Where it was defined.
    pub fn span(&self) -> Option<Span> {
        self.0.span
    }

    /// The variable as an expression (every use of the variable is this node).
    pub fn as_expr(&self) -> &Expr {
        &self.0
    }

    /// The type found by type inference, if it ran.
    pub fn checked_type(&self) -> Option<&Type> {
        self.0.checked.get()
    }

    /// The annotation, else the inferred type.
    pub fn ty(&self) -> Option<&Type> {
        self.annotation
            .as_ref()
            .filter(|t| t.is_complete())
            .or_else(|| self.checked_type())
    }

    /// Records `ty` as the inferred type, or checks it against the one recorded before: a
    /// recorded type never changes, so a different one is returned as the error.
    pub(crate) fn record_type(&self, ty: Type) -> Result<(), (&Type, Type)> {
        record(&self.0.checked, ty)
    }

    fn node(&self) -> &VarNode {
        match &self.0.kind {
            ExprKind::Var(node) => node,
            // `Var`'s field is private and only `with_span` makes one.
            _ => unreachable!("a `Var` holds a variable node"),
        }
    }
}

/// Sets `cell` to `ty` if it is empty; else `ty` must equal what it holds (both returned if
/// not).
fn record(cell: &OnceLock<Type>, ty: Type) -> Result<(), (&Type, Type)> {
    let mut new = Some(ty);
    let held = cell.get_or_init(|| new.take().unwrap_or(Type::Unknown));
    match new {
        Some(ty) if *held != ty => Err((held, ty)),
        _ => Ok(()),
    }
}

impl Deref for Var {
    type Target = VarNode;
    fn deref(&self) -> &VarNode {
        self.node()
    }
}

impl PartialEq for Var {
    fn eq(&self, other: &Self) -> bool {
        Expr::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Var {}

impl Hash for Var {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id().hash(state);
    }
}

impl fmt::Debug for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{}#{}", self.name, self.id())
    }
}

/// A function: parameters, optional result type, body, attributes (`Primitive=1`, ...).
#[derive(Clone)]
pub struct Function(Arc<FunctionNode>);

/// The data of a [`Function`].
pub struct FunctionNode {
    /// The parameters.
    pub params: Vec<Var>,
    /// The declared result type.
    pub ret_type: Option<Type>,
    /// The body.
    pub body: Expr,
    /// Attributes (`Primitive`, `Inline`, `SkipOptimization`, ...).
    pub attrs: Attrs,
    /// Where it was written.
    pub span: Option<Span>,
    checked: OnceLock<Type>,
}

impl Function {
    /// A function.
    pub fn new(params: Vec<Var>, ret_type: Option<Type>, body: Expr, attrs: Attrs) -> Function {
        Function::with_span(params, ret_type, body, attrs, None)
    }

    /// A function written at `span`.
    pub fn with_span(
        params: Vec<Var>,
        ret_type: Option<Type>,
        body: Expr,
        attrs: Attrs,
        span: Option<Span>,
    ) -> Function {
        Function(Arc::new(FunctionNode {
            params,
            ret_type,
            body,
            attrs,
            span,
            checked: OnceLock::new(),
        }))
    }

    /// The same function with another body (parameters, type, attributes kept).
    pub fn with_body(&self, body: Expr) -> Function {
        Function::with_span(
            self.params.clone(),
            self.ret_type.clone(),
            body,
            self.attrs.clone(),
            self.span,
        )
    }

    /// Whether the attribute `name` is set to a true value (`Primitive=1`).
    pub fn has_attr(&self, name: &str) -> bool {
        self.attrs
            .get(name)
            .is_some_and(|v| v.as_bool().unwrap_or(true))
    }

    /// The function type found by type inference, if it ran.
    pub fn checked_type(&self) -> Option<&Type> {
        self.0.checked.get()
    }

    /// [`Var::record_type`] for a function.
    pub(crate) fn record_type(&self, ty: Type) -> Result<(), (&Type, Type)> {
        record(&self.0.checked, ty)
    }

    /// Whether another reference to this function object exists (two closures, or a module
    /// and a closure, can hold one function).
    pub(crate) fn is_shared(&self) -> bool {
        Arc::strong_count(&self.0) > 1
    }

    /// Whether both are the same object.
    pub fn ptr_eq(a: &Function, b: &Function) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }

    /// The address of the shared function: equal for two handles exactly when
    /// [`Function::ptr_eq`] (while both are alive).
    pub fn address(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }
}

impl Deref for Function {
    type Target = FunctionNode;
    fn deref(&self) -> &FunctionNode {
        &self.0
    }
}

impl fmt::Debug for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&super::print::function_text(self))
    }
}

/// What a call calls.
#[derive(Clone)]
pub enum Callee {
    /// A registered operator (`nn.conv2d`).
    Op(Op),
    /// A function value: a global (`@f`), a variable bound to a closure, a closure.
    Expr(Expr),
}

/// The arguments of a call: up to two are held in the call's node, more in a buffer of their
/// own (most operators take one or two, so most calls are one allocation, and a walk over a
/// call and its arguments reads one node instead of two blocks).
pub type Args = SmallVec<[Expr; 2]>;

/// A call.
#[derive(Clone)]
pub struct Call {
    /// What is called.
    pub callee: Callee,
    /// The arguments.
    pub args: Args,
    /// The attributes (operator calls only), normalised against the operator's schema.
    pub attrs: Attrs,
}

/// One `let` binding: the variable and its value.
pub type Binding = (Var, Expr);

/// The kinds of expression.
pub enum ExprKind {
    /// A variable: the node is the [`Var`] (see [`Expr::as_var`]).
    Var(VarNode),
    /// A global function (`@name`).
    GlobalVar(String),
    /// A constant tensor.
    Constant(Arc<Tensor>),
    /// An operator or function call.
    Call(Call),
    /// A block of bindings and its result: `let %v1 = e1; ...; let %vn = en; body`. Each
    /// variable is in scope in the later values and the body (a function value also in its
    /// own value, so a closure can recurse). Never empty. A sequence of bindings is one node
    /// rather than one node per `let`: a pass that changes one binding copies the list of
    /// pairs, not a chain of nodes, and a walk over it reads consecutive memory. A block
    /// whose body is another block means the same as the two lists joined (printing,
    /// structural equality and the traversals of this crate see them as one).
    Let(Vec<Binding>, Expr),
    /// `(a, b, ...)`.
    Tuple(Vec<Expr>),
    /// `tuple.index`.
    TupleGetItem(Expr, usize),
    /// `if (cond) { then } else { otherwise }`.
    If(Expr, Expr, Expr),
    /// A nested function (closure).
    Function(Function),
}

/// An expression: an `Arc`'d immutable node. Cloning shares the node.
///
/// The count is a [`triomphe::Arc`]'s: no weak count, so releasing a node is one atomic
/// operation instead of two, and the node is 8 bytes smaller (a pass rebuilds and a module
/// drop releases nodes by the hundred thousand).
#[derive(Clone)]
pub struct Expr(triomphe::Arc<ExprNode>);

/// The data of an [`Expr`].
pub struct ExprNode {
    /// What it is.
    pub kind: ExprKind,
    /// Where it was written.
    pub span: Option<Span>,
    checked: OnceLock<Type>,
    /// Whether a global (`@f`) occurs in the node or below it, found by the type inference
    /// that typed it: [`GLOBALS_UNKNOWN`], [`GLOBALS_NONE`] or [`GLOBALS_SOME`]. (It lives in
    /// the node's padding.)
    globals: AtomicU8,
}

const GLOBALS_UNKNOWN: u8 = 0;
const GLOBALS_NONE: u8 = 1;
const GLOBALS_SOME: u8 = 2;

impl Expr {
    /// A node of `kind`.
    pub fn new(kind: ExprKind) -> Expr {
        Expr::with_span(kind, None)
    }

    /// A node of `kind` written at `span`.
    pub fn with_span(kind: ExprKind, span: Option<Span>) -> Expr {
        Expr(triomphe::Arc::new(ExprNode {
            kind,
            span,
            checked: OnceLock::new(),
            globals: AtomicU8::new(GLOBALS_UNKNOWN),
        }))
    }

    /// A use of variable `v`: its own node, shared by all its uses.
    pub fn var(v: &Var) -> Expr {
        v.0.clone()
    }

    /// The variable this node is, if it is one.
    pub fn as_var(&self) -> Option<Var> {
        matches!(self.kind, ExprKind::Var(_)).then(|| Var(self.clone()))
    }

    /// A global function reference.
    pub fn global(name: impl Into<String>) -> Expr {
        Expr::new(ExprKind::GlobalVar(name.into()))
    }

    /// A constant.
    pub fn constant(t: Tensor) -> Expr {
        Expr::new(ExprKind::Constant(Arc::new(t)))
    }

    /// A call of operator `op` (attributes normalised against its schema).
    ///
    /// # Errors
    /// When the operator is unknown or an attribute does not fit its schema.
    pub fn op(op: &str, args: impl Into<Args>, attrs: Attrs) -> Result<Expr, String> {
        let op = Op::get(op)?;
        let attrs = op.normalize_attrs(attrs)?;
        Ok(Expr::new(ExprKind::Call(Call {
            callee: Callee::Op(op),
            args: args.into(),
            attrs,
        })))
    }

    /// A call of a function value.
    pub fn call(func: Expr, args: impl Into<Args>) -> Expr {
        Expr::new(ExprKind::Call(Call {
            callee: Callee::Expr(func),
            args: args.into(),
            attrs: Attrs::new(),
        }))
    }

    /// `let %var = value; body`: a block of one binding.
    pub fn let_(var: &Var, value: Expr, body: Expr) -> Expr {
        Expr::new(ExprKind::Let(vec![(var.clone(), value)], body))
    }

    /// `let %v1 = e1; ...; body`: the bindings in order, then `body` (`body` itself when there
    /// are none).
    ///
    /// ```
    /// use irpass_ir::{Expr, Var};
    /// let (a, b) = (Var::new("a", None), Var::new("b", None));
    /// let one = Expr::var(&Var::new("one", None));
    /// let e = Expr::lets(vec![(a.clone(), one), (b, Expr::var(&a))], Expr::var(&a));
    /// assert_eq!(e.to_string().matches("let ").count(), 2);
    /// ```
    pub fn lets(bindings: Vec<Binding>, body: Expr) -> Expr {
        Expr::lets_with_span(bindings, body, None)
    }

    /// [`Expr::lets`] written at `span`.
    pub fn lets_with_span(mut bindings: Vec<Binding>, body: Expr, span: Option<Span>) -> Expr {
        if bindings.is_empty() {
            return body;
        }
        bindings.shrink_to_fit();
        Expr::with_span(ExprKind::Let(bindings, body), span)
    }

    /// A tuple.
    pub fn tuple(fields: Vec<Expr>) -> Expr {
        Expr::new(ExprKind::Tuple(fields))
    }

    /// A tuple projection.
    pub fn get(tuple: Expr, index: usize) -> Expr {
        Expr::new(ExprKind::TupleGetItem(tuple, index))
    }

    /// A conditional.
    pub fn if_(cond: Expr, then: Expr, otherwise: Expr) -> Expr {
        Expr::new(ExprKind::If(cond, then, otherwise))
    }

    /// A closure.
    pub fn function(f: Function) -> Expr {
        Expr::new(ExprKind::Function(f))
    }

    /// The type found by type inference, if it ran.
    pub fn checked_type(&self) -> Option<&Type> {
        self.0.checked.get()
    }

    /// [`Var::record_type`] for a node.
    pub(crate) fn record_type(&self, ty: Type) -> Result<(), (&Type, Type)> {
        record(&self.0.checked, ty)
    }

    /// Whether a global (`@f`) occurs in this node or below it, if type inference has visited
    /// it. A node's type depends only on the nodes below it, the types of the variables it
    /// uses (fixed once recorded) and the types of the globals it mentions (which passes can
    /// change): a typed node that mentions none keeps its type.
    pub(crate) fn mentions_global(&self) -> Option<bool> {
        match self.0.globals.load(Ordering::Relaxed) {
            GLOBALS_NONE => Some(false),
            GLOBALS_SOME => Some(true),
            _ => None,
        }
    }

    pub(crate) fn set_mentions_global(&self, yes: bool) {
        let v = if yes { GLOBALS_SOME } else { GLOBALS_NONE };
        self.0.globals.store(v, Ordering::Relaxed);
    }

    /// Whether both are the same node.
    pub fn ptr_eq(a: &Expr, b: &Expr) -> bool {
        triomphe::Arc::ptr_eq(&a.0, &b.0)
    }

    /// The node's address, as a key for memo tables.
    pub fn addr(&self) -> usize {
        triomphe::Arc::as_ptr(&self.0) as usize
    }

    /// Whether the node has another reference than `self`. A node that is not shared has one
    /// parent, so a traversal from a root reaches it once, through that parent: memo tables
    /// keyed by node need no entry for it (the traversals of this crate skip them, which keeps
    /// their tables small: in a chain of `let`s most nodes have one parent).
    ///
    /// ```
    /// use irpass_ir::{Expr, Var};
    /// let x = Expr::var(&Var::new("x", None));
    /// assert!(!x.is_shared());
    /// let y = x.clone();
    /// assert!(x.is_shared() && y.is_shared());
    /// ```
    pub fn is_shared(&self) -> bool {
        !triomphe::Arc::is_unique(&self.0)
    }

    /// Whether a memoising traversal needs an entry for this node: it is shared
    /// ([`Expr::is_shared`]) and not a variable. A variable is one node for all its uses, and
    /// what a traversal does with one is a lookup it makes at each use, so that it sees the
    /// traversal's state there.
    ///
    /// ```
    /// use irpass_ir::{Expr, Var};
    /// let x = Var::new("x", None);
    /// let e = Expr::tuple(vec![Expr::var(&x)]);
    /// let shared = e.clone();
    /// assert!(e.needs_memo() && shared.needs_memo());
    /// assert!(Expr::var(&x).is_shared() && !Expr::var(&x).needs_memo());
    /// ```
    pub fn needs_memo(&self) -> bool {
        !matches!(self.kind, ExprKind::Var(_)) && self.is_shared()
    }

    /// The direct sub-expressions, in evaluation order (a closure's body included).
    pub fn children(&self) -> Vec<&Expr> {
        let mut out = Vec::new();
        self.for_each_child(|c| out.push(c));
        out
    }

    /// Calls `f` on each of [`Expr::children`], in that order, without collecting them.
    ///
    /// ```
    /// use irpass_ir::{Expr, Var};
    /// let x = Expr::var(&Var::new("x", None));
    /// let e = Expr::tuple(vec![x.clone(), Expr::get(x, 0)]);
    /// let mut n = 0;
    /// e.for_each_child(|_| n += 1);
    /// assert_eq!(n, e.children().len());
    /// ```
    pub fn for_each_child<'a>(&'a self, mut f: impl FnMut(&'a Expr)) {
        match &self.kind {
            ExprKind::Var(_) | ExprKind::GlobalVar(_) | ExprKind::Constant(_) => {}
            ExprKind::Call(call) => {
                if let Callee::Expr(callee) = &call.callee {
                    f(callee);
                }
                call.args.iter().for_each(f);
            }
            ExprKind::Let(bindings, body) => {
                bindings.iter().for_each(|(_, value)| f(value));
                f(body);
            }
            ExprKind::Tuple(fields) => fields.iter().for_each(f),
            ExprKind::TupleGetItem(t, _) => f(t),
            ExprKind::If(c, t, o) => {
                f(c);
                f(t);
                f(o);
            }
            ExprKind::Function(func) => f(&func.body),
        }
    }
}

impl Deref for Expr {
    type Target = ExprNode;
    fn deref(&self) -> &ExprNode {
        &self.0
    }
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&super::print::expr_text(self))
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&super::print::expr_text(self))
    }
}

impl Drop for ExprNode {
    /// Drops long chains iteratively: the default recursive drop would overflow the stack on a
    /// program of a hundred thousand bindings.
    fn drop(&mut self) {
        let mut stack: Vec<Expr> = Vec::new();
        take_children(&mut self.kind, &mut stack);
        drain(&mut stack, 0);
    }
}

/// Releases the nodes on `stack` above `base` and, iteratively, the children only they held.
fn drain(stack: &mut Vec<Expr>, base: usize) {
    while stack.len() > base {
        let Some(e) = stack.pop() else { break };
        if let Ok(mut node) = triomphe::Arc::try_unwrap(e.0) {
            take_children(&mut node.kind, stack);
        }
    }
}

/// Moves the child expressions of `kind` that this node alone holds into `out`, leaving it
/// childless; shared children are released on the spot (that only decrements their count).
fn take_children(kind: &mut ExprKind, out: &mut Vec<Expr>) {
    fn keep(out: &mut Vec<Expr>, e: Expr) {
        if !e.is_shared() {
            out.push(e);
        }
    }
    match std::mem::replace(kind, ExprKind::Tuple(Vec::new())) {
        ExprKind::Var(_) | ExprKind::GlobalVar(_) | ExprKind::Constant(_) => {}
        ExprKind::Call(call) => {
            if let Callee::Expr(f) = call.callee {
                keep(out, f);
            }
            call.args.into_iter().for_each(|a| keep(out, a));
        }
        ExprKind::Let(bindings, body) => {
            // Each value is released on the spot, in order, and only the body waits on the
            // stack: a block of many bindings keeps the stack short.
            keep(out, body);
            for (_, value) in bindings {
                let base = out.len();
                keep(out, value);
                drain(out, base);
            }
        }
        ExprKind::Tuple(fields) => fields.into_iter().for_each(|f| keep(out, f)),
        ExprKind::TupleGetItem(t, _) => keep(out, t),
        ExprKind::If(c, t, e) => {
            keep(out, c);
            keep(out, t);
            keep(out, e);
        }
        ExprKind::Function(f) => {
            if let Some(node) = Arc::into_inner(f.0) {
                keep(out, node.body);
            }
        }
    }
}

/// Runs `f` with enough stack for deep recursion (long chains of bindings), growing the stack
/// on the heap when needed. Recursive visitors call it at each level.
pub fn with_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(64 * 1024, 4 * 1024 * 1024, f)
}
