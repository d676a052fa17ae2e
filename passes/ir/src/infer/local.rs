//! Types as a side table: interned per body (a node's entry is a 4-byte [`TypeId`]), with the
//! operator type relations memoised, so a function whose nodes repeat a few types computes
//! each relation once.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use hashbrown::HashTable;
use rustc_hash::{FxHashMap, FxHasher};

use crate::body::{AttrsId, Body, ExprId, Idx, IndexVec, Node, Sig, VarId, define_index};
use crate::{DType, Op, Type};

define_index! {
    /// A type of a [`TypeTable`].
    pub struct TypeId, "t";
}

/// Distinct types, each stored once.
#[derive(Clone, Debug, Default)]
pub struct TypeTable {
    types: IndexVec<TypeId, Type>,
    ids: FxHashMap<Type, TypeId>,
}

impl TypeTable {
    /// The id of `t` (the same id for equal types).
    pub fn intern(&mut self, t: Type) -> TypeId {
        if let Some(&id) = self.ids.get(&t) {
            return id;
        }
        let id = self.types.push(t.clone());
        self.ids.insert(t, id);
        id
    }

    /// The type `id`.
    pub fn get(&self, id: TypeId) -> &Type {
        &self.types[id]
    }

    /// The number of distinct types.
    pub fn len(&self) -> usize {
        self.types.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }
}

/// The type of each node that follows from its operands alone ([`local_types`]).
#[derive(Clone, Debug)]
pub struct LocalTypes {
    /// The distinct types.
    pub table: TypeTable,
    of: Vec<Option<TypeId>>,
}

impl LocalTypes {
    /// The type of node `e`, if known.
    pub fn of(&self, e: ExprId) -> Option<&Type> {
        self.of[e.index()].map(|t| self.table.get(t))
    }

    /// The type id of node `e`, if known.
    pub fn id(&self, e: ExprId) -> Option<TypeId> {
        self.of[e.index()]
    }
}

/// A memoised relation: operator, attributes and operand types to the result.
struct Relation {
    op: Op,
    attrs: AttrsId,
    operands: Box<[TypeId]>,
    result: Option<TypeId>,
}

/// The types of a body's nodes that follow from their operands alone, computed in id order as
/// far as asked: for a body being built (a rewrite's new body, whose nodes a pass wants the
/// types of before it is finished) as for a finished one ([`local_types`]).
///
/// A variable's type is the one given with [`LocalTyper::set_var`] (a rewrite gives each
/// variable the type it had in the input: variables keep their ids), else its complete
/// annotation; constants, operator calls (by the operator's type relation), tuples and
/// projections follow from their operands, a block has its result's type, an `if` the type
/// both its branches have, a closure with annotated parameters and result its function type,
/// and a call of a function value of known type that type's result. Calls of globals have
/// none, nor anything whose operands' types are unknown.
///
/// ```
/// use irpass_ir::body::BodyBuilder;
/// use irpass_ir::infer::LocalTyper;
/// use irpass_ir::{Attrs, DType, Op, Type};
/// let mut b = BodyBuilder::new();
/// let x = b.var("x", Some(Type::tensor(&[2, 3], DType::Float32)), None);
/// let xe = b.use_var(x);
/// let t = b.call_op(Op::get("transpose").unwrap(), &[xe], Attrs::new());
/// let mut types = LocalTyper::new();
/// assert_eq!(types.of(b.body(), t).unwrap().to_string(), "Tensor[(3, 2), float32]");
/// let s = b.call_op(Op::get("exp").unwrap(), &[t], Attrs::new()); // built after the question
/// assert_eq!(types.of(b.body(), s).unwrap().to_string(), "Tensor[(3, 2), float32]");
/// ```
#[derive(Default)]
pub struct LocalTyper {
    /// Shared with the [`BodyTypes`](super::BodyTypes) it was made from
    /// ([`LocalTyper::sharing`]) until a type that table lacks is interned.
    table: Arc<TypeTable>,
    /// The table it shares ids with, for [`LocalTyper::seed_from`] (kept, so that it is the
    /// same table and not another at its address).
    source: Option<Arc<TypeTable>>,
    /// Per id of the shared table: whether the type is complete (only complete types seed).
    complete: Vec<bool>,
    of: Vec<Option<TypeId>>,
    /// Which nodes are typed (in `of`; a node may be typed before earlier ones).
    done: Vec<bool>,
    vars: Vec<Option<TypeId>>,
    /// Types given for nodes ([`LocalTyper::set_node`]), by id.
    seeds: Vec<Option<TypeId>>,
    /// The value bound to each variable, for a finished body ([`local_types`]).
    value_of: Vec<Option<ExprId>>,
    constants: HashTable<(DType, Box<[usize]>, TypeId)>,
    relations: HashTable<usize>,
    memo: Vec<Relation>,
    operands: Vec<TypeId>,
}

