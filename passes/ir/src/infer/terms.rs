//! The terms of inference: types with unknowns in a union-find, interned into the
//! function's [`TypeTable`], and their unification (through an explicit list of pairs; the
//! only recursions, over a type's structure, stop at [`MAX_TYPE_DEPTH`]).

use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap, FxHasher};

use super::local::{TypeId, TypeTable};
use super::{MAX_PROBLEMS, MAX_TYPE_DEPTH};
use crate::body::{AttrsId, Body, ExprId, Idx, Node};
use crate::error::{ErrorKind, IrError, Problem};
use crate::{Dim, Op, Span, Type};

pub(super) type TermId = u32;

/// A type during inference.
#[derive(Clone, Copy, Debug)]
pub(super) enum Term {
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
pub(super) struct Pending {
    pub(super) function: usize,
    pub(super) op: Op,
    pub(super) attrs: AttrsId,
    pub(super) args: Vec<TermId>,
    pub(super) out: TermId,
    pub(super) span: Option<Span>,
}

/// A projection waiting for its tuple's type.
pub(super) struct Proj {
    pub(super) tuple: TermId,
    pub(super) index: u32,
    pub(super) out: TermId,
    pub(super) span: Option<Span>,
}

/// What the scan of one function leaves for the output.
pub(super) struct Scan {
    pub(super) slots: Vec<TermId>,
    pub(super) live: Vec<bool>,
    pub(super) vars: Vec<Option<TermId>>,
    pub(super) callees: Vec<(Box<str>, TermId)>,
}

/// A memoised relation: operator, attributes and operand types to the result.
pub(super) struct Relation {
    pub(super) op: Op,
    pub(super) attrs: AttrsId,
    pub(super) operands: Box<[TypeId]>,
    pub(super) result: Result<TypeId, String>,
}

#[derive(Default)]
pub(super) struct Infer {
    pub(super) table: TypeTable,
    /// How deeply each type of `table` nests.
    pub(super) depths: Vec<u16>,
    pub(super) terms: Vec<Term>,
    pub(super) parent: Vec<TermId>,
    /// How deeply each structure term nested when it was made (a lower bound once its
    /// unknowns are solved).
    pub(super) term_depths: Vec<u16>,
    pub(super) lists: Vec<TermId>,
    /// The one `Known` term of each type.
    pub(super) known_terms: Vec<Option<TermId>>,
    /// Scratch: the argument terms of the call being typed.
    pub(super) arg_terms: Vec<TermId>,
    pub(super) globals: FxHashMap<Box<str>, TermId>,
    pub(super) pending: Vec<Pending>,
    pub(super) projs: Vec<Proj>,
    pub(super) problems: Vec<Problem>,
    /// Scratch: known argument types.
    pub(super) arg_ids: Vec<TypeId>,
    pub(super) arg_types: Vec<Type>,
}

/// Where a problem with operand `e` of a node written at `user` is reported: at the operand,
/// unless it is a variable, which is one node for all its uses.
pub(super) fn operand_span(body: &Body, e: ExprId, user: Option<Span>) -> Option<Span> {
    match body.node(e) {
        Node::Var(_) => user,
        _ => body.span(e).or(user),
    }
}

/// An operator's identity for hashing: its definition's address (no string to hash).
pub(super) fn op_key(op: Op) -> usize {
    std::ptr::from_ref(op.def()) as usize
}

pub(super) fn hash_of(v: &impl Hash) -> u64 {
    let mut h = FxHasher::default();
    v.hash(&mut h);
    h.finish()
}

impl Infer {
    pub(super) fn problem(&mut self, message: String, span: Option<Span>) {
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(Problem {
                message,
                span,
                note: None,
            });
        }
    }

    pub(super) fn error(&mut self) -> IrError {
        let mut problems = std::mem::take(&mut self.problems);
        problems.sort_by_key(|p| p.span.map_or(u32::MAX, |s| s.start));
        IrError {
            kind: ErrorKind::Type,
            problems,
            source: None,
        }
    }

