//! Types as a side table: interned per body (a node's entry is a 4-byte [`TypeId`]), with the
//! operator type relations memoised, so a function whose nodes repeat a few types computes
//! each relation once.

use std::hash::{Hash, Hasher};

use hashbrown::HashTable;
use rustc_hash::{FxHashMap, FxHasher};

use super::body::{AttrsId, Body, ExprId, Node, Sig};
use super::index::{Idx, IndexVec, define_index};
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

/// The type of each node that follows from its operands alone: variables from their
/// annotation or their binding's value, constants, operator calls (by the operator's type
/// relation), tuples and projections. Calls of functions, closures, `if` and blocks have none,
/// nor anything whose operands' types are unknown. One scan over the ids (operands first); in
/// a scheduled body a binding's value precedes its variable's use node, so a variable's type
/// is known when its node is reached.
///
/// ```
/// use irpass_ir::Module;
/// use irpass_ir::arena::{ArenaFunction, local_types};
/// let m = Module::parse("def @main(%x: Tensor[(2, 3), float32]) { let %y = exp(%x); sum(%y, axis=[1]) }").unwrap();
/// let a = ArenaFunction::from_function(m.get("main").unwrap());
/// let types = local_types(&a.body);
/// let sum = a.body.ids().rev().find(|&e| matches!(a.body.node(e), irpass_ir::arena::Node::CallOp { .. })).unwrap();
/// assert_eq!(types.of(sum).unwrap().to_string(), "Tensor[(2), float32]");
/// assert_eq!(types.table.len(), 2, "two distinct types");
/// ```
pub fn local_types(body: &Body) -> LocalTypes {
    let mut value_of: Vec<Option<ExprId>> = vec![None; body.var_count()];
    for &(v, value) in &body.bindings {
        value_of[v.index()] = Some(value);
    }
    let mut table = TypeTable::default();
    let mut of: Vec<Option<TypeId>> = vec![None; body.len()];
    let mut constants: HashTable<(DType, Box<[usize]>, TypeId)> = HashTable::new();
    let mut relations: HashTable<usize> = HashTable::new();
    let mut memo: Vec<Relation> = Vec::new();
    let mut operands: Vec<TypeId> = Vec::new();
    for id in body.ids() {
        let t = match body.node(id) {
            Node::Var(v) => match &body.var(*v).annotation {
                Some(t) if t.is_complete() => Some(table.intern(t.clone())),
                _ => value_of[v.index()].and_then(|e| of[e.index()]),
            },
            Node::Constant(k) => {
                let t = body.constant(*k);
                let (dtype, shape) = (t.dtype(), t.shape());
                let hash = hash_of(&(dtype, shape));
                let found = constants.find(hash, |(d, s, _)| *d == dtype && **s == *shape);
                Some(match found {
                    Some(&(_, _, ty)) => ty,
                    None => {
                        let ty = table.intern(Type::from(t.tensor_type()));
                        constants.insert_unique(hash, (dtype, shape.into(), ty), |(d, s, _)| {
                            hash_of(&(*d, &**s))
                        });
                        ty
                    }
                })
            }
            Node::CallOp { sig, args } => {
                let Sig { op, attrs } = body.sig(*sig);
                let (op, attrs) = (&op, &attrs);
                operands.clear();
                let known = body.list(*args).iter().all(|a| match of[a.index()] {
                    Some(t) => {
                        operands.push(t);
                        true
                    }
                    None => false,
                });
                if known {
                    let hash = hash_of(&(op.name(), *attrs, &operands[..]));
                    let same = |&i: &usize| {
                        let r: &Relation = &memo[i];
                        r.op == *op && r.attrs == *attrs && *r.operands == *operands
                    };
                    match relations.find(hash, same) {
                        Some(&i) => memo[i].result,
                        None => {
                            let types: Vec<Type> =
                                operands.iter().map(|&t| table.get(t).clone()).collect();
                            let result = op
                                .infer(&types, body.attrs(*attrs))
                                .ok()
                                .map(|t| table.intern(t));
                            relations.insert_unique(hash, memo.len(), |&i| {
                                let r: &Relation = &memo[i];
                                hash_of(&(r.op.name(), r.attrs, &r.operands[..]))
                            });
                            memo.push(Relation {
                                op: *op,
                                attrs: *attrs,
                                operands: operands.as_slice().into(),
                                result,
                            });
                            result
                        }
                    }
                } else {
                    None
                }
            }
            Node::Tuple(fields) => body
                .list(*fields)
                .iter()
                .map(|a| of[a.index()].map(|t| table.get(t).clone()))
                .collect::<Option<Vec<Type>>>()
                .map(|fields| table.intern(Type::Tuple(fields))),
            Node::Proj(t, i) => match of[t.index()].map(|t| table.get(t)) {
                Some(Type::Tuple(fields)) => {
                    fields.get(*i as usize).cloned().map(|f| table.intern(f))
                }
                _ => None,
            },
            _ => None,
        };
        of[id.index()] = t;
    }
    LocalTypes { table, of }
}

fn hash_of(v: &impl Hash) -> u64 {
    let mut h = FxHasher::default();
    v.hash(&mut h);
    h.finish()
}