impl LocalTyper {
    /// A typer that knows no variable's type but from its annotation.
    pub fn new() -> Self {
        LocalTyper::default()
    }

    /// A typer for a body rewritten from the one `types` describes: it starts from `types`'s
    /// table (shared, not copied, until it needs a type the table lacks), so a rebuilt node
    /// or a variable takes its old type by id ([`LocalTyper::seed_from`],
    /// [`LocalTyper::var_from`]) without hashing the type again.
    pub fn sharing(types: &super::BodyTypes) -> Self {
        let table = &types.table;
        LocalTyper {
            table: table.clone(),
            source: Some(table.clone()),
            complete: (0..table.len())
                .map(|i| table.get(TypeId::new(i)).is_complete())
                .collect(),
            // Room for a body and variables of the size `types` describes: a rewrite seeds
            // about as many nodes as it had.
            seeds: vec![None; types.nodes.len()],
            vars: vec![None; types.vars.len()],
            ..LocalTyper::default()
        }
    }

    /// A typer for the body a rewrite of `body` builds, `types` being `body`'s: it shares
    /// their table ([`LocalTyper::sharing`]) and each variable used in `body` has the type
    /// `types` gives it (variables keep their ids across a rewrite).
    pub fn for_rewrite_of(body: &Body, types: &super::BodyTypes) -> Self {
        let mut typer = LocalTyper::sharing(types);
        for v in 0..body.var_count() {
            let v = VarId::new(v);
            if body.var_node(v).is_some() {
                typer.var_from(types, v);
            }
        }
        typer
    }

    /// The id in this typer of type `id` of `types`'s table, when the type is complete: the
    /// same id when this typer was made [`LocalTyper::sharing`] `types`, else interned.
    #[inline]
    fn import(&mut self, types: &super::BodyTypes, id: TypeId) -> Option<TypeId> {
        if !self
            .source
            .as_ref()
            .is_some_and(|s| Arc::ptr_eq(s, &types.table))
        {
            let t = types.table.get(id);
            return t.is_complete().then(|| self.intern_owned(t.clone()));
        }
        // The shared table never changes: `complete` covers every id it has.
        self.complete[id.index()].then_some(id)
    }

    /// Node `new` has the type `types` gives node `old` (when complete): a node a rewrite
    /// rebuilt keeps the type it had.
    #[inline]
    pub fn seed_from(&mut self, types: &super::BodyTypes, old: crate::rewrite::OldId, new: ExprId) {
        if let Some(id) = self.import(types, types.id(old.id())) {
            self.set_node_id(new, id);
        }
    }

    /// Variable `v` has the type `types` gives it (when complete; variables keep their ids
    /// across a rewrite).
    #[inline]
    pub fn var_from(&mut self, types: &super::BodyTypes, v: VarId) {
        if let Some(id) = self.import(types, types.var_id(v)) {
            self.set_var_id(v, id);
        }
    }

    /// The id of `t`, interning it (the shared table is copied the first time it lacks a
    /// type).
    fn intern_owned(&mut self, t: Type) -> TypeId {
        if let Some(&id) = self.table.ids.get(&t) {
            return id;
        }
        Arc::make_mut(&mut self.table).intern(t)
    }

    /// Variable `v` has type `t`.
    pub fn set_var(&mut self, v: VarId, t: &Type) {
        if self.vars.len() <= v.index() {
            self.vars.resize(v.index() + 1, None);
        }
        let id = self.intern_owned(t.clone());
        self.vars[v.index()] = Some(id);
    }

    /// Node `e` has type `t` (a node a rewrite rebuilt has the type of the node it was rebuilt
    /// from, which may not follow from its operands alone: a call of a function, an `if`).
    /// Effective for a node not typed yet.
    pub fn set_node(&mut self, e: ExprId, t: &Type) {
        if self.seeds.len() <= e.index() {
            self.seeds.resize(e.index() + 1, None);
        }
        let id = self.intern_owned(t.clone());
        self.seeds[e.index()] = Some(id);
        if let Some(slot) = self.of.get_mut(e.index()) {
            slot.get_or_insert(id);
        }
    }

    /// Variable `v` is bound to node `value` (a `let`): a use of `v` without an annotation or
    /// a type given has `value`'s type.
    pub fn set_value(&mut self, v: VarId, value: ExprId) {
        if self.value_of.len() <= v.index() {
            self.value_of.resize(v.index() + 1, None);
        }
        self.value_of[v.index()] = Some(value);
    }

    /// The id of type `t` in this typer's table (for [`LocalTyper::set_node_id`]).
    pub fn intern(&mut self, t: &Type) -> TypeId {
        self.intern_owned(t.clone())
    }