    pub(super) fn term(&mut self, t: Term) -> TermId {
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

    pub(super) fn fresh(&mut self) -> TermId {
        self.term(Term::Var)
    }

    pub(super) fn list(&mut self, items: &[TermId]) -> (u32, u32) {
        let start = u32::try_from(self.lists.len()).expect("more than u32::MAX type terms");
        self.lists.extend_from_slice(items);
        (start, items.len() as u32)
    }

    /// How deeply `t` nests as far as solved so far (an unknown counts as a tensor).
    pub(super) fn depth_of(&mut self, t: TermId) -> usize {
        let t = self.find(t);
        match self.terms[t as usize] {
            Term::Known(id) => self.depths[id.index()] as usize,
            Term::Var => 0,
            Term::Tuple { .. } | Term::Func { .. } => self.term_depths[t as usize] as usize,
        }
    }

    /// A structure term of `items` (and `ret`), or `None` if it would nest deeper than
    /// [`MAX_TYPE_DEPTH`].
    pub(super) fn checked(&mut self, items: &[TermId], ret: Option<TermId>) -> Option<usize> {
        let mut depth = 0;
        for &t in items.iter().chain(ret.as_ref()) {
            depth = depth.max(self.depth_of(t));
        }
        (depth < MAX_TYPE_DEPTH).then_some(depth + 1)
    }

    pub(super) fn tuple_term(&mut self, fields: &[TermId]) -> TermId {
        let (start, len) = self.list(fields);
        self.term(Term::Tuple { start, len })
    }

    pub(super) fn func_term(&mut self, params: &[TermId], ret: TermId) -> TermId {
        let (start, len) = self.list(params);
        self.term(Term::Func { start, len, ret })
    }

    pub(super) fn items(&self, start: u32, len: u32) -> &[TermId] {
        &self.lists[start as usize..(start + len) as usize]
    }

    /// The id of complete type `t`, or `None` if it nests deeper than [`MAX_TYPE_DEPTH`].
    pub(super) fn intern(&mut self, t: Type) -> Option<TypeId> {
        let depth = match &t {
            Type::Tensor(_) | Type::Opaque(_) | Type::Unknown => 0,
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
    pub(super) fn known(&mut self, id: TypeId) -> TermId {
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
    pub(super) fn lift(&mut self, t: &Type) -> TermId {
        if t.is_complete()
            && let Some(id) = self.intern(t.clone())
        {
            return self.known(id);
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
            Type::Tensor(_) | Type::Opaque(_) | Type::Unknown => self.fresh(),
        }
    }

    pub(super) fn annotation(&mut self, t: Option<&Type>) -> TermId {
        match t {
            Some(t) => self.lift(t),
            None => self.fresh(),
        }
    }

    pub(super) fn find(&mut self, mut t: TermId) -> TermId {
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
    pub(super) fn zonk(&mut self, t: TermId) -> Option<Type> {
        self.zonk_at(t, 0, false)
    }

    /// `t` if it has no unknown left.
    pub(super) fn concrete(&mut self, t: TermId) -> Option<TypeId> {
        let t = self.find(t);
        if let Term::Known(id) = self.terms[t as usize] {
            return Some(id);
        }
        let ty = self.zonk_at(t, 0, true)?;
        self.intern(ty)
    }

    /// [`Infer::zonk`] at nesting `depth`; with `complete`, `None` at the first unknown.
    pub(super) fn zonk_at(&mut self, t: TermId, depth: usize, complete: bool) -> Option<Type> {
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
    pub(super) fn show(&mut self, t: TermId) -> String {
        match self.zonk(t) {
            Some(t) => t.to_string(),
            None => format!("(a type nested deeper than {MAX_TYPE_DEPTH})"),
        }
    }

    /// The output type id of `t` (a problem at `span` if it nests too deep).
    pub(super) fn output(&mut self, t: TermId, span: Option<Span>) -> TypeId {
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

    pub(super) fn deep(&mut self, span: Option<Span>) {
        self.problem(
            format!("this type nests deeper than {MAX_TYPE_DEPTH} levels"),
            span,
        );
    }

    /// Whether unknown `v` occurs in `t`.
    pub(super) fn occurs(&mut self, v: TermId, t: TermId) -> bool {
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
    pub(super) fn open(&mut self, id: TypeId) -> TermId {
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
            Type::Tensor(_) | Type::Opaque(_) | Type::Unknown => self.known(id),
        }
    }

    /// Unifies `a` and `b`; on a mismatch, reports `what` (built only then) with both types.
    pub(super) fn unify(
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

    pub(super) fn unify_terms(&mut self, a: TermId, b: TermId) -> Result<(), String> {
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
}

/// How deeply `t` nests (bounded: a `Type` deeper than [`MAX_TYPE_DEPTH`] is not interned).
pub(super) fn type_depth(t: &Type) -> usize {
    match t {
        Type::Tensor(_) | Type::Opaque(_) | Type::Unknown => 0,
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
pub(super) fn compare_known(a: &Type, b: &Type) -> Result<(), String> {
    match (a, b) {
        (Type::Tensor(p), Type::Tensor(q)) => {
            if p.dtype != q.dtype {
                return Err(format!(" (dtype {} vs {})", p.dtype, q.dtype));
            }
            if p.rank() != q.rank() {
                return Err(format!(" (rank {} vs {})", p.rank(), q.rank()));
            }
            for (i, (x, y)) in p.shape.iter().zip(&q.shape).enumerate() {
                if let (Dim::Static(x), Dim::Static(y)) = (x, y)
                    && x != y
                {
                    return Err(format!(" (dimension {i}: {x} vs {y})"));
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
