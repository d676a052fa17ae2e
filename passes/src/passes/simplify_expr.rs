//! `SimplifyExpr`.

use irpass::{PassContext, function_pass};
use irpass_ir::visit::{Memo, Mutator};
use irpass_ir::{AttrValue, Attrs, Expr, Function, Module, Type};

use crate::util::{Types, call, constant, ints, op_call};

/// Algebraic simplifications that keep the value and type exactly: `x * 1`, `1 * x`, `x + 0`,
/// `0 + x`, `x - 0`, `x / 1` (when the constant does not broadcast `x` to a bigger shape or
/// another dtype), `--x`, `relu(relu(x))`, a `transpose` of a `transpose` (composed, or removed
/// when it is the identity), a `reshape` of a `reshape`, a `reshape` or `cast` to what `x`
/// already is.
#[function_pass(opt_level = 0, name = "SimplifyExpr", required = [crate::InferType])]
pub fn simplify_expr(func: Function, _module: &Module, _ctx: &PassContext) -> Function {
    let mut s = Simplify {
        types: Types::default(),
        memo: Memo::default(),
    };
    s.mutate_function(&func)
}

struct Simplify {
    types: Types,
    memo: Memo,
}

fn is_all(e: &Expr, v: f64) -> bool {
    constant(e).is_some_and(|t| t.values().iter().all(|&x| x == v))
}

impl Simplify {
    /// `x` in place of `op(x, c)` when the result's type is `x`'s own.
    fn keep_if_same_type(&mut self, x: &Expr, whole: &Expr) -> Option<Expr> {
        let (tx, tw) = (self.types.of(x)?, self.types.of(whole)?);
        (tx == tw).then(|| x.clone())
    }

    fn simplify(&mut self, e: &Expr) -> Option<Expr> {
        let (name, args, attrs) = op_call(e)?;
        match (name, args) {
            ("multiply", [a, b]) if is_all(b, 1.0) => self.keep_if_same_type(a, e),
            ("multiply", [a, b]) if is_all(a, 1.0) => self.keep_if_same_type(b, e),
            ("add", [a, b]) if is_all(b, 0.0) => self.keep_if_same_type(a, e),
            ("add", [a, b]) if is_all(a, 0.0) => self.keep_if_same_type(b, e),
            ("subtract", [a, b]) if is_all(b, 0.0) => self.keep_if_same_type(a, e),
            ("divide", [a, b]) if is_all(b, 1.0) => self.keep_if_same_type(a, e),
            ("negative", [a]) => match op_call(a) {
                Some(("negative", [x], _)) => Some(x.clone()),
                _ => None,
            },
            ("nn.relu", [a]) => match op_call(a) {
                Some(("nn.relu", _, _)) => Some(a.clone()),
                _ => None,
            },
            ("cast", [a]) => {
                let dtype = attrs.get("dtype")?.as_str()?.parse().ok()?;
                (self.types.tensor(a)?.dtype == dtype).then(|| a.clone())
            }
            ("reshape", [a]) => {
                if let Some(("reshape", [x], _)) = op_call(a) {
                    let out = self.types.tensor(e)?.static_shape()?;
                    let shape: Vec<i64> = out.iter().map(|&d| d as i64).collect();
                    let r = call(
                        "reshape",
                        vec![x.clone()],
                        Attrs::from_pairs([("newshape", ints(&shape))]),
                    );
                    return Some(self.simplify(&r).unwrap_or(r));
                }
                let (ti, to) = (self.types.of(a)?, self.types.of(e)?);
                (matches!(ti, Type::Tensor(_)) && ti == to).then(|| a.clone())
            }
            ("transpose", [a]) => {
                let rank = self.types.tensor(e)?.rank();
                let outer = perm(attrs, rank);
                if let Some(("transpose", [x], inner_attrs)) = op_call(a) {
                    let inner = perm(inner_attrs, rank);
                    let composed: Vec<usize> = outer.iter().map(|&i| inner[i]).collect();
                    if composed.iter().enumerate().all(|(i, &p)| i == p) {
                        return Some(x.clone());
                    }
                    let axes: Vec<i64> = composed.iter().map(|&p| p as i64).collect();
                    return Some(call(
                        "transpose",
                        vec![x.clone()],
                        Attrs::from_pairs([("axes", ints(&axes))]),
                    ));
                }
                outer
                    .iter()
                    .enumerate()
                    .all(|(i, &p)| i == p)
                    .then(|| a.clone())
            }
            _ => None,
        }
    }
}

/// The permutation of a `transpose` call (reversed axes when none are given).
fn perm(attrs: &Attrs, rank: usize) -> Vec<usize> {
    match attrs.get("axes") {
        Some(AttrValue::List(items)) if !items.is_empty() => items
            .iter()
            .map(|v| {
                let a = v.as_int().unwrap_or(0);
                (if a < 0 { a + rank as i64 } else { a }) as usize
            })
            .collect(),
        _ => (0..rank).rev().collect(),
    }
}

impl Mutator for Simplify {
    fn memo(&mut self) -> &mut Memo {
        &mut self.memo
    }

    fn rewrite(&mut self, e: Expr) -> Expr {
        let mut cur = e;
        while let Some(next) = self.simplify(&cur) {
            cur = next;
        }
        cur
    }
}
