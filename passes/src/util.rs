//! Helpers shared by the passes: matching operator calls, building them, types and constants.

use irpass_ir::{AttrValue, Attrs, Callee, DType, Expr, ExprKind, Tensor, TensorType, Type};
use std::sync::Arc;

use rustc_hash::FxHashMap;

/// The operator name and arguments of an operator call.
pub fn op_call(e: &Expr) -> Option<(&'static str, &[Expr], &Attrs)> {
    match &e.kind {
        ExprKind::Call(call) => match &call.callee {
            Callee::Op(op) => Some((op.name(), &call.args, &call.attrs)),
            Callee::Expr(_) => None,
        },
        _ => None,
    }
}

/// A call of operator `name` (the name and attributes are the pass's own, so valid).
pub fn call(name: &str, args: Vec<Expr>, attrs: Attrs) -> Expr {
    Expr::op(name, args, attrs)
        .unwrap_or_else(|e| panic!("irpass-passes built an invalid call: {e}"))
}

/// An integer list attribute value.
pub fn ints(v: &[i64]) -> AttrValue {
    AttrValue::List(v.iter().map(|&i| AttrValue::Int(i)).collect())
}

/// The constant tensor of a constant node.
pub fn constant(e: &Expr) -> Option<&Tensor> {
    match &e.kind {
        ExprKind::Constant(t) => Some(t),
        _ => None,
    }
}

/// A scalar constant of `dtype`.
pub fn scalar(dtype: DType, v: f64) -> Expr {
    Expr::constant(Tensor::scalar(dtype, v))
}

/// Types of expressions: the recorded type when inference ran, otherwise computed for operator
/// calls, tuples and projections from their operands (memoised; variables and constants are
/// read directly).
#[derive(Default)]
pub struct Types {
    /// By node address; the node is kept alive so its address is never reused for another.
    memo: FxHashMap<usize, (Expr, Option<Type>)>,
}

impl Types {
    /// The type of `e`, if it can be told.
    pub fn of(&mut self, e: &Expr) -> Option<Type> {
        if let Some(t) = e.checked_type() {
            return Some(t.clone());
        }
        if matches!(e.kind, ExprKind::Var(_) | ExprKind::Constant(_)) {
            return self.compute(e);
        }
        if let Some((_, t)) = self.memo.get(&e.addr()) {
            return t.clone();
        }
        let t = self.compute(e);
        self.memo.insert(e.addr(), (e.clone(), t.clone()));
        t
    }

    /// The type of `e` from its operands' types, without recording it: for a node that is
    /// about to be replaced (a call being folded), which a memo entry would only keep alive.
    pub fn of_transient(&mut self, e: &Expr) -> Option<Type> {
        match e.checked_type() {
            Some(t) => Some(t.clone()),
            None => self.compute(e),
        }
    }

    fn compute(&mut self, e: &Expr) -> Option<Type> {
        match &e.kind {
            ExprKind::Var(_) => e.as_var().and_then(|v| v.ty().cloned()),
            ExprKind::Constant(t) => Some(Type::from(t.tensor_type())),
            ExprKind::Call(call) => match &call.callee {
                Callee::Op(op) => {
                    let args: Option<Vec<Type>> = call.args.iter().map(|a| self.of(a)).collect();
                    args.and_then(|a| op.infer(&a, &call.attrs).ok())
                }
                Callee::Expr(_) => None,
            },
            ExprKind::Tuple(fields) => fields
                .iter()
                .map(|f| self.of(f))
                .collect::<Option<Vec<_>>>()
                .map(Type::Tuple),
            ExprKind::TupleGetItem(t, i) => match self.of(t) {
                Some(Type::Tuple(fields)) => fields.get(*i).cloned(),
                _ => None,
            },
            _ => None,
        }
    }

    /// The tensor type of `e`, if it is a tensor of known type.
    pub fn tensor(&mut self, e: &Expr) -> Option<Arc<TensorType>> {
        match self.of(e) {
            Some(Type::Tensor(t)) => Some(t),
            _ => None,
        }
    }
}

/// The number of elements of a tensor type, or of all the tensors of a tuple type; `None` when
/// a shape is not static or the count overflows.
pub fn elements(t: &Type) -> Option<u64> {
    match t {
        Type::Tensor(t) => t.num_elements().map(|n| n as u64),
        Type::Tuple(fields) => fields
            .iter()
            .try_fold(0u64, |n, f| n.checked_add(elements(f)?)),
        _ => None,
    }
}

/// `epsilon`, `center` and `scale` of a normalisation's attributes, with Relay's defaults.
pub fn norm_flags(attrs: &Attrs) -> (f64, bool, bool) {
    let flag = |name: &str| attrs.get(name).and_then(AttrValue::as_bool).unwrap_or(true);
    let eps = attrs
        .get("epsilon")
        .and_then(AttrValue::as_float)
        .unwrap_or(1e-5);
    (eps, flag("center"), flag("scale"))
}

/// A normalisation's `axis` attribute (or `default`), negative values counted from the end of
/// a tensor of rank `rank`.
pub fn norm_axis(attrs: &Attrs, default: i64, rank: usize) -> usize {
    let a = attrs
        .get("axis")
        .and_then(AttrValue::as_int)
        .unwrap_or(default);
    (if a < 0 { a + rank as i64 } else { a }) as usize
}