    /// [`LocalTyper::set_var`] with a type already interned ([`LocalTyper::intern`]).
    #[inline]
    pub fn set_var_id(&mut self, v: VarId, id: TypeId) {
        if self.vars.len() <= v.index() {
            self.vars.resize(v.index() + 1, None);
        }
        self.vars[v.index()] = Some(id);
    }

    /// [`LocalTyper::set_node`] with a type already interned ([`LocalTyper::intern`]): a
    /// rewrite that seeds every rebuilt node interns each distinct type once.
    #[inline]
    pub fn set_node_id(&mut self, e: ExprId, id: TypeId) {
        if self.seeds.len() <= e.index() {
            self.seeds.resize(e.index() + 1, None);
        }
        self.seeds[e.index()] = Some(id);
        if let Some(slot) = self.of.get_mut(e.index()) {
            slot.get_or_insert(id);
        }
    }

    /// The type of node `e` of `body`, typing first what it depends on (its operands, a
    /// variable's bound value) and nothing else: a rewrite asking about one node of a large
    /// body types a few nodes, not the body.
    pub fn of(&mut self, body: &Body, e: ExprId) -> Option<&Type> {
        self.ensure(body, e);
        self.of[e.index()].map(|t| self.table.get(t))
    }

    /// Types `e` and what it depends on, with an explicit stack (no recursion however long a
    /// chain of untyped nodes is).
    fn ensure(&mut self, body: &Body, e: ExprId) {
        if self.done.get(e.index()).copied().unwrap_or(false) {
            return;
        }
        if self.of.len() < body.len() {
            self.of.resize(body.len(), None);
            self.done.resize(body.len(), false);
        }
        let mut stack = vec![(e, false)];
        while let Some((n, ready)) = stack.pop() {
            if self.done[n.index()] {
                continue;
            }
            let seeded = matches!(self.seeds.get(n.index()), Some(Some(_)));
            if !ready && !seeded {
                stack.push((n, true));
                let mut dep = |d: ExprId| stack.push((d, false));
                match body.node(n) {
                    Node::CallOp { args, .. } | Node::Tuple(args) => {
                        body.list(*args).iter().copied().for_each(&mut dep);
                    }
                    Node::Proj(t, _) => dep(*t),
                    Node::Var(v) => {
                        if let Some(Some(value)) = self.value_of.get(v.index()) {
                            dep(*value);
                        }
                    }
                    Node::If(_, t, o) => {
                        dep(*t);
                        dep(*o);
                    }
                    Node::Call { callee, .. } => dep(*callee),
                    Node::Let { body: result, .. } => dep(*result),
                    _ => {}
                }
                continue;
            }
            let t = self.node(body, n);
            self.of[n.index()] = t;
            self.done[n.index()] = true;
        }
    }

    /// The tensor type of node `e` of `body`, if it is a tensor of known type.
    pub fn tensor(&mut self, body: &Body, e: ExprId) -> Option<std::sync::Arc<crate::TensorType>> {
        match self.of(body, e)? {
            Type::Tensor(t) => Some(t.clone()),
            _ => None,
        }
    }

    /// Types the nodes of `body` up to `upto` (inclusive), in order.
    pub fn extend(&mut self, body: &Body, upto: ExprId) {
        if self.of.len() <= upto.index() {
            self.of.resize(upto.index() + 1, None);
            self.done.resize(upto.index() + 1, false);
        }
        for i in 0..=upto.index() {
            if !self.done[i] {
                let t = self.node(body, ExprId::new(i));
                self.of[i] = t;
                self.done[i] = true;
            }
        }
    }

