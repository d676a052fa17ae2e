//! `SimplifyExpr`, as a rewrite of a function's code.

use irpass_ir::arena::{
    ArenaFunction, Body, BodyBuilder, BodyTypes, ExprId, LocalTyper, Node, Rewrite, RewriteCx,
    Rewritten, rewrite_body,
};
use irpass_ir::{AttrValue, Attrs, Type};

use crate::util::ints;

/// Algebraic simplifications that keep the value and type exactly, as the registered
/// `SimplifyExpr`: `x * 1`, `1 * x`, `x + 0`, `0 + x`, `x - 0`, `x / 1` (when the constant does
/// not broadcast `x` to a bigger shape or another dtype), `--x`, `relu(relu(x))`, a
/// `transpose` of a `transpose` (composed, or removed when it is the identity), a `reshape` of
/// a `reshape`, a `reshape` or `cast` to what `x` already is. `types` are the input's. `None`
/// when there is nothing to simplify.
pub fn simplify_expr(f: &ArenaFunction, types: &BodyTypes) -> Option<Rewritten> {
    let typer = super::typer_for(f, types);
    rewrite_body(&f.body, &f.params, f.root, &mut Simplify { types, typer })
}

struct Simplify<'t> {
    /// The input's types (read through the old ids).
    types: &'t BodyTypes,
    /// The new body's types: a rebuilt node has its old node's type, a new one its operands'.
    typer: LocalTyper,
}

/// The operator name, arguments and attributes of node `e`, if it calls an operator.
fn op_call(b: &Body, e: ExprId) -> Option<(&'static str, &[ExprId], &Attrs)> {
    b.op_call(e)
        .map(|(op, args, attrs)| (op.name(), args, attrs))
}

/// Whether `e` is `v` everywhere: a constant, or a call of `zeros` (for 0) or `ones` (for 1).
fn is_all(b: &Body, e: ExprId, v: f64) -> bool {
    match b.node(e) {
        Node::Constant(k) => b.constant(*k).values().iter().all(|&x| x == v),
        _ => matches!(
            (op_call(b, e), v),
            (Some(("zeros", _, _)), 0.0) | (Some(("ones", _, _)), 1.0)
        ),
    }
}

fn call(b: &mut BodyBuilder, op: &str, args: &[ExprId], attrs: Attrs) -> ExprId {
    b.op(op, args, attrs)
        .unwrap_or_else(|e| panic!("irpass-passes built an invalid call: {e}"))
}

impl Simplify<'_> {
    fn ty(&mut self, b: &Body, e: ExprId) -> Option<Type> {
        self.typer.of(b, e).cloned()
    }

    /// `x` in place of `whole = op(x, c)` when the result's type is `x`'s own.
    fn keep_if_same_type(&mut self, b: &Body, x: ExprId, whole: ExprId) -> Option<ExprId> {
        let (tx, tw) = (self.ty(b, x)?, self.ty(b, whole)?);
        (tx == tw).then_some(x)
    }

    fn simplify(&mut self, nb: &mut BodyBuilder, e: ExprId) -> Option<ExprId> {
        let b = nb.body();
        let (name, args, attrs) = op_call(b, e)?;
        let args = args.to_vec();
        match (name, &args[..]) {
            ("multiply", &[a, c]) if is_all(b, c, 1.0) => self.keep_if_same_type(b, a, e),
            ("multiply", &[c, a]) if is_all(b, c, 1.0) => self.keep_if_same_type(b, a, e),
            ("add", &[a, c]) if is_all(b, c, 0.0) => self.keep_if_same_type(b, a, e),
            ("add", &[c, a]) if is_all(b, c, 0.0) => self.keep_if_same_type(b, a, e),
            ("subtract", &[a, c]) if is_all(b, c, 0.0) => self.keep_if_same_type(b, a, e),
            ("divide", &[a, c]) if is_all(b, c, 1.0) => self.keep_if_same_type(b, a, e),
            ("negative", &[a]) => match op_call(b, a) {
                Some(("negative", &[x], _)) => Some(x),
                _ => None,
            },
            ("nn.relu", &[a]) => match op_call(b, a) {
                Some(("nn.relu", _, _)) => Some(a),
                _ => None,
            },
            ("cast", &[a]) => {
                let dtype = attrs.get("dtype")?.as_str()?.parse().ok()?;
                (self.typer.tensor(b, a)?.dtype == dtype).then_some(a)
            }
            ("reshape", &[a]) => {
                if let Some(("reshape", &[x], _)) = op_call(b, a) {
                    let out = self.typer.tensor(b, e)?.static_shape()?;
                    let shape: Vec<i64> = out.iter().map(|&d| d as i64).collect();
                    let attrs = Attrs::from_pairs([("newshape", ints(&shape))]);
                    let r = call(nb, "reshape", &[x], attrs);
                    return Some(self.simplify(nb, r).unwrap_or(r));
                }
                let (ti, to) = (self.ty(b, a)?, self.ty(b, e)?);
                (matches!(ti, Type::Tensor(_)) && ti == to).then_some(a)
            }
            ("transpose", &[a]) => {
                let rank = self.typer.tensor(b, e)?.rank();
                let outer = perm(attrs, rank);
                if let Some(("transpose", &[x], inner_attrs)) = op_call(b, a) {
                    let inner = perm(inner_attrs, rank);
                    let composed: Vec<usize> = outer.iter().map(|&i| inner[i]).collect();
                    if composed.iter().enumerate().all(|(i, &p)| i == p) {
                        return Some(x);
                    }
                    let axes: Vec<i64> = composed.iter().map(|&p| p as i64).collect();
                    let attrs = Attrs::from_pairs([("axes", ints(&axes))]);
                    return Some(call(nb, "transpose", &[x], attrs));
                }
                outer.iter().enumerate().all(|(i, &p)| i == p).then_some(a)
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

impl Rewrite for Simplify<'_> {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: ExprId, new: ExprId) -> Option<ExprId> {
        super::seed(&mut self.typer, self.types, old, new);
        let mut cur = new;
        while let Some(next) = self.simplify(&mut cx.new, cur) {
            cur = next;
        }
        (cur != new).then_some(cur)
    }
}
