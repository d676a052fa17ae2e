//! Type inference on bodies: one scan over each function's ids (operands first), unification
//! over a union-find of type terms, operator relations solved as soon as their argument types
//! are known. Nothing recurses as deep as the program nests: the scan is a loop, unification
//! works through an explicit list of pairs, and the only recursions (over a type's structure)
//! stop at [`MAX_TYPE_DEPTH`].
//!
//! The result is a side table per function ([`BodyTypes`]): a [`TypeId`] per node and per
//! variable, into a table of distinct types shared by the functions typed together.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use hashbrown::HashTable;
use rustc_hash::{FxHashMap, FxHasher};

use super::body::{AttrsId, Body, ExprId, Node, Sig, VarId};
use super::index::Idx;
use super::types::{TypeId, TypeTable};
use crate::error::{ErrorKind, IrError, Problem};
use crate::{DType, Dim, Op, Span, Type};

/// How deeply a type may nest (tuples in tuples, functions returning functions). A program
/// whose types nest deeper is a type error, not a stack overflow.
pub const MAX_TYPE_DEPTH: usize = 256;

/// At most this many problems are reported.
const MAX_PROBLEMS: usize = 20;

/// A function to type: its body, parameters, result and declared result type.
#[derive(Clone, Copy, Debug)]
pub struct FunctionInput<'a> {
    /// Its global name (without `@`).
    pub name: &'a str,
    /// The arena.
    pub body: &'a Body,
    /// The parameters.
    pub params: &'a [VarId],
    /// The result.
    pub root: ExprId,
    /// The declared result type.
    pub ret_type: Option<&'a Type>,
    /// Where the function was written.
    pub span: Option<Span>,
}

/// The types of one function's nodes and variables (`_` where inference left a part unknown,
/// and for nodes not reachable from the function's result).
#[derive(Clone, Debug)]
pub struct BodyTypes {
    table: Arc<TypeTable>,
    nodes: Vec<TypeId>,
    vars: Vec<TypeId>,
    function: TypeId,
    callees: Vec<(Box<str>, TypeId)>,
}

impl BodyTypes {
    /// The type of node `e`.
    #[inline]
    pub fn of(&self, e: ExprId) -> &Type {
        self.table.get(self.nodes[e.index()])
    }

    /// The type id of node `e` (equal ids, equal types).
    #[inline]
    pub fn id(&self, e: ExprId) -> TypeId {
        self.nodes[e.index()]
    }

    /// The type of variable `v`.
    #[inline]
    pub fn var(&self, v: VarId) -> &Type {
        self.table.get(self.vars[v.index()])
    }

    /// The function's type.
    pub fn function_type(&self) -> &Type {
        self.table.get(self.function)
    }

    /// The distinct types.
    pub fn table(&self) -> &TypeTable {
        &self.table
    }

    /// The globals the function refers to, each with the type it was typed against: the
    /// function's types stay valid while those globals keep these types.
    pub fn callees(&self) -> impl Iterator<Item = (&str, &Type)> {
        self.callees
            .iter()
            .map(|(name, t)| (&**name, self.table.get(*t)))
    }
}

