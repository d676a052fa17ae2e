//! `SimplifyInference`.

use irpass::{PassContext, function_pass};
use irpass_ir::visit::{Memo, Mutator};
use irpass_ir::{AttrValue, Attrs, Expr, ExprKind, Function, Module};

use crate::util::{Types, call, ints, norm_axis, norm_flags, op_call, scalar};

/// Rewrites the training-only forms for inference: `nn.batch_norm(x, g, b, m, v).0` becomes
/// `x * scale + shift` with `scale = g / sqrt(v + eps)` and `shift = b - m * scale` (broadcast
/// along the normalised axis; `FoldConstant` then folds them when the parameters are
/// constants), `nn.dropout(x).0` becomes `x`, and `nn.layer_norm` is expanded into means,
/// a variance and elementwise operations.
#[function_pass(opt_level = 0, name = "SimplifyInference", required = [crate::InferType])]
pub fn simplify_inference(func: Function, _module: &Module, _ctx: &PassContext) -> Function {
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

/// `v` reshaped to broadcast along `axis` of a tensor of rank `rank`.
fn along_axis(v: Expr, axis: usize, rank: usize) -> Expr {
    let trailing = rank - axis - 1;
    if trailing == 0 {
        v
    } else {
        call(
            "expand_dims",
            vec![v],
            Attrs::from_pairs([
                ("axis", AttrValue::Int(1)),
                ("num_newaxis", AttrValue::Int(trailing as i64)),
            ]),
        )
    }
}

impl Simplify {
    fn batch_norm(&mut self, args: &[Expr], attrs: &Attrs) -> Option<Expr> {
        let [x, g, b, m, v] = args else { return None };
        let t = self.types.tensor(x)?;
        let rank = t.rank();
        let axis = norm_axis(attrs, 1, rank);
        let (eps, center, scale_on) = norm_flags(attrs);
        let std = call(
            "sqrt",
            vec![call(
                "add",
                vec![v.clone(), scalar(t.dtype, eps)],
                Attrs::new(),
            )],
            Attrs::new(),
        );
        let inv = call("divide", vec![scalar(t.dtype, 1.0), std], Attrs::new());
        let scale = if scale_on {
            call("multiply", vec![g.clone(), inv], Attrs::new())
        } else {
            inv
        };
        let neg_mean = call("negative", vec![m.clone()], Attrs::new());
        let mut shift = call("multiply", vec![neg_mean, scale.clone()], Attrs::new());
        if center {
            shift = call("add", vec![shift, b.clone()], Attrs::new());
        }
        let y = call(
            "multiply",
            vec![x.clone(), along_axis(scale, axis, rank)],
            Attrs::new(),
        );
        Some(call(
            "add",
            vec![y, along_axis(shift, axis, rank)],
            Attrs::new(),
        ))
    }

    fn layer_norm(&mut self, args: &[Expr], attrs: &Attrs) -> Option<Expr> {
        let [x, g, b] = args else { return None };
        let t = self.types.tensor(x)?;
        let rank = t.rank();
        let axis = norm_axis(attrs, -1, rank);
        let (eps, center, scale_on) = norm_flags(attrs);
        let reduce = |e: Expr| {
            call(
                "mean",
                vec![e],
                Attrs::from_pairs([
                    ("axis", ints(&[axis as i64])),
                    ("keepdims", AttrValue::Bool(true)),
                ]),
            )
        };
        let mean = reduce(x.clone());
        let centered = call("subtract", vec![x.clone(), mean], Attrs::new());
        let var = reduce(call(
            "multiply",
            vec![centered.clone(), centered.clone()],
            Attrs::new(),
        ));
        let denom = call(
            "sqrt",
            vec![call("add", vec![var, scalar(t.dtype, eps)], Attrs::new())],
            Attrs::new(),
        );
        let mut y = call("divide", vec![centered, denom], Attrs::new());
        if scale_on {
            y = call(
                "multiply",
                vec![y, along_axis(g.clone(), axis, rank)],
                Attrs::new(),
            );
        }
        if center {
            y = call(
                "add",
                vec![y, along_axis(b.clone(), axis, rank)],
                Attrs::new(),
            );
        }
        Some(y)
    }
}

impl Mutator for Simplify {
    fn memo(&mut self) -> &mut Memo {
        &mut self.memo
    }

    fn rewrite(&mut self, e: Expr) -> Expr {
        if let ExprKind::TupleGetItem(t, 0) = &e.kind {
            match op_call(t) {
                Some(("nn.batch_norm", args, attrs)) => {
                    if let Some(out) = self.batch_norm(args, attrs) {
                        return out;
                    }
                }
                Some(("nn.dropout", [x], _)) => return x.clone(),
                _ => {}
            }
        }
        if let Some(("nn.layer_norm", args, attrs)) = op_call(&e) {
            if let Some(out) = self.layer_norm(args, attrs) {
                return out;
            }
        }
        e
    }
}
