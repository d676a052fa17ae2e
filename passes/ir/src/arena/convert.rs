//! Between the node-per-expression IR ([`Function`], [`Expr`]) and arenas ([`Body`]), so that
//! the IR can be ported one part at a time with both in use.

use rustc_hash::FxHashMap;

use super::body::{Body, ClosureData, ExprId, Node, VarData, VarId};
use super::build::BodyBuilder;
use super::index::{Idx, IndexVec};
use crate::expr::Function;
use crate::visit::post_order;
use crate::{Call, Callee, Expr, ExprKind, Var};

/// A function as an arena: its body, parameters and result.
#[derive(Clone, Debug)]
pub struct ArenaFunction {
    /// The arena of the function and the closures in it.
    pub body: Body,
    /// The parameters.
    pub params: Vec<VarId>,
    /// The result.
    pub root: ExprId,
}

impl ArenaFunction {
    /// The arena of `f`: each node of its DAG once (sharing kept), operands first, in
    /// evaluation post-order; each variable one [`VarId`].
    ///
    /// ```
    /// use irpass_ir::Module;
    /// use irpass_ir::arena::ArenaFunction;
    /// let m = Module::parse("def @main(%x: float32) { %0 = exp(%x); add(%0, %0) }").unwrap();
    /// let a = ArenaFunction::from_function(m.get("main").unwrap());
    /// assert_eq!(a.body.len(), 3); // %x, exp, add: the shared `exp` is one node
    /// assert!(a.to_function_like(m.get("main").unwrap()).body.to_string().contains("exp(%x)"));
    /// ```
    pub fn from_function(f: &Function) -> ArenaFunction {
        Self::from_function_mapped(f).0
    }

    /// [`ArenaFunction::from_function`], and the id each node (by address) and each variable
    /// (by [`Var::id`]) of `f` became.
    pub(crate) fn from_function_mapped(
        f: &Function,
    ) -> (
        ArenaFunction,
        FxHashMap<usize, ExprId>,
        FxHashMap<u64, VarId>,
    ) {
        let mut c = FromExpr {
            b: BodyBuilder::new(),
            vars: FxHashMap::default(),
            nodes: FxHashMap::default(),
        };
        let params = f.params.iter().map(|p| c.var(p)).collect();
        post_order(&f.body, &mut |e| c.node(e));
        let root = c.nodes[&f.body.addr()];
        let a = ArenaFunction {
            body: c.b.finish(),
            params,
            root,
        };
        (a, c.nodes, c.vars)
    }

    /// The function with this body, and `like`'s result type, attributes and span.
    pub fn to_function_like(&self, like: &Function) -> Function {
        let body = &self.body;
        let vars: IndexVec<VarId, Var> = body
            .vars
            .as_slice()
            .iter()
            .map(|v: &VarData| Var::with_span(&*v.name, v.annotation.clone(), v.span))
            .collect();
        let live = body.reachable(self.root);
        let mut exprs: Vec<Option<Expr>> = vec![None; body.len()];
        for id in body.ids().filter(|id| live[id.index()]) {
            let get = |e: ExprId| exprs[e.index()].clone().expect("operands first");
            let kind = match body.node(id) {
                Node::Var(v) => {
                    exprs[id.index()] = Some(Expr::var(&vars[*v]));
                    continue;
                }
                Node::Global(g) => ExprKind::GlobalVar(body.global(*g).to_string()),
                Node::Constant(k) => ExprKind::Constant(body.constant(*k).clone()),
                Node::CallOp { sig, args } => {
                    let sig = body.sig(*sig);
                    ExprKind::Call(Call {
                        callee: Callee::Op(sig.op),
                        args: body.list(*args).iter().map(|&a| get(a)).collect(),
                        attrs: body.attrs(sig.attrs).clone(),
                    })
                }
                Node::Call { callee, args } => ExprKind::Call(Call {
                    callee: Callee::Expr(get(*callee)),
                    args: body.list(*args).iter().map(|&a| get(a)).collect(),
                    attrs: crate::Attrs::new(),
                }),
                Node::Let {
                    bindings,
                    body: result,
                } => {
                    let bs = body
                        .bindings(*bindings)
                        .iter()
                        .map(|&(v, value)| (vars[v].clone(), get(value)))
                        .collect();
                    ExprKind::Let(bs, get(*result))
                }
                Node::Tuple(fields) => {
                    ExprKind::Tuple(body.list(*fields).iter().map(|&a| get(a)).collect())
                }
                Node::Proj(t, i) => ExprKind::TupleGetItem(get(*t), *i as usize),
                Node::If(c, t, o) => ExprKind::If(get(*c), get(*t), get(*o)),
                Node::Closure(c) => {
                    let data = body.closure(*c);
                    ExprKind::Function(Function::new(
                        data.params.iter().map(|p| vars[*p].clone()).collect(),
                        data.ret_type.clone(),
                        get(data.body),
                        data.attrs.clone(),
                    ))
                }
            };
            exprs[id.index()] = Some(Expr::with_span(kind, body.span(id)));
        }
        let root = exprs[self.root.index()]
            .clone()
            .expect("the root is reachable");
        Function::with_span(
            self.params.iter().map(|p| vars[*p].clone()).collect(),
            like.ret_type.clone(),
            root,
            like.attrs.clone(),
            like.span,
        )
    }
}

