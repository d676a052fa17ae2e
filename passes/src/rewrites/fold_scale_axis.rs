//! `BackwardFoldScaleAxis` and `ForwardFoldScaleAxis`, as a rewrite of a function's code.

use irpass_ir::arena::{
    ArenaFunction, Body, BodyBuilder, BodyTypes, ExprId, Idx, LocalTyper, Node, Rewrite, RewriteCx,
    Rewritten, rewrite_body,
};
use irpass_ir::{AttrValue, Attrs};

use super::typer_for;
use crate::util::ints;

/// Folds a constant per-output-channel scale into the weights of the convolution or dense
/// layer that produces the scaled value, as the registered `BackwardFoldScaleAxis`:
/// `conv2d(x, w) * s` becomes `conv2d(x, w * s')`, also through a bias add, and
/// `dense(x, W) * s` becomes `dense(x, W * s')`; only values with a single use. `types` and
/// `uses` (each node's use count, [`Body::use_counts`]) are the input's. `None` when there is
/// nothing to fold.
pub fn backward_fold_scale_axis(
    f: &ArenaFunction,
    types: &BodyTypes,
    uses: &[u32],
) -> Option<Rewritten> {
    fold(f, types, uses, Direction::Backward)
}

/// Folds a constant per-input-channel scale into the weights of the convolution (groups = 1)
/// or dense layer that consumes the scaled value, as the registered `ForwardFoldScaleAxis`:
/// `conv2d(x * s, w)` becomes `conv2d(x, w * s')`, `dense(x * s, W)` becomes `dense(x, W * s)`.
/// `None` when there is nothing to fold.
pub fn forward_fold_scale_axis(
    f: &ArenaFunction,
    types: &BodyTypes,
    uses: &[u32],
) -> Option<Rewritten> {
    fold(f, types, uses, Direction::Forward)
}

fn fold(f: &ArenaFunction, types: &BodyTypes, uses: &[u32], dir: Direction) -> Option<Rewritten> {
    let mut folder = Folder {
        dir,
        uses,
        types,
        typer: typer_for(f, types),
    };
    rewrite_body(&f.body, &f.params, f.root, &mut folder)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Backward,
    Forward,
}

struct Folder<'t> {
    dir: Direction,
    /// Use counts of the input's nodes.
    uses: &'t [u32],
    types: &'t BodyTypes,
    typer: LocalTyper,
}

/// The positions of (operand, scale) in a multiply by a constant, either order.
fn scaled(b: &Body, e: ExprId) -> Option<(usize, usize)> {
    let (op, args, _) = b.op_call(e)?;
    match (op.name(), args) {
        ("multiply", &[_, s]) if is_constant(b, s) => Some((0, 1)),
        ("multiply", &[s, _]) if is_constant(b, s) => Some((1, 0)),
        _ => None,
    }
}

fn is_constant(b: &Body, e: ExprId) -> bool {
    matches!(b.node(e), Node::Constant(_))
}

fn shape(b: &Body, e: ExprId) -> Option<Vec<usize>> {
    match b.node(e) {
        Node::Constant(k) => Some(b.constant(*k).shape().to_vec()),
        _ => None,
    }
}

/// The operands of `e` if it calls operator `name`.
fn args_of<'b>(b: &'b Body, e: ExprId, name: &str) -> Option<(&'b [ExprId], &'b Attrs)> {
    let (op, args, attrs) = b.op_call(e)?;
    (op.name() == name).then_some((args, attrs))
}

fn is_default_conv(attrs: &Attrs) -> bool {
    let s = |k: &str, d: &str| {
        attrs
            .get(k)
            .and_then(AttrValue::as_str)
            .unwrap_or(d)
            .to_string()
    };
    s("data_layout", "NCHW") == "NCHW"
        && s("kernel_layout", "OIHW") == "OIHW"
        && s("out_layout", "").is_empty()
}

/// The channel count `c` of a per-channel scale along axis 1 of a rank-4 NCHW value: a scale
/// of shape (c, 1, 1) or (1, c, 1, 1); `Some(None)` for a scalar.
fn channel_scale(shape: &[usize]) -> Option<Option<i64>> {
    match shape {
        [] => Some(None),
        [c, 1, 1] | [1, c, 1, 1] => Some(Some(*c as i64)),
        _ => None,
    }
}

fn call(b: &mut BodyBuilder, op: &str, args: &[ExprId], attrs: Attrs) -> ExprId {
    b.op(op, args, attrs)
        .unwrap_or_else(|e| panic!("irpass-passes built an invalid call: {e}"))
}

/// `s` reshaped to `shape` (a scalar stays).
fn reshaped(b: &mut BodyBuilder, s: ExprId, shape: Option<Vec<i64>>) -> ExprId {
    match shape {
        None => s,
        Some(shape) => call(
            b,
            "reshape",
            &[s],
            Attrs::from_pairs([("newshape", ints(&shape))]),
        ),
    }
}

