//! The scan: one pass over a function's ids (operands first) that gives every node a term and
//! records the operator relations and projections whose operand types are not known yet.

use hashbrown::HashTable;

use super::terms::{
    Infer, Pending, Proj, Relation, Scan, Term, TermId, hash_of, op_key, operand_span,
};
use super::{FunctionInput, MAX_TYPE_DEPTH};
use crate::body::{AttrsId, Body, ExprId, Idx, Node, Sig};
use crate::{DType, Op, Span, Type};

/// What the scan of one function keeps while it walks the ids.
struct ScanState {
    /// Each variable's term, once known.
    vars: Vec<Option<TermId>>,
    /// The value each `let`-bound variable is bound to.
    value_of: Vec<Option<ExprId>>,
    /// Each node's term, by id (0 for dead nodes).
    slots: Vec<TermId>,
    /// The globals the function refers to, with their terms.
    callees: Vec<(Box<str>, TermId)>,
    /// One term per constant type.
    constants: HashTable<(DType, Box<[usize]>, TermId)>,
    /// Operator relations already posed, for sharing.
    relations: HashTable<usize>,
    memo: Vec<Relation>,
}

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
        let mut st = ScanState {
            vars: vec![None; body.var_count()],
            value_of: vec![None; body.var_count()],
            slots: Vec::with_capacity(body.len()),
            callees: Vec::new(),
            constants: HashTable::new(),
            relations: HashTable::new(),
            memo: Vec::new(),
        };
        for (&p, &t) in f.params.iter().zip(params) {
            st.vars[p.index()] = Some(t);
        }
        for id in body.ids().filter(|id| live[id.index()]) {
            if let Node::Let { bindings, .. } = body.node(id) {
                for &(v, value) in body.bindings(*bindings) {
                    st.value_of[v.index()] = Some(value);
                }
            }
        }
        for id in body.ids() {
            let t = if live[id.index()] {
                self.node_term(&mut st, index, body, id, known)
            } else {
                0
            };
            st.slots.push(t);
        }
        let result = st.slots[f.root.index()];
        self.unify(ret, result, operand_span(body, f.root, f.span), || {
            "the function's body does not have its declared result type".to_string()
        });
        Scan {
            slots: st.slots,
            live,
            vars: st.vars,
            callees: st.callees,
        }
    }

    /// The term of live node `id`, its operands' terms already in `st.slots`.
    fn node_term(
        &mut self,
        st: &mut ScanState,
        index: usize,
        body: &Body,
        id: ExprId,
        known: &dyn Fn(&str) -> Option<Type>,
    ) -> TermId {
        let span = body.span(id);
        match body.node(id) {
            Node::Var(v) => match st.vars[v.index()] {
                Some(t) => t,
                None => {
                    let data = body.var(*v);
                    let t = match st.value_of[v.index()] {
                        Some(value) if data.annotation.is_none() && value < id => {
                            st.slots[value.index()]
                        }
                        _ => self.annotation(data.annotation.as_ref()),
                    };
                    st.vars[v.index()] = Some(t);
                    t
                }
            },
            Node::Global(g) => {
                let name = body.global(*g);
                let t = self.global_term(name, span, known);
                st.callees.push((name.into(), t));
                t
            }
            Node::Constant(k) => self.constant_term(st, body, *k),
            Node::CallOp { sig, args } => {
                let Sig { op, attrs } = body.sig(*sig);
                let args = body.list(*args);
                if let Err(msg) = op.check_arity(args.len()) {
                    self.problem(msg, span);
                    return self.fresh();
                }
                let mut arg_terms = std::mem::take(&mut self.arg_terms);
                arg_terms.clear();
                arg_terms.extend(args.iter().map(|a| st.slots[a.index()]));
                let t = self.op_call(
                    index,
                    body,
                    op,
                    attrs,
                    &arg_terms,
                    span,
                    (&mut st.relations, &mut st.memo),
                );
                self.arg_terms = arg_terms;
                t
            }
            Node::Call { callee, args } => {
                let args: Vec<TermId> = body
                    .list(*args)
                    .iter()
                    .map(|a| st.slots[a.index()])
                    .collect();
                self.call(st.slots[callee.index()], args, span)
            }
            Node::Let {
                bindings,
                body: result,
            } => {
                for &(v, value) in body.bindings(*bindings) {
                    self.bind(st, body, v, value, span);
                }
                st.slots[result.index()]
            }
            Node::Tuple(fields) => {
                let fields: Vec<TermId> = body
                    .list(*fields)
                    .iter()
                    .map(|a| st.slots[a.index()])
                    .collect();
                self.tuple(&fields, span)
            }
            Node::Proj(tuple, index) => {
                let out = self.fresh();
                let p = Proj {
                    tuple: st.slots[tuple.index()],
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
                self.unify(b, st.slots[c.index()], operand_span(body, *c, span), || {
                    "the condition of `if` must be a bool scalar".to_string()
                });
                let (tt, ot) = (st.slots[then.index()], st.slots[otherwise.index()]);
                self.unify(tt, ot, operand_span(body, *otherwise, span), || {
                    "the branches of `if` have different types".to_string()
                });
                tt
            }
            Node::Closure(c) => self.closure_term(st, body, *c, span),
        }
    }

    /// The term of global `name`: the module's, or the type `known` gives it.
    fn global_term(
        &mut self,
        name: &str,
        span: Option<Span>,
        known: &dyn Fn(&str) -> Option<Type>,
    ) -> TermId {
        if let Some(&t) = self.globals.get(name) {
            return t;
        }
        match known(name) {
            Some(ty) => {
                let t = self.lift(&ty);
                self.globals.insert(name.into(), t);
                t
            }
            None => {
                self.problem(format!("`@{name}` is not defined in the module"), span);
                self.fresh()
            }
        }
    }

    /// The term of a constant: one per dtype and shape.
    fn constant_term(
        &mut self,
        st: &mut ScanState,
        body: &Body,
        k: crate::body::ConstId,
    ) -> TermId {
        let c = body.constant(k);
        let (dtype, shape) = (c.dtype(), c.shape());
        let hash = hash_of(&(dtype, shape));
        if let Some(&(_, _, t)) = st
            .constants
            .find(hash, |(d, s, _)| *d == dtype && **s == *shape)
        {
            return t;
        }
        let ty = self
            .intern(Type::from(c.tensor_type()))
            .expect("a tensor type nests no deeper than 0");
        let t = self.known(ty);
        st.constants
            .insert_unique(hash, (dtype, shape.into(), t), |(d, s, _)| {
                hash_of(&(*d, &**s))
            });
        t
    }

    /// A `let` binding of `v` to `value`: the variable takes the value's term, or its declared
    /// type is unified with it.
    fn bind(
        &mut self,
        st: &mut ScanState,
        body: &Body,
        v: crate::body::VarId,
        value: ExprId,
        span: Option<Span>,
    ) {
        let data = body.var(v);
        let vt = st.slots[value.index()];
        let declared = match st.vars[v.index()] {
            Some(t) if t == vt => return,
            None if data.annotation.is_none() => {
                st.vars[v.index()] = Some(vt);
                return;
            }
            Some(t) => t,
            None => {
                let t = self.annotation(data.annotation.as_ref());
                st.vars[v.index()] = Some(t);
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

    /// The term of a closure: its parameters' and declared result's, its body unified with
    /// the result.
    fn closure_term(
        &mut self,
        st: &mut ScanState,
        body: &Body,
        c: crate::body::ClosureId,
        span: Option<Span>,
    ) -> TermId {
        let data = body.closure(c);
        let params: Vec<TermId> = data
            .params
            .iter()
            .map(|p| match st.vars[p.index()] {
                Some(t) => t,
                None => {
                    let t = self.annotation(body.var(*p).annotation.as_ref());
                    st.vars[p.index()] = Some(t);
                    t
                }
            })
            .collect();
        let ret = self.annotation(data.ret_type.as_ref());
        self.unify(
            ret,
            st.slots[data.body.index()],
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
