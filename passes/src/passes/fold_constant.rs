//! `FoldConstant`.

use irpass::{PassContext, function_pass, pass_config_option};
use irpass_ir::visit::{Memo, Mutator, rebuild_children};
use irpass_ir::{Callee, Expr, ExprKind, Function, Module, Value, Var, VarMap};

use crate::util::{Types, elements};

pass_config_option! {
    /// `FoldConstant` leaves a call unfolded when its result would have more elements than
    /// this (default 1 048 576), so that folding never bloats a module with a huge constant.
    pub FOLD_MAX_ELEMENTS: u64 = "relay.FoldConstant.max_elements";
}

irpass::statistic! {
    /// Operator calls `FoldConstant` evaluated into constants.
    pub static CALLS_FOLDED: "FoldConstant", "operator calls folded into constants";
}

/// The default of [`FOLD_MAX_ELEMENTS`].
pub const DEFAULT_FOLD_MAX_ELEMENTS: u64 = 1 << 20;

/// Evaluates operator calls whose arguments are all constants, with the interpreter's
/// reference kernels, and replaces them by the result (dtypes exact: the kernel computes in the
/// operator's output dtype). Also folds projections of literal tuples, `if` on a constant
/// condition, and `let`s bound to constants. A call whose result would be larger than
/// `relay.FoldConstant.max_elements` elements, or whose evaluation fails (an integer division
/// by zero), is left as it is.
#[function_pass(opt_level = 2, name = "FoldConstant")]
pub fn fold_constant(func: Function, _module: &Module, ctx: &PassContext) -> Function {
    let limit = ctx
        .get(&FOLD_MAX_ELEMENTS)
        .copied()
        .unwrap_or(DEFAULT_FOLD_MAX_ELEMENTS);
    let mut folder = Folder {
        limit,
        types: Types::default(),
        subst: VarMap::default(),
        memo: Memo::default(),
    };
    folder.mutate_function(&func)
}

struct Folder {
    limit: u64,
    types: Types,
    subst: VarMap<Expr>,
    memo: Memo,
}

fn is_constant(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Constant(_) => true,
        ExprKind::Tuple(fields) => fields.iter().all(is_constant),
        _ => false,
    }
}

fn value_of(e: &Expr) -> Option<Value> {
    match &e.kind {
        ExprKind::Constant(t) => Some(Value::Tensor(t.clone())),
        ExprKind::Tuple(fields) => fields
            .iter()
            .map(value_of)
            .collect::<Option<Vec<_>>>()
            .map(Value::Tuple),
        _ => None,
    }
}

fn expr_of(v: Value) -> Option<Expr> {
    match v {
        Value::Tensor(t) => Some(Expr::new(ExprKind::Constant(t))),
        Value::Tuple(fields) => fields
            .into_iter()
            .map(expr_of)
            .collect::<Option<Vec<_>>>()
            .map(Expr::tuple),
        Value::Closure(_) => None,
    }
}

impl Mutator for Folder {
    fn memo(&mut self) -> &mut Memo {
        &mut self.memo
    }

    fn visit_let(&mut self, var: &Var, value: Expr) -> Option<Expr> {
        if matches!(value.kind, ExprKind::Constant(_)) {
            self.subst.insert(var.id(), value);
            return None;
        }
        Some(value)
    }

    fn rebuild(&mut self, e: &Expr) -> Expr {
        if let ExprKind::If(c, t, o) = &e.kind {
            let c2 = self.mutate(c);
            if let ExprKind::Constant(cond) = &c2.kind {
                if let Some(b) = cond.scalar_value() {
                    return self.mutate(if b != 0.0 { t } else { o });
                }
            }
        }
        rebuild_children(self, e)
    }

    fn rewrite(&mut self, e: Expr) -> Expr {
        match &e.kind {
            ExprKind::Var(v) => self.subst.get(&v.id()).cloned().unwrap_or(e),
            ExprKind::TupleGetItem(t, i) => match &t.kind {
                ExprKind::Tuple(fields) if *i < fields.len() => fields[*i].clone(),
                _ => e,
            },
            ExprKind::Call(call) => {
                let Callee::Op(op) = &call.callee else {
                    return e;
                };
                if !call.args.iter().all(is_constant) {
                    return e;
                }
                let Some(out) = self.types.of_transient(&e) else {
                    return e;
                };
                if elements(&out).is_none_or(|n| n > self.limit) {
                    return e;
                }
                let Some(args) = call.args.iter().map(value_of).collect::<Option<Vec<_>>>() else {
                    return e;
                };
                match op.eval(&args, &call.attrs).ok().and_then(expr_of) {
                    Some(folded) => {
                        CALLS_FOLDED.inc();
                        folded
                    }
                    None => e,
                }
            }
            _ => e,
        }
    }
}