impl From<super::Rewritten> for ArenaFunction {
    /// The function a rewrite produced.
    fn from(r: super::Rewritten) -> Self {
        ArenaFunction {
            body: r.body,
            params: r.params,
            root: r.root,
        }
    }
}

struct FromExpr {
    b: BodyBuilder,
    /// Old variable id to new.
    vars: FxHashMap<u64, VarId>,
    /// Old node address to new id (the old nodes stay alive: the function holds them).
    nodes: FxHashMap<usize, ExprId>,
}

impl FromExpr {
    fn var(&mut self, v: &Var) -> VarId {
        if let Some(&id) = self.vars.get(&v.id()) {
            return id;
        }
        let id = self.b.var(&v.name, v.annotation.clone(), v.span());
        self.vars.insert(v.id(), id);
        id
    }

    fn id(&self, e: &Expr) -> ExprId {
        match &e.kind {
            // A variable's use node is found by the variable (every use is that one node).
            ExprKind::Var(v) => {
                let v = self.vars[&v.id()];
                self.b
                    .body()
                    .var_node(v)
                    .expect("a used variable has its node")
            }
            _ => self.nodes[&e.addr()],
        }
    }

    fn node(&mut self, e: &Expr) {
        let id = match &e.kind {
            ExprKind::Var(_) => {
                let v = self.var(&e.as_var().expect("a variable node"));
                self.b.use_var(v)
            }
            ExprKind::GlobalVar(name) => self.b.global(name),
            ExprKind::Constant(t) => self.b.constant(t.clone()),
            ExprKind::Call(call) => {
                let args: Vec<ExprId> = call.args.iter().map(|c| self.id(c)).collect();
                match &call.callee {
                    Callee::Op(op) => self.b.call_op(*op, &args, call.attrs.clone()),
                    Callee::Expr(f) => {
                        let f = self.id(f);
                        self.b.call(f, &args)
                    }
                }
            }
            ExprKind::Let(bindings, body) => {
                let bs: Vec<(VarId, ExprId)> = bindings
                    .iter()
                    .map(|(v, value)| (self.var(v), self.id(value)))
                    .collect();
                let body = self.id(body);
                self.b.lets(&bs, body)
            }
            ExprKind::Tuple(fields) => {
                let fields: Vec<ExprId> = fields.iter().map(|c| self.id(c)).collect();
                self.b.tuple(&fields)
            }
            ExprKind::TupleGetItem(t, i) => {
                let t = self.id(t);
                let i = u32::try_from(*i).expect("a tuple index fits in u32");
                self.b.proj(t, i)
            }
            ExprKind::If(c, t, o) => {
                let (c, t, o) = (self.id(c), self.id(t), self.id(o));
                self.b.if_(c, t, o)
            }
            ExprKind::Function(f) => {
                let params = f.params.iter().map(|p| self.var(p)).collect();
                let body = self.id(&f.body);
                self.b.closure(ClosureData {
                    params,
                    ret_type: f.ret_type.clone(),
                    attrs: f.attrs.clone(),
                    body,
                })
            }
        };
        if !matches!(e.kind, ExprKind::Var(_)) {
            self.b.set_span(id, e.span);
        }
        self.nodes.insert(e.addr(), id);
    }
}
