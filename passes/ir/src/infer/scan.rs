//! The scan: one pass over a function's ids (operands first) that gives every node a term and
//! records the operator relations and projections whose operand types are not known yet.

use hashbrown::HashTable;

use super::terms::{
    Infer, Pending, Proj, Relation, Scan, Term, TermId, hash_of, op_key, operand_span,
};
use super::{FunctionInput, MAX_TYPE_DEPTH};
use crate::body::{AttrsId, Body, ExprId, Idx, Node, Sig};
use crate::{DType, Op, Span, Type};

impl Infer {
    /// Types the nodes of function `index` reachable from its result.
    pub(super) fn function(
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
    pub(super) fn tuple(&mut self, fields: &[TermId], span: Option<Span>) -> TermId {
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
    pub(super) fn op_call(
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
    pub(super) fn call(&mut self, callee: TermId, args: Vec<TermId>, span: Option<Span>) -> TermId {
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
}
