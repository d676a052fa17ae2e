//! `SimplifyInference`, as a rewrite of a function's code.

use super::call;
use irpass_ir::body::{ArenaFunction, BodyBuilder, ExprId, Node};
use irpass_ir::infer::BodyTypes;
use irpass_ir::rewrite::{Rewrite, RewriteCx, Rewritten, rewrite_body};
use irpass_ir::{AttrValue, Attrs, Tensor, TensorType, Type};

use crate::util::{ints, norm_axis, norm_flags};

/// Rewrites the training-only forms for inference, as the registered `SimplifyInference`:
/// `nn.batch_norm(x, g, b, m, v).0` becomes `x * scale + shift`, `nn.dropout(x).0` becomes
/// `x`, and `nn.layer_norm` is expanded into means, a variance and elementwise operations;
/// with the types inference found for `f` (`types`). `None` when there is nothing to rewrite.
pub fn simplify_inference(f: &ArenaFunction, types: &BodyTypes) -> Option<Rewritten> {
    rewrite_body(&f.body, &f.params, f.root, &mut Simplify { types })
}

struct Simplify<'a> {
    /// The types of the input body (read through the old ids).
    types: &'a BodyTypes,
}

/// A call the pass builds (operator names and attributes are the pass's own, so valid).
fn scalar(b: &mut BodyBuilder, t: &TensorType, v: f64) -> ExprId {
    b.constant(Tensor::scalar(t.dtype, v).into())
}

/// `v` reshaped to broadcast along `axis` of a tensor of rank `rank`.
fn along_axis(b: &mut BodyBuilder, v: ExprId, axis: usize, rank: usize) -> ExprId {
    let trailing = rank - axis - 1;
    if trailing == 0 {
        return v;
    }
    let attrs = Attrs::from_pairs([
        ("axis", AttrValue::Int(1)),
        ("num_newaxis", AttrValue::Int(trailing as i64)),
    ]);
    call(b, "expand_dims", &[v], attrs)
}

impl Simplify<'_> {
    /// The tensor type the input gave its old node `e`.
    fn tensor(&self, e: ExprId) -> Option<TensorType> {
        match self.types.of(e) {
            Type::Tensor(t) => Some((**t).clone()),
            _ => None,
        }
    }

    fn batch_norm(
        b: &mut BodyBuilder,
        t: &TensorType,
        args: &[ExprId],
        attrs: &Attrs,
    ) -> Option<ExprId> {
        let &[x, g, beta, m, v] = args else {
            return None;
        };
        let rank = t.rank();
        let axis = norm_axis(attrs, 1, rank);
        let (eps, center, scale_on) = norm_flags(attrs);
        let eps = scalar(b, t, eps);
        let sum = call(b, "add", &[v, eps], Attrs::new());
        let std = call(b, "sqrt", &[sum], Attrs::new());
        let one = scalar(b, t, 1.0);
        let inv = call(b, "divide", &[one, std], Attrs::new());
        let scale = if scale_on {
            // TVM's operand order: `(1 / sqrt(var + eps)) * gamma`.
            call(b, "multiply", &[inv, g], Attrs::new())
        } else {
            inv
        };
        let neg_mean = call(b, "negative", &[m], Attrs::new());
        let mut shift = call(b, "multiply", &[neg_mean, scale], Attrs::new());
        if center {
            shift = call(b, "add", &[shift, beta], Attrs::new());
        }
        let scale = along_axis(b, scale, axis, rank);
        let y = call(b, "multiply", &[x, scale], Attrs::new());
        let shift = along_axis(b, shift, axis, rank);
        Some(call(b, "add", &[y, shift], Attrs::new()))
    }

    fn layer_norm(
        b: &mut BodyBuilder,
        t: &TensorType,
        args: &[ExprId],
        attrs: &Attrs,
    ) -> Option<ExprId> {
        let &[x, g, beta] = args else { return None };
        let rank = t.rank();
        let axis = norm_axis(attrs, -1, rank);
        let (eps, center, scale_on) = norm_flags(attrs);
        let reduce = |b: &mut BodyBuilder, e: ExprId| {
            let attrs = Attrs::from_pairs([
                ("axis", ints(&[axis as i64])),
                ("keepdims", AttrValue::Bool(true)),
            ]);
            call(b, "mean", &[e], attrs)
        };
        let mean = reduce(b, x);
        let centered = call(b, "subtract", &[x, mean], Attrs::new());
        let square = call(b, "multiply", &[centered, centered], Attrs::new());
        let var = reduce(b, square);
        let eps = scalar(b, t, eps);
        let sum = call(b, "add", &[var, eps], Attrs::new());
        let denom = call(b, "sqrt", &[sum], Attrs::new());
        let mut y = call(b, "divide", &[centered, denom], Attrs::new());
        if scale_on {
            let g = along_axis(b, g, axis, rank);
            y = call(b, "multiply", &[y, g], Attrs::new());
        }
        if center {
            let beta = along_axis(b, beta, axis, rank);
            y = call(b, "add", &[y, beta], Attrs::new());
        }
        Some(y)
    }
}

impl Rewrite for Simplify<'_> {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: ExprId, new: ExprId) -> Option<ExprId> {
        let body = cx.new.body();
        if let Node::Proj(t, 0) = *body.node(new) {
            let (op, args, attrs) = body.op_call(t)?;
            let (args, attrs) = (args.to_vec(), attrs.clone());
            match op.name() {
                "nn.batch_norm" => {
                    // The type of `x` as the input had it: the old call's first operand.
                    let Node::Proj(old_t, _) = *cx.old.node(old) else {
                        return None;
                    };
                    let x = cx.old.op_call(old_t)?.1.first().copied()?;
                    let ty = self.tensor(x)?;
                    return Simplify::batch_norm(&mut cx.new, &ty, &args, &attrs);
                }
                "nn.dropout" => return args.first().copied(),
                _ => return None,
            }
        }
        let (op, args, attrs) = body.op_call(new)?;
        if op.name() != "nn.layer_norm" {
            return None;
        }
        let (args, attrs) = (args.to_vec(), attrs.clone());
        let x = cx.old.op_call(old)?.1.first().copied()?;
        let ty = self.tensor(x)?;
        Simplify::layer_norm(&mut cx.new, &ty, &args, &attrs)
    }
}