    fn node(&mut self, body: &Body, id: ExprId) -> Option<TypeId> {
        if let Some(Some(t)) = self.seeds.get(id.index()) {
            return Some(*t);
        }
        let (of, done) = (&self.of, &self.done);
        match body.node(id) {
            Node::Var(v) => {
                if let Some(Some(t)) = self.vars.get(v.index()) {
                    return Some(*t);
                }
                match &body.var(*v).annotation {
                    Some(t) if t.is_complete() => Some(self.intern_owned(t.clone())),
                    _ => self
                        .value_of
                        .get(v.index())
                        .copied()
                        .flatten()
                        .filter(|e| done.get(e.index()).copied().unwrap_or(false))
                        .and_then(|e| of[e.index()]),
                }
            }
            Node::Constant(k) => {
                let t = body.constant(*k);
                let (dtype, shape) = (t.dtype(), t.shape());
                let hash = hash_of(&(dtype, shape));
                let found = self
                    .constants
                    .find(hash, |(d, s, _)| *d == dtype && **s == *shape);
                Some(match found {
                    Some(&(_, _, ty)) => ty,
                    None => {
                        let ty = self.intern_owned(Type::from(t.tensor_type()));
                        self.constants.insert_unique(
                            hash,
                            (dtype, shape.into(), ty),
                            |(d, s, _)| hash_of(&(*d, &**s)),
                        );
                        ty
                    }
                })
            }
            Node::CallOp { sig, args } => {
                let Sig { op, attrs } = body.sig(*sig);
                self.operands.clear();
                for a in body.list(*args) {
                    self.operands.push(of[a.index()]?);
                }
                let operands = &self.operands;
                let hash = hash_of(&(op.name(), attrs, &operands[..]));
                let memo = &self.memo;
                let same = |&i: &usize| {
                    let r: &Relation = &memo[i];
                    r.op == op && r.attrs == attrs && *r.operands == **operands
                };
                if let Some(&i) = self.relations.find(hash, same) {
                    return self.memo[i].result;
                }
                let types: Vec<Type> = operands
                    .iter()
                    .map(|&t| self.table.get(t).clone())
                    .collect();
                let result = op
                    .infer(&types, body.attrs(attrs))
                    .ok()
                    .map(|t| self.intern_owned(t));
                let memo = &self.memo;
                self.relations.insert_unique(hash, memo.len(), |&i| {
                    let r: &Relation = &memo[i];
                    hash_of(&(r.op.name(), r.attrs, &r.operands[..]))
                });
                self.memo.push(Relation {
                    op,
                    attrs,
                    operands: self.operands.as_slice().into(),
                    result,
                });
                result
            }
            Node::Tuple(fields) => {
                let fields = body
                    .list(*fields)
                    .iter()
                    .map(|a| of[a.index()].map(|t| self.table.get(t).clone()))
                    .collect::<Option<Vec<Type>>>()?;
                Some(self.intern_owned(Type::Tuple(fields)))
            }
            Node::Proj(t, i) => match of[t.index()].map(|t| self.table.get(t)) {
                Some(Type::Tuple(fields)) => {
                    let f = fields.get(*i as usize).cloned()?;
                    Some(self.intern_owned(f))
                }
                _ => None,
            },
            // Both branches of one type (interned once, so one id).
            Node::If(_, t, o) => of[t.index()].filter(|&a| Some(a) == of[o.index()]),
            Node::Let { body: result, .. } => of[result.index()],
            // A closure whose parameters and result are annotated; a call of a function
            // value of known type.
            Node::Closure(c) => {
                let data = body.closure(*c);
                let params = data
                    .params
                    .iter()
                    .map(|&p| body.var(p).annotation.clone().filter(Type::is_complete))
                    .collect::<Option<Vec<Type>>>()?;
                let ret = data.ret_type.clone().filter(Type::is_complete)?;
                Some(self.intern_owned(Type::Func(Box::new(crate::FuncType { params, ret }))))
            }
            Node::Call { callee, .. } => match of[callee.index()].map(|t| self.table.get(t)) {
                Some(Type::Func(f)) => {
                    let ret = f.ret.clone();
                    Some(self.intern_owned(ret))
                }
                _ => None,
            },
            _ => None,
        }
    }
}

/// The type of each node that follows from its operands alone: variables from their
/// annotation or their binding's value, constants, operator calls (by the operator's type
/// relation), tuples and projections; blocks, `if`s whose branches agree, annotated closures
/// and calls of function values of known type as [`LocalTyper`] types them. Calls of globals
/// have none, nor anything whose operands' types are unknown. One scan over the ids (operands first); in
/// a scheduled body a binding's value precedes its variable's use node, so a variable's type
/// is known when its node is reached.
///
/// ```
/// use irpass_ir::Module;
/// use irpass_ir::infer::local_types;
/// let m = Module::parse("def @main(%x: Tensor[(2, 3), float32]) { let %y = exp(%x); sum(%y, axis=[1]) }").unwrap();
/// let a = &m.get("main").unwrap().code;
/// let types = local_types(&a.body);
/// let sum = a.body.ids().rev().find(|&e| matches!(a.body.node(e), irpass_ir::body::Node::CallOp { .. })).unwrap();
/// assert_eq!(types.of(sum).unwrap().to_string(), "Tensor[(2), float32]");
/// assert_eq!(types.table.len(), 2, "two distinct types");
/// ```
pub fn local_types(body: &Body) -> LocalTypes {
    let mut typer = LocalTyper::new();
    typer.value_of = vec![None; body.var_count()];
    for &(v, value) in &body.bindings {
        typer.value_of[v.index()] = Some(value);
    }
    if let Some(last) = body.ids().next_back() {
        typer.extend(body, last);
    }
    LocalTypes {
        table: Arc::unwrap_or_clone(typer.table),
        of: typer.of,
    }
}

fn hash_of(v: &impl Hash) -> u64 {
    let mut h = FxHasher::default();
    v.hash(&mut h);
    h.finish()
}