/// Infers the types of `functions`, which may call each other and the globals `known` gives a
/// type for (functions typed before and not changed since). One [`BodyTypes`] per function,
/// in order.
///
/// # Errors
/// The type errors found (at most 20), in source order, without a source attached.
///
/// ```
/// use irpass_ir::Module;
/// use irpass_ir::arena::{FunctionInput, infer_types};
/// let m = Module::parse("def @main(%x: Tensor[(2, 3), float32]) { let %y = exp(%x); sum(%y, axis=[1]) }").unwrap();
/// let f = m.get("main").unwrap();
/// let a = &f.code;
/// let input = FunctionInput { name: "main", body: &a.body, params: &a.params, root: a.root, ret_type: None, span: None };
/// let types = infer_types(&[input], &|_| None).unwrap();
/// assert_eq!(types[0].of(a.root).to_string(), "Tensor[(2), float32]");
/// assert_eq!(types[0].function_type().to_string(), "fn (Tensor[(2, 3), float32]) -> Tensor[(2), float32]");
/// ```
pub fn infer_types(
    functions: &[FunctionInput<'_>],
    known: &dyn Fn(&str) -> Option<Type>,
) -> Result<Vec<BodyTypes>, IrError> {
    let mut inf = Infer::default();
    inf.table.intern(Type::Unknown);
    inf.depths.push(0);
    let mut sigs = Vec::with_capacity(functions.len());
    for f in functions {
        let params: Vec<TermId> = f
            .params
            .iter()
            .map(|&p| inf.annotation(f.body.var(p).annotation.as_ref()))
            .collect();
        let ret = inf.annotation(f.ret_type);
        let sig = inf.func_term(&params, ret);
        inf.globals.insert(f.name.into(), sig);
        sigs.push((params, ret, sig));
    }
    let mut scans = Vec::with_capacity(functions.len());
    for (i, f) in functions.iter().enumerate() {
        let (params, ret, _) = &sigs[i];
        scans.push(inf.function(i, f, params, *ret, known));
    }
    inf.solve(functions);
    if !inf.problems.is_empty() {
        return Err(inf.error());
    }
    let mut out = Vec::with_capacity(functions.len());
    for (i, (f, scan)) in functions.iter().zip(scans).enumerate() {
        let nodes = scan
            .slots
            .iter()
            .zip(&scan.live)
            .zip(f.body.ids())
            .map(|((&t, &live), id)| {
                if live {
                    inf.output(t, f.body.span(id))
                } else {
                    TypeId::new(0)
                }
            })
            .collect();
        let vars = scan
            .vars
            .iter()
            .map(|t| t.map_or(TypeId::new(0), |t| inf.output(t, None)))
            .collect();
        let function = inf.output(sigs[i].2, f.span);
        let callees = scan
            .callees
            .iter()
            .map(|(name, t)| (name.clone(), inf.output(*t, None)))
            .collect();
        out.push((nodes, vars, function, callees));
    }
    if !inf.problems.is_empty() {
        return Err(inf.error());
    }
    let table = Arc::new(std::mem::take(&mut inf.table));
    Ok(out
        .into_iter()
        .map(|(nodes, vars, function, callees)| BodyTypes {
            table: table.clone(),
            nodes,
            vars,
            function,
            callees,
        })
        .collect())
}

type TermId = u32;

/// A type during inference.
#[derive(Clone, Copy, Debug)]
enum Term {
    /// A type with no unknown in it.
    Known(TypeId),
    /// A tuple of the terms `lists[start..start + len]`.
    Tuple { start: u32, len: u32 },
    /// A function of the parameters `lists[start..start + len]`.
    Func { start: u32, len: u32, ret: TermId },
    /// An unknown: solved when its `parent` is another term.
    Var,
}

/// A relation waiting for its argument types.
struct Pending {
    function: usize,
    op: Op,
    attrs: AttrsId,
    args: Vec<TermId>,
    out: TermId,
    span: Option<Span>,
}

/// A projection waiting for its tuple's type.
struct Proj {
    tuple: TermId,
    index: u32,
    out: TermId,
    span: Option<Span>,
}

/// What the scan of one function leaves for the output.
struct Scan {
    slots: Vec<TermId>,
    live: Vec<bool>,
    vars: Vec<Option<TermId>>,
    callees: Vec<(Box<str>, TermId)>,
}

/// A memoised relation: operator, attributes and operand types to the result.
struct Relation {
    op: Op,
    attrs: AttrsId,
    operands: Box<[TypeId]>,
    result: Result<TypeId, String>,
}

#[derive(Default)]
struct Infer {
    table: TypeTable,
    /// How deeply each type of `table` nests.
    depths: Vec<u16>,
    terms: Vec<Term>,
    parent: Vec<TermId>,
    /// How deeply each structure term nested when it was made (a lower bound once its
    /// unknowns are solved).
    term_depths: Vec<u16>,
    lists: Vec<TermId>,
    /// The one `Known` term of each type.
    known_terms: Vec<Option<TermId>>,
    /// Scratch: the argument terms of the call being typed.
    arg_terms: Vec<TermId>,
    globals: FxHashMap<Box<str>, TermId>,
    pending: Vec<Pending>,
    projs: Vec<Proj>,
    problems: Vec<Problem>,
    /// Scratch: known argument types.
    arg_ids: Vec<TypeId>,
    arg_types: Vec<Type>,
}

/// Where a problem with operand `e` of a node written at `user` is reported: at the operand,
/// unless it is a variable, which is one node for all its uses.
fn operand_span(body: &Body, e: ExprId, user: Option<Span>) -> Option<Span> {
    match body.node(e) {
        Node::Var(_) => user,
        _ => body.span(e).or(user),
    }
}

/// An operator's identity for hashing: its definition's address (no string to hash).
fn op_key(op: Op) -> usize {
    std::ptr::from_ref(op.def()) as usize
}

fn hash_of(v: &impl Hash) -> u64 {
    let mut h = FxHasher::default();
    v.hash(&mut h);
    h.finish()
}

impl Infer {
    fn problem(&mut self, message: String, span: Option<Span>) {
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(Problem {
                message,
                span,
                note: None,
            });
        }
    }

    fn error(&mut self) -> IrError {
        let mut problems = std::mem::take(&mut self.problems);
        problems.sort_by_key(|p| p.span.map_or(u32::MAX, |s| s.start));
        IrError {
            kind: ErrorKind::Type,
            problems,
            source: None,
        }
    }

    fn term(&mut self, t: Term) -> TermId {
        let id = TermId::try_from(self.terms.len()).expect("more than u32::MAX type terms");
        let depth = match t {
            Term::Tuple { start, len } => {
                let items = self.lists[start as usize..(start + len) as usize].to_vec();
                self.checked(&items, None).unwrap_or(MAX_TYPE_DEPTH + 1)
            }
            Term::Func { start, len, ret } => {
                let items = self.lists[start as usize..(start + len) as usize].to_vec();
                self.checked(&items, Some(ret))
                    .unwrap_or(MAX_TYPE_DEPTH + 1)
            }
            Term::Known(_) | Term::Var => 0,
        };
        self.terms.push(t);
        self.parent.push(id);
        self.term_depths.push(depth as u16);
        id
    }

    fn fresh(&mut self) -> TermId {
        self.term(Term::Var)
    }

    fn list(&mut self, items: &[TermId]) -> (u32, u32) {
        let start = u32::try_from(self.lists.len()).expect("more than u32::MAX type terms");
        self.lists.extend_from_slice(items);
        (start, items.len() as u32)
    }

    /// How deeply `t` nests as far as solved so far (an unknown counts as a tensor).
    fn depth_of(&mut self, t: TermId) -> usize {
        let t = self.find(t);
        match self.terms[t as usize] {
            Term::Known(id) => self.depths[id.index()] as usize,
            Term::Var => 0,
            Term::Tuple { .. } | Term::Func { .. } => self.term_depths[t as usize] as usize,
        }
    }

    /// A structure term of `items` (and `ret`), or `None` if it would nest deeper than
    /// [`MAX_TYPE_DEPTH`].
    fn checked(&mut self, items: &[TermId], ret: Option<TermId>) -> Option<usize> {
        let mut depth = 0;
        for &t in items.iter().chain(ret.as_ref()) {
            depth = depth.max(self.depth_of(t));
        }
        (depth < MAX_TYPE_DEPTH).then_some(depth + 1)
    }

    fn tuple_term(&mut self, fields: &[TermId]) -> TermId {
        let (start, len) = self.list(fields);
        self.term(Term::Tuple { start, len })
    }

    fn func_term(&mut self, params: &[TermId], ret: TermId) -> TermId {
        let (start, len) = self.list(params);
        self.term(Term::Func { start, len, ret })
    }

    fn items(&self, start: u32, len: u32) -> &[TermId] {
        &self.lists[start as usize..(start + len) as usize]
    }

    /// The id of complete type `t`, or `None` if it nests deeper than [`MAX_TYPE_DEPTH`].
    fn intern(&mut self, t: Type) -> Option<TypeId> {
        let depth = match &t {
            Type::Tensor(_) | Type::Unknown => 0,
            Type::Tuple(fields) => 1 + fields.iter().map(type_depth).max().unwrap_or(0),
            Type::Func(f) => {
                1 + f
                    .params
                    .iter()
                    .chain([&f.ret])
                    .map(type_depth)
                    .max()
                    .unwrap_or(0)
            }
        };
        if depth > MAX_TYPE_DEPTH {
            return None;
        }
        let before = self.table.len();
        let id = self.table.intern(t);
        if self.table.len() > before {
            self.depths.push(depth as u16);
        }
        Some(id)
    }

    /// The term of complete type `id`.
    fn known(&mut self, id: TypeId) -> TermId {
        if let Some(Some(t)) = self.known_terms.get(id.index()) {
            return *t;
        }
        let t = self.term(Term::Known(id));
        if self.known_terms.len() <= id.index() {
            self.known_terms.resize(id.index() + 1, None);
        }
        self.known_terms[id.index()] = Some(t);
        t
    }

    /// The term of a written type, `_` parts becoming unknowns.
    fn lift(&mut self, t: &Type) -> TermId {
        if t.is_complete() {
            if let Some(id) = self.intern(t.clone()) {
                return self.known(id);
            }
        }
        match t {
            Type::Tuple(fields) => {
                let fields: Vec<TermId> = fields.iter().map(|f| self.lift(f)).collect();
                self.tuple_term(&fields)
            }
            Type::Func(f) => {
                let params: Vec<TermId> = f.params.iter().map(|p| self.lift(p)).collect();
                let ret = self.lift(&f.ret);
                self.func_term(&params, ret)
            }
            // A complete type deeper than the limit: reported where it is used.
            Type::Tensor(_) | Type::Unknown => self.fresh(),
        }
    }

    fn annotation(&mut self, t: Option<&Type>) -> TermId {
        match t {
            Some(t) => self.lift(t),
            None => self.fresh(),
        }
    }

    fn find(&mut self, mut t: TermId) -> TermId {
        let mut root = t;
        while self.parent[root as usize] != root {
            root = self.parent[root as usize];
        }
        while self.parent[t as usize] != root {
            let next = self.parent[t as usize];
            self.parent[t as usize] = root;
            t = next;
        }
        root
    }

    /// `t` with unknowns as `_`; `None` if it nests deeper than [`MAX_TYPE_DEPTH`].
    fn zonk(&mut self, t: TermId) -> Option<Type> {
        self.zonk_at(t, 0, false)
    }

    /// `t` if it has no unknown left.
    fn concrete(&mut self, t: TermId) -> Option<TypeId> {
        let t = self.find(t);
        if let Term::Known(id) = self.terms[t as usize] {
            return Some(id);
        }
        let ty = self.zonk_at(t, 0, true)?;
        self.intern(ty)
    }

    /// [`Infer::zonk`] at nesting `depth`; with `complete`, `None` at the first unknown.
    fn zonk_at(&mut self, t: TermId, depth: usize, complete: bool) -> Option<Type> {
        if depth > MAX_TYPE_DEPTH {
            return None;
        }
        let t = self.find(t);
        if depth + self.depth_of(t) > MAX_TYPE_DEPTH {
            return None;
        }
        match self.terms[t as usize] {
            Term::Known(id) => (depth + self.depths[id.index()] as usize <= MAX_TYPE_DEPTH)
                .then(|| self.table.get(id).clone()),
            Term::Var => (!complete).then_some(Type::Unknown),
            Term::Tuple { start, len } => {
                let mut fields = Vec::with_capacity(len as usize);
                for i in 0..len {
                    let f = self.lists[(start + i) as usize];
                    fields.push(self.zonk_at(f, depth + 1, complete)?);
                }
                Some(Type::Tuple(fields))
            }
            Term::Func { start, len, ret } => {
                let mut params = Vec::with_capacity(len as usize);
                for i in 0..len {
                    let p = self.lists[(start + i) as usize];
                    params.push(self.zonk_at(p, depth + 1, complete)?);
                }
                let ret = self.zonk_at(ret, depth + 1, complete)?;
                Some(Type::func(params, ret))
            }
        }
    }

    /// For messages: `t` with unknowns as `_`, or a note that it nests too deep.
    fn show(&mut self, t: TermId) -> String {
        match self.zonk(t) {
            Some(t) => t.to_string(),
            None => format!("(a type nested deeper than {MAX_TYPE_DEPTH})"),
        }
    }

    /// The output type id of `t` (a problem at `span` if it nests too deep).
    fn output(&mut self, t: TermId, span: Option<Span>) -> TypeId {
        let t = self.find(t);
        if let Term::Known(id) = self.terms[t as usize] {
            return id;
        }
        match self.zonk(t).and_then(|ty| self.intern(ty)) {
            Some(id) => id,
            None => {
                self.deep(span);
                TypeId::new(0)
            }
        }
    }

    fn deep(&mut self, span: Option<Span>) {
        self.problem(
            format!("this type nests deeper than {MAX_TYPE_DEPTH} levels"),
            span,
        );
    }

    /// Whether unknown `v` occurs in `t`.
    fn occurs(&mut self, v: TermId, t: TermId) -> bool {
        let mut stack = vec![t];
        while let Some(t) = stack.pop() {
            let t = self.find(t);
            match self.terms[t as usize] {
                Term::Var => {
                    if t == v {
                        return true;
                    }
                }
                Term::Known(_) => {}
                Term::Tuple { start, len } => stack.extend_from_slice(self.items(start, len)),
                Term::Func { start, len, ret } => {
                    stack.extend_from_slice(self.items(start, len));
                    stack.push(ret);
                }
            }
        }
        false
    }

    /// The structure of complete type `id` as a term whose parts are `Known` terms.
    fn open(&mut self, id: TypeId) -> TermId {
        match self.table.get(id).clone() {
            Type::Tuple(fields) => {
                let fields: Vec<TermId> = fields.into_iter().map(|f| self.lift(&f)).collect();
                self.tuple_term(&fields)
            }
            Type::Func(f) => {
                let params: Vec<TermId> = f.params.iter().map(|p| self.lift(p)).collect();
                let ret = self.lift(&f.ret);
                self.func_term(&params, ret)
            }
            Type::Tensor(_) | Type::Unknown => self.known(id),
        }
    }

    /// Unifies `a` and `b`; on a mismatch, reports `what` (built only then) with both types.
    fn unify(
        &mut self,
        a: TermId,
        b: TermId,
        span: Option<Span>,
        what: impl FnOnce() -> String,
    ) -> bool {
        match self.unify_terms(a, b) {
            Ok(()) => true,
            Err(detail) => {
                let (ea, eb) = (self.show(a), self.show(b));
                self.problem(
                    format!("{}: expected `{ea}`, found `{eb}`{detail}", what()),
                    span,
                );
                false
            }
        }
    }

    fn unify_terms(&mut self, a: TermId, b: TermId) -> Result<(), String> {
        let mut work = vec![(a, b)];
        while let Some((a, b)) = work.pop() {
            let (a, b) = (self.find(a), self.find(b));
            if a == b {
                continue;
            }
            match (self.terms[a as usize], self.terms[b as usize]) {
                (Term::Var, _) | (_, Term::Var) => {
                    let (v, other) = if let Term::Var = self.terms[a as usize] {
                        (a, b)
                    } else {
                        (b, a)
                    };
                    if self.occurs(v, other) {
                        return Err(" (a type cannot contain itself)".into());
                    }
                    self.parent[v as usize] = other;
                }
                (Term::Known(x), Term::Known(y)) => {
                    if x != y {
                        compare_known(self.table.get(x), self.table.get(y))?;
                    }
                }
                (Term::Known(x), _) => {
                    let opened = self.open(x);
                    if matches!(self.terms[opened as usize], Term::Known(_)) {
                        return Err(String::new());
                    }
                    work.push((opened, b));
                }
                (_, Term::Known(y)) => {
                    let opened = self.open(y);
                    if matches!(self.terms[opened as usize], Term::Known(_)) {
                        return Err(String::new());
                    }
                    work.push((a, opened));
                }
                (Term::Tuple { start: s1, len: l1 }, Term::Tuple { start: s2, len: l2 }) => {
                    if l1 != l2 {
                        return Err(format!(" ({l1} fields vs {l2})"));
                    }
                    for i in (0..l1).rev() {
                        work.push((self.lists[(s1 + i) as usize], self.lists[(s2 + i) as usize]));
                    }
                }
                (
                    Term::Func {
                        start: s1,
                        len: l1,
                        ret: r1,
                    },
                    Term::Func {
                        start: s2,
                        len: l2,
                        ret: r2,
                    },
                ) => {
                    if l1 != l2 {
                        return Err(format!(" ({l1} parameters vs {l2})"));
                    }
                    work.push((r1, r2));
                    for i in (0..l1).rev() {
                        work.push((self.lists[(s1 + i) as usize], self.lists[(s2 + i) as usize]));
                    }
                }
                _ => return Err(String::new()),
            }
        }
        Ok(())
    }

    /// Types the nodes of function `index` reachable from its result.
    fn function(
        &mut self,
        index: usize,
        f: &FunctionInput<'_>,
        params: &[TermId],
        ret: TermId,
        known: &dyn Fn(&str) -> Option<Type>,
    ) -> Scan {
        let body = f.body;
        let live = body.reachable(f.root);
        let mut vars: Vec<Option<TermId>> = vec![None; body.var_count()];
        for (&p, &t) in f.params.iter().zip(params) {
            vars[p.index()] = Some(t);
        }
        let mut value_of: Vec<Option<ExprId>> = vec![None; body.var_count()];
        for id in body.ids().filter(|id| live[id.index()]) {
            if let Node::Let { bindings, .. } = body.node(id) {
                for &(v, value) in body.bindings(*bindings) {
                    value_of[v.index()] = Some(value);
                }
            }
        }
        let mut slots: Vec<TermId> = Vec::with_capacity(body.len());
        let mut callees: Vec<(Box<str>, TermId)> = Vec::new();
        let mut constants: HashTable<(DType, Box<[usize]>, TermId)> = HashTable::new();
        let mut relations: HashTable<usize> = HashTable::new();
        let mut memo: Vec<Relation> = Vec::new();
        for id in body.ids() {
            if !live[id.index()] {
                slots.push(0);
                continue;
            }
            let span = body.span(id);
            let t = match body.node(id) {
                Node::Var(v) => match vars[v.index()] {
                    Some(t) => t,
                    None => {
                        let data = body.var(*v);
                        let t = match value_of[v.index()] {
                            Some(value) if data.annotation.is_none() && value < id => {
                                slots[value.index()]
                            }
                            _ => self.annotation(data.annotation.as_ref()),
                        };
                        vars[v.index()] = Some(t);
                        t
                    }
                },
                Node::Global(g) => {
                    let name = body.global(*g);
                    let t = match self.globals.get(name) {
                        Some(&t) => t,
                        None => match known(name) {
                            Some(ty) => {
                                let t = self.lift(&ty);
                                self.globals.insert(name.into(), t);
                                t
                            }
                            None => {
                                self.problem(
                                    format!("`@{name}` is not defined in the module"),
                                    span,
                                );
                                self.fresh()
                            }
                        },
                    };
                    callees.push((name.into(), t));
                    t
                }
                Node::Constant(k) => {
                    let c = body.constant(*k);
                    let (dtype, shape) = (c.dtype(), c.shape());
                    let hash = hash_of(&(dtype, shape));
                    match constants.find(hash, |(d, s, _)| *d == dtype && **s == *shape) {
                        Some(&(_, _, t)) => t,
                        None => {
                            let ty = self
                                .intern(Type::from(c.tensor_type()))
                                .expect("a tensor type nests no deeper than 0");
                            let t = self.known(ty);
                            constants.insert_unique(hash, (dtype, shape.into(), t), |(d, s, _)| {
                                hash_of(&(*d, &**s))
                            });
                            t
                        }
                    }
                }
                Node::CallOp { sig, args } => {
                    let Sig { op, attrs } = body.sig(*sig);
                    let args = body.list(*args);
                    if let Err(msg) = op.check_arity(args.len()) {
                        self.problem(msg, span);
                        self.fresh()
                    } else {
                        let mut arg_terms = std::mem::take(&mut self.arg_terms);
                        arg_terms.clear();
                        arg_terms.extend(args.iter().map(|a| slots[a.index()]));
                        let t = self.op_call(
                            index,
                            body,
                            op,
                            attrs,
                            &arg_terms,
                            span,
                            (&mut relations, &mut memo),
                        );
                        self.arg_terms = arg_terms;
                        t
                    }
                }
                Node::Call { callee, args } => {
                    let args: Vec<TermId> =
                        body.list(*args).iter().map(|a| slots[a.index()]).collect();
                    self.call(slots[callee.index()], args, span)
                }
                Node::Let {
                    bindings,
                    body: result,
                } => {
                    for &(v, value) in body.bindings(*bindings) {
                        let data = body.var(v);
                        let vt = slots[value.index()];
                        match vars[v.index()] {
                            Some(t) if t == vt => {}
                            None if data.annotation.is_none() => vars[v.index()] = Some(vt),
                            declared => {
                                let declared = match declared {
                                    Some(t) => t,
                                    None => {
                                        let t = self.annotation(data.annotation.as_ref());
                                        vars[v.index()] = Some(t);
                                        t
                                    }
                                };
                                let at = operand_span(body, value, data.span.or(span));
                                self.unify(declared, vt, at, || {
                                    format!(
                                        "the value of `%{}` does not have its declared type",
                                        data.name
                                    )
                                });
                            }
                        }
                    }
                    slots[result.index()]
                }
                Node::Tuple(fields) => {
                    let fields: Vec<TermId> = body
                        .list(*fields)
                        .iter()
                        .map(|a| slots[a.index()])
                        .collect();
                    self.tuple(&fields, span)
                }
                Node::Proj(tuple, index) => {
                    let out = self.fresh();
                    let p = Proj {
                        tuple: slots[tuple.index()],
                        index: *index,
                        out,
                        span,
                    };
                    if !self.try_proj(&p) {
                        self.projs.push(p);
                    }
                    out
                }
                Node::If(c, then, otherwise) => {
                    let bool_scalar = self
                        .intern(Type::scalar(DType::Bool))
                        .expect("a scalar nests no deeper than 0");
                    let b = self.known(bool_scalar);
                    self.unify(b, slots[c.index()], operand_span(body, *c, span), || {
                        "the condition of `if` must be a bool scalar".to_string()
                    });
                    let (tt, ot) = (slots[then.index()], slots[otherwise.index()]);
                    self.unify(tt, ot, operand_span(body, *otherwise, span), || {
                        "the branches of `if` have different types".to_string()
                    });
                    tt
                }
                Node::Closure(c) => {
                    let data = body.closure(*c);
                    let params: Vec<TermId> = data
                        .params
                        .iter()
                        .map(|p| match vars[p.index()] {
                            Some(t) => t,
                            None => {
                                let t = self.annotation(body.var(*p).annotation.as_ref());
                                vars[p.index()] = Some(t);
                                t
                            }
                        })
                        .collect();
                    let ret = self.annotation(data.ret_type.as_ref());
                    self.unify(
                        ret,
                        slots[data.body.index()],
                        operand_span(body, data.body, span),
                        || "the function's body does not have its declared result type".to_string(),
                    );
                    if self.checked(&params, Some(ret)).is_none() {
                        self.deep(span);
                        self.fresh()
                    } else {
                        self.func_term(&params, ret)
                    }
                }
            };
            slots.push(t);
        }
        let result = slots[f.root.index()];
        self.unify(ret, result, operand_span(body, f.root, f.span), || {
            "the function's body does not have its declared result type".to_string()
        });
        Scan {
            slots,
            live,
            vars,
            callees,
        }
    }

    /// The type of a tuple of `fields`: a complete type when every field's is.
    fn tuple(&mut self, fields: &[TermId], span: Option<Span>) -> TermId {
        let mut ids = Vec::with_capacity(fields.len());
        for &f in fields {
            let f = self.find(f);
            match self.terms[f as usize] {
                Term::Known(id) => ids.push(id),
                _ => {
                    if self.checked(fields, None).is_none() {
                        self.deep(span);
                        return self.fresh();
                    }
                    return self.tuple_term(fields);
                }
            }
        }
        let ty = Type::Tuple(ids.iter().map(|&id| self.table.get(id).clone()).collect());
        match self.intern(ty) {
            Some(id) => self.known(id),
            None => {
                self.deep(span);
                self.fresh()
            }
        }
    }

    /// The type of a call of operator `op` on arguments of types `args`.
    #[allow(clippy::too_many_arguments)]
    fn op_call(
        &mut self,
        function: usize,
        body: &Body,
        op: Op,
        attrs: AttrsId,
        args: &[TermId],
        span: Option<Span>,
        (relations, memo): (&mut HashTable<usize>, &mut Vec<Relation>),
    ) -> TermId {
        let mut ids = std::mem::take(&mut self.arg_ids);
        ids.clear();
        let mut complete = true;
        for &a in args {
            match self.concrete(a) {
                Some(id) => ids.push(id),
                None => {
                    complete = false;
                    break;
                }
            }
        }
        if !complete {
            self.arg_ids = ids;
            let out = self.fresh();
            self.pending.push(Pending {
                function,
                op,
                attrs,
                args: args.to_vec(),
                out,
                span,
            });
            return out;
        }
        let hash = hash_of(&(op_key(op), attrs, &ids[..]));
        let same = |&i: &usize| {
            let r: &Relation = &memo[i];
            r.op == op && r.attrs == attrs && *r.operands == *ids
        };
        let result = match relations.find(hash, same) {
            Some(&i) => memo[i].result.clone(),
            None => {
                let mut types = std::mem::take(&mut self.arg_types);
                types.clear();
                types.extend(ids.iter().map(|&id| self.table.get(id).clone()));
                let result = op.infer(&types, body.attrs(attrs)).and_then(|t| {
                    self.intern(t).ok_or_else(|| {
                        format!("this type nests deeper than {MAX_TYPE_DEPTH} levels")
                    })
                });
                types.clear();
                self.arg_types = types;
                relations.insert_unique(hash, memo.len(), |&i| {
                    let r: &Relation = &memo[i];
                    hash_of(&(op_key(r.op), r.attrs, &r.operands[..]))
                });
                memo.push(Relation {
                    op,
                    attrs,
                    operands: ids.as_slice().into(),
                    result: result.clone(),
                });
                result
            }
        };
        self.arg_ids = ids;
        match result {
            Ok(id) => self.known(id),
            Err(msg) => {
                // Every call with these types is reported, not only the first.
                self.problem(msg, span);
                self.fresh()
            }
        }
    }

    /// The type of a call of a function value of type `callee` on arguments of types `args`.
    fn call(&mut self, callee: TermId, args: Vec<TermId>, span: Option<Span>) -> TermId {
        let ret = self.fresh();
        let head = self.find(callee);
        let arity = match self.terms[head as usize] {
            Term::Func { len, .. } => Some(Ok(len as usize)),
            Term::Known(id) => match self.table.get(id) {
                Type::Func(f) => Some(Ok(f.params.len())),
                _ => Some(Err(())),
            },
            Term::Tuple { .. } => Some(Err(())),
            Term::Var => None,
        };
        match arity {
            Some(Ok(n)) if n != args.len() => {
                self.problem(
                    format!(
                        "this function takes {n} argument{}, {} given",
                        if n == 1 { "" } else { "s" },
                        args.len()
                    ),
                    span,
                );
                return ret;
            }
            Some(Err(())) => {
                let shown = self.show(head);
                self.problem(
                    format!("a value of type `{shown}` is called, but it is not a function"),
                    span,
                );
                return ret;
            }
            _ => {}
        }
        let want = self.func_term(&args, ret);
        self.unify(callee, want, span, || {
            "the arguments do not fit the function's parameters".to_string()
        });
        ret
    }

    fn try_relation(&mut self, p: &Pending, functions: &[FunctionInput<'_>]) -> bool {
        let mut types = Vec::with_capacity(p.args.len());
        for &a in &p.args {
            match self.concrete(a) {
                Some(id) => types.push(self.table.get(id).clone()),
                None => return false,
            }
        }
        let attrs = functions[p.function].body.attrs(p.attrs);
        match p.op.infer(&types, attrs) {
            Ok(t) => match self.intern(t) {
                Some(id) => {
                    let t = self.known(id);
                    self.unify(p.out, t, p.span, || {
                        format!("the result of `{}`", p.op.name())
                    });
                }
                None => self.deep(p.span),
            },
            Err(msg) => self.problem(msg, p.span),
        }
        true
    }

    fn try_proj(&mut self, p: &Proj) -> bool {
        let head = self.find(p.tuple);
        let field = match self.terms[head as usize] {
            Term::Var => return false,
            Term::Tuple { start, len } => Ok(self
                .items(start, len)
                .get(p.index as usize)
                .copied()
                .ok_or(len as usize)),
            Term::Known(id) => match self.table.get(id) {
                Type::Tuple(fields) => match fields.get(p.index as usize).cloned() {
                    Some(f) => Ok(Ok(self.lift(&f))),
                    None => Ok(Err(fields.len())),
                },
                _ => Err(()),
            },
            Term::Func { .. } => Err(()),
        };
        match field {
            Ok(Ok(f)) => {
                self.unify(p.out, f, p.span, || "the projected field".to_string());
            }
            Ok(Err(len)) => self.problem(
                format!(
                    "field {} of a tuple of {len} fields does not exist",
                    p.index
                ),
                p.span,
            ),
            Err(()) => {
                let shown = self.show(head);
                self.problem(
                    format!(
                        "`.{}` projects a tuple field, but the value has type `{shown}`",
                        p.index
                    ),
                    p.span,
                );
            }
        }
        true
    }

    fn solve(&mut self, functions: &[FunctionInput<'_>]) {
        loop {
            let mut progress = false;
            for p in std::mem::take(&mut self.pending) {
                if self.try_relation(&p, functions) {
                    progress = true;
                } else {
                    self.pending.push(p);
                }
            }
            for p in std::mem::take(&mut self.projs) {
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
        for p in std::mem::take(&mut self.pending) {
            self.problem(
                format!(
                    "cannot infer the argument types of `{}`: annotate the variables involved",
                    p.op.name()
                ),
                p.span,
            );
        }
        for p in std::mem::take(&mut self.projs) {
            self.problem(
                "cannot infer the type of the tuple projected here: annotate it".to_string(),
                p.span,
            );
        }
    }
}

/// How deeply `t` nests (bounded: a `Type` deeper than [`MAX_TYPE_DEPTH`] is not interned).
fn type_depth(t: &Type) -> usize {
    match t {
        Type::Tensor(_) | Type::Unknown => 0,
        Type::Tuple(fields) => 1 + fields.iter().map(type_depth).max().unwrap_or(0),
        Type::Func(f) => {
            1 + f
                .params
                .iter()
                .chain([&f.ret])
                .map(type_depth)
                .max()
                .unwrap_or(0)
        }
    }
}

/// Whether complete types `a` and `b` unify (dimensions that are not static match any), and
/// if not, what differs.
fn compare_known(a: &Type, b: &Type) -> Result<(), String> {
    match (a, b) {
        (Type::Tensor(p), Type::Tensor(q)) => {
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
        (Type::Tuple(p), Type::Tuple(q)) => {
            if p.len() != q.len() {
                return Err(format!(" ({} fields vs {})", p.len(), q.len()));
            }
            p.iter().zip(q).try_for_each(|(x, y)| compare_known(x, y))
        }
        (Type::Func(p), Type::Func(q)) => {
            if p.params.len() != q.params.len() {
                return Err(format!(
                    " ({} parameters vs {})",
                    p.params.len(),
                    q.params.len()
                ));
            }
            p.params
                .iter()
                .zip(&q.params)
                .try_for_each(|(x, y)| compare_known(x, y))?;
            compare_known(&p.ret, &q.ret)
        }
        _ => Err(String::new()),
    }
}