impl Folder<'_> {
    fn single_use(&self, old: ExprId) -> bool {
        self.uses[old.index()] == 1
    }

    fn backward(&mut self, cx: &mut RewriteCx<'_>, old: ExprId, new: ExprId) -> Option<ExprId> {
        let (o, n) = (cx.old, &mut cx.new);
        let (ai, si) = scaled(o, old)?;
        let (_, old_args, _) = o.op_call(old)?;
        let a_old = old_args[ai];
        if !self.single_use(a_old) {
            return None;
        }
        let (_, new_args, _) = n.body().op_call(new)?;
        let (a, s) = (new_args[ai], new_args[si]);
        let s_shape = shape(o, old_args[si])?;
        let (op, _, _) = o.op_call(a_old)?;
        match op.name() {
            "nn.conv2d" => {
                let (&[x, w], attrs) = args_of(n.body(), a, "nn.conv2d")? else {
                    return None;
                };
                if !is_default_conv(attrs) {
                    return None;
                }
                let attrs = attrs.clone();
                let c = channel_scale(&s_shape)?;
                let ws = reshaped(n, s, c.map(|c| vec![c, 1, 1, 1]));
                let w2 = call(n, "multiply", &[w, ws], Attrs::new());
                Some(call(n, "nn.conv2d", &[x, w2], attrs))
            }
            "nn.dense" => {
                let (&[x, w], attrs) = args_of(n.body(), a, "nn.dense")? else {
                    return None;
                };
                let attrs = attrs.clone();
                let ws = match s_shape.as_slice() {
                    [] => s,
                    [k] | [1, k] => reshaped(n, s, Some(vec![*k as i64, 1])),
                    _ => return None,
                };
                let w2 = call(n, "multiply", &[w, ws], Attrs::new());
                Some(call(n, "nn.dense", &[x, w2], attrs))
            }
            "add" => {
                let (&[conv_old, b_old], _) = args_of(o, a_old, "add")? else {
                    return None;
                };
                if !self.single_use(conv_old) || !is_constant(o, b_old) {
                    return None;
                }
                let (&[conv, b], _) = args_of(n.body(), a, "add")? else {
                    return None;
                };
                let (&[x, w], attrs) = args_of(n.body(), conv, "nn.conv2d")? else {
                    return None;
                };
                if !is_default_conv(attrs) {
                    return None;
                }
                let attrs = attrs.clone();
                let c = channel_scale(&s_shape)?;
                // The scaled bias must keep the sum's shape: check with the types.
                let sum_ty = self.types.of(a_old).clone();
                let ws = reshaped(n, s, c.map(|c| vec![c, 1, 1, 1]));
                let w2 = call(n, "multiply", &[w, ws], Attrs::new());
                let conv2 = call(n, "nn.conv2d", &[x, w2], attrs);
                let b2 = call(n, "multiply", &[b, s], Attrs::new());
                let out = call(n, "add", &[conv2, b2], Attrs::new());
                (self.typer.of(n.body(), out)? == &sum_ty).then_some(out)
            }
            _ => None,
        }
    }

    fn forward(&mut self, cx: &mut RewriteCx<'_>, old: ExprId, new: ExprId) -> Option<ExprId> {
        let (o, n) = (cx.old, &mut cx.new);
        let (op, old_args, attrs) = o.op_call(old)?;
        let &[a_old, _] = old_args else {
            return None;
        };
        let (ai, si) = scaled(o, a_old)?;
        if !self.single_use(a_old) {
            return None;
        }
        let (_, a_args, _) = o.op_call(a_old)?;
        let s_shape = shape(o, a_args[si])?;
        let (_, new_args, _) = n.body().op_call(new)?;
        let &[a, w] = new_args else {
            return None;
        };
        let (a_new_args, _) = args_of(n.body(), a, "multiply")?;
        let (x, s) = (a_new_args[ai], a_new_args[si]);
        let attrs = attrs.clone();
        match op.name() {
            "nn.conv2d" if is_default_conv(&attrs) => {
                let groups = attrs.get("groups").and_then(AttrValue::as_int).unwrap_or(1);
                if groups != 1 {
                    return None;
                }
                let c = channel_scale(&s_shape)?;
                let ws = reshaped(n, s, c.map(|c| vec![1, c, 1, 1]));
                let w2 = call(n, "multiply", &[w, ws], Attrs::new());
                Some(call(n, "nn.conv2d", &[x, w2], attrs))
            }
            "nn.dense" => {
                if !matches!(s_shape.as_slice(), [] | [_] | [1, _]) {
                    return None;
                }
                let ws = match s_shape.as_slice() {
                    [1, k] => reshaped(n, s, Some(vec![*k as i64])),
                    _ => s,
                };
                let w2 = call(n, "multiply", &[w, ws], Attrs::new());
                Some(call(n, "nn.dense", &[x, w2], attrs))
            }
            _ => None,
        }
    }
}

impl Rewrite for Folder<'_> {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: ExprId, new: ExprId) -> Option<ExprId> {
        super::seed(&mut self.typer, self.types, old, new);
        match self.dir {
            Direction::Backward => self.backward(cx, old, new),
            Direction::Forward => self.forward(cx, old, new),
        }
    }
}
