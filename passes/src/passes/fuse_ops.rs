//! `FuseOps`.

use irpass::{PassContext, function_pass, pass_config_option};
use irpass_ir::visit::{Memo, Mutator, post_order, rebuild_children};
use irpass_ir::{
    Args, AttrValue, Attrs, Callee, Expr, ExprKind, Function, Module, OpPattern, Type, Var,
};
use rustc_hash::FxHashMap;

use crate::util::Types;

pass_config_option! {
    /// The fusion level of `FuseOps`: 0 puts every operator in a function of its own, 1 and
    /// above fuse (default: the context's opt level).
    pub FUSE_OPT_LEVEL: i64 = "relay.FuseOps.fuse_opt_level";
    /// The most operators one fused function may hold (default 256).
    pub FUSE_MAX_DEPTH: usize = "relay.FuseOps.max_depth";
}

/// Groups operators into `Primitive=1` functions, each a unit a backend compiles as one
/// kernel: elementwise and broadcast operators fuse into the output of a convolution or dense
/// layer (out-elementwise-fusable), injective operators (reshape, transpose, ...) fuse with
/// each other and into the inputs of a reduction, elementwise operators follow a reduction.
/// Only a value with a single consumer is fused into it, so each group has one output and
/// nothing is computed twice. Opaque operators stay alone; `let`s, `if`s, tuples and closures
/// are boundaries. `relay.FuseOps.fuse_opt_level` 0 makes one function per operator.
#[function_pass(opt_level = 0, name = "FuseOps", required = [crate::InferType])]
pub fn fuse_ops(func: Function, _module: &Module, ctx: &PassContext) -> Function {
    if func.has_attr("Primitive") {
        return func;
    }
    let level = ctx
        .get(&FUSE_OPT_LEVEL)
        .copied()
        .unwrap_or(i64::from(ctx.opt_level()));
    let max_depth = ctx.get(&FUSE_MAX_DEPTH).copied().unwrap_or(256).max(1);
    let mut groups = Grouping::default();
    groups.analyse(&func.body, level > 0, max_depth);
    let mut fuser = Fuser {
        groups,
        types: Types::default(),
        memo: Memo::default(),
    };
    fuser.mutate_function(&func)
}

fn pattern(e: &Expr) -> Option<OpPattern> {
    match &e.kind {
        ExprKind::Call(call) => match &call.callee {
            Callee::Op(op) => Some(op.def().pattern),
            Callee::Expr(_) => None,
        },
        _ => None,
    }
}

struct Group {
    /// The strongest pattern in the group (what may still fuse after it).
    kind: OpPattern,
    /// The members' addresses.
    members: Vec<usize>,
}

#[derive(Default)]
struct Grouping {
    /// Node address to its group's root (the group's output node).
    root_of: FxHashMap<usize, usize>,
    groups: FxHashMap<usize, Group>,
}

/// Whether a group of `producer` kind may fuse into a consumer of pattern `consumer`.
fn can_fuse(producer: OpPattern, consumer: OpPattern) -> bool {
    use OpPattern::*;
    match (producer, consumer) {
        (Opaque, _) | (_, Opaque) | (_, OutEWiseFusable) => false,
        (OutEWiseFusable | CommReduce, c) => c <= Broadcast,
        (_, c) => c <= CommReduce,
    }
}

impl Grouping {
    fn analyse(&mut self, body: &Expr, fuse: bool, max_depth: usize) {
        // How many places use each node (any parent, not only operator calls).
        let mut uses: FxHashMap<usize, usize> = FxHashMap::default();
        post_order(body, &mut |e| {
            for c in e.children() {
                *uses.entry(c.addr()).or_default() += 1;
            }
        });
        post_order(body, &mut |e| {
            let Some(p) = pattern(e) else { return };
            let me = e.addr();
            let mut group = Group {
                kind: p,
                members: vec![me],
            };
            let mut absorbed = Vec::new();
            if fuse {
                let ExprKind::Call(call) = &e.kind else {
                    return;
                };
                for a in &call.args {
                    let key = a.addr();
                    if uses.get(&key).copied() != Some(1) || self.root_of.get(&key) != Some(&key) {
                        continue;
                    }
                    let Some(ag) = self.groups.get(&key) else {
                        continue;
                    };
                    if can_fuse(ag.kind, p) && group.members.len() + ag.members.len() <= max_depth {
                        group.kind = group.kind.max(ag.kind);
                        absorbed.push(key);
                    }
                }
            }
            for a in absorbed {
                if let Some(ag) = self.groups.remove(&a) {
                    for m in &ag.members {
                        self.root_of.insert(*m, me);
                    }
                    group.members.extend(ag.members);
                }
            }
            self.root_of.insert(me, me);
            self.groups.insert(me, group);
        });
    }
}

struct Fuser {
    groups: Grouping,
    types: Types,
    memo: Memo,
}

impl Fuser {
    /// The body of the fused function of the group rooted at `root`: members inline,
    /// everything else a parameter (`inputs` keeps the original input of each).
    fn body(
        &mut self,
        e: &Expr,
        root: usize,
        params: &mut Vec<(Var, Expr)>,
        seen: &mut FxHashMap<usize, Expr>,
    ) -> Expr {
        if let Some(done) = seen.get(&e.addr()) {
            return done.clone();
        }
        let member = self.groups.root_of.get(&e.addr()) == Some(&root) && pattern(e).is_some();
        let out = if member {
            let ExprKind::Call(call) = &e.kind else {
                unreachable!("members are operator calls")
            };
            let args = call
                .args
                .iter()
                .map(|a| self.body(a, root, params, seen))
                .collect();
            Expr::new(ExprKind::Call(irpass_ir::Call {
                callee: call.callee.clone(),
                args,
                attrs: call.attrs.clone(),
            }))
        } else if matches!(e.kind, ExprKind::Constant(_)) {
            e.clone()
        } else {
            let ty = self.types.of(e).filter(Type::is_complete);
            let p = Var::new(format!("p{}", params.len()), ty);
            params.push((p.clone(), e.clone()));
            Expr::var(&p)
        };
        seen.insert(e.addr(), out.clone());
        out
    }
}

impl Mutator for Fuser {
    fn memo(&mut self) -> &mut Memo {
        &mut self.memo
    }

    fn rebuild(&mut self, e: &Expr) -> Expr {
        let key = e.addr();
        if self.groups.root_of.get(&key) != Some(&key) || pattern(e).is_none() {
            return rebuild_children(self, e);
        }
        let mut params = Vec::new();
        let body = self.body(e, key, &mut params, &mut FxHashMap::default());
        let ret = self.types.of(e).filter(Type::is_complete);
        let attrs = Attrs::from_pairs([("Primitive", AttrValue::Int(1))]);
        let (vars, inputs): (Vec<Var>, Vec<Expr>) = params.into_iter().unzip();
        let f = Function::new(vars, ret, body, attrs);
        let args: Args = inputs.iter().map(|i| self.mutate(i)).collect();
        Expr::call(Expr::function(f), args)
    }
}
