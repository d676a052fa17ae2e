//! `BackwardFoldScaleAxis`, `ForwardFoldScaleAxis` (and the `FoldScaleAxis` Sequential).

use irpass::{PassContext, function_pass};
use irpass_ir::visit::{Memo, Mutator, post_order, rebuild_children};
use irpass_ir::{AttrValue, Attrs, Expr, Function, Module};
use rustc_hash::FxHashMap;

use crate::util::{Types, call, constant, ints, op_call};

/// Folds a constant per-output-channel scale into the weights of the convolution or dense
/// layer that produces the scaled value: `conv2d(x, w) * s` becomes `conv2d(x, w * s')`, also
/// through a bias add (`(conv2d(x, w) + b) * s` becomes `conv2d(x, w * s') + b * s`), and
/// `dense(x, W) * s` becomes `dense(x, W * s')`. Only values with a single use are folded
/// (the unscaled result is needed nowhere else); `FoldConstant` then computes the new weights.
#[function_pass(opt_level = 3, name = "BackwardFoldScaleAxis", required = [crate::InferType])]
pub fn backward_fold_scale_axis(func: Function, _module: &Module, _ctx: &PassContext) -> Function {
    let mut f = Folder::new(&func.body, Direction::Backward);
    f.mutate_function(&func)
}

/// Folds a constant per-input-channel scale into the weights of the convolution (groups = 1)
/// or dense layer that consumes the scaled value: `conv2d(x * s, w)` becomes
/// `conv2d(x, w * s')` and `dense(x * s, W)` becomes `dense(x, W * s)`.
#[function_pass(opt_level = 3, name = "ForwardFoldScaleAxis", required = [crate::InferType])]
pub fn forward_fold_scale_axis(func: Function, _module: &Module, _ctx: &PassContext) -> Function {
    let mut f = Folder::new(&func.body, Direction::Forward);
    f.mutate_function(&func)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Backward,
    Forward,
}

struct Folder {
    dir: Direction,
    uses: FxHashMap<usize, usize>,
    types: Types,
    memo: Memo,
}

/// The (operand, scale) of a multiply by a constant, either order.
fn scaled(e: &Expr) -> Option<(&Expr, &Expr)> {
    match op_call(e) {
        Some(("multiply", [a, s], _)) if constant(s).is_some() => Some((a, s)),
        Some(("multiply", [s, a], _)) if constant(s).is_some() => Some((a, s)),
        _ => None,
    }
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

impl Folder {
    fn new(body: &Expr, dir: Direction) -> Folder {
        let mut uses: FxHashMap<usize, usize> = FxHashMap::default();
        post_order(body, &mut |e| {
            for c in e.children() {
                *uses.entry(c.addr()).or_default() += 1;
            }
        });
        Folder {
            dir,
            uses,
            types: Types::default(),
            memo: Memo::default(),
        }
    }

    fn single_use(&self, e: &Expr) -> bool {
        self.uses.get(&e.addr()).copied() == Some(1)
    }

    /// The channel count `c` of a per-channel scale along axis 1 of a rank-4 NCHW value:
    /// a scale of shape (c, 1, 1) or (1, c, 1, 1); `Some(None)` for a scalar.
    fn channel_scale(&mut self, s: &Expr) -> Option<Option<i64>> {
        let shape = constant(s)?.shape().to_vec();
        match shape.as_slice() {
            [] => Some(None),
            [c, 1, 1] | [1, c, 1, 1] => Some(Some(*c as i64)),
            _ => None,
        }
    }

    /// `s` reshaped to `shape` (a scalar stays).
    fn reshaped(&self, s: &Expr, shape: Option<Vec<i64>>) -> Expr {
        match shape {
            None => s.clone(),
            Some(shape) => call(
                "reshape",
                vec![s.clone()],
                Attrs::from_pairs([("newshape", ints(&shape))]),
            ),
        }
    }

    fn backward(&mut self, e: &Expr) -> Option<Expr> {
        let (a, s) = scaled(e)?;
        if !self.single_use(a) {
            return None;
        }
        match op_call(a)? {
            ("nn.conv2d", [x, w], attrs) if is_default_conv(attrs) => {
                let c = self.channel_scale(s)?;
                let ws = self.reshaped(s, c.map(|c| vec![c, 1, 1, 1]));
                let w2 = call("multiply", vec![self.mutate(w), ws], Attrs::new());
                Some(call("nn.conv2d", vec![self.mutate(x), w2], attrs.clone()))
            }
            ("nn.dense", [x, w], attrs) => {
                let shape = constant(s)?.shape().to_vec();
                let ws = match shape.as_slice() {
                    [] => s.clone(),
                    [n] | [1, n] => self.reshaped(s, Some(vec![*n as i64, 1])),
                    _ => return None,
                };
                let w2 = call("multiply", vec![self.mutate(w), ws], Attrs::new());
                Some(call("nn.dense", vec![self.mutate(x), w2], attrs.clone()))
            }
            ("add", [conv, b], _) if self.single_use(conv) && constant(b).is_some() => {
                let ("nn.conv2d", [x, w], attrs) = op_call(conv)? else {
                    return None;
                };
                if !is_default_conv(attrs) {
                    return None;
                }
                let c = self.channel_scale(s)?;
                // The scaled bias must keep the sum's shape: check with the types.
                let sum_ty = self.types.of(a)?;
                let ws = self.reshaped(s, c.map(|c| vec![c, 1, 1, 1]));
                let w2 = call("multiply", vec![self.mutate(w), ws], Attrs::new());
                let conv2 = call("nn.conv2d", vec![self.mutate(x), w2], attrs.clone());
                let b2 = call("multiply", vec![b.clone(), s.clone()], Attrs::new());
                let out = call("add", vec![conv2, b2], Attrs::new());
                (self.types.of(&out)? == sum_ty).then_some(out)
            }
            _ => None,
        }
    }

    fn forward(&mut self, e: &Expr) -> Option<Expr> {
        match op_call(e)? {
            ("nn.conv2d", [a, w], attrs) if is_default_conv(attrs) => {
                let groups = attrs.get("groups").and_then(AttrValue::as_int).unwrap_or(1);
                let (x, s) = scaled(a)?;
                if groups != 1 || !self.single_use(a) {
                    return None;
                }
                let c = self.channel_scale(s)?;
                let ws = self.reshaped(s, c.map(|c| vec![1, c, 1, 1]));
                let w2 = call("multiply", vec![self.mutate(w), ws], Attrs::new());
                Some(call("nn.conv2d", vec![self.mutate(x), w2], attrs.clone()))
            }
            ("nn.dense", [a, w], attrs) => {
                let (x, s) = scaled(a)?;
                let shape = constant(s)?.shape().to_vec();
                if !self.single_use(a) || !matches!(shape.as_slice(), [] | [_] | [1, _]) {
                    return None;
                }
                let ws = match shape.as_slice() {
                    [1, k] => self.reshaped(s, Some(vec![*k as i64])),
                    _ => s.clone(),
                };
                let w2 = call("multiply", vec![self.mutate(w), ws], Attrs::new());
                Some(call("nn.dense", vec![self.mutate(x), w2], attrs.clone()))
            }
            _ => None,
        }
    }
}

impl Mutator for Folder {
    fn memo(&mut self) -> &mut Memo {
        &mut self.memo
    }

    fn rebuild(&mut self, e: &Expr) -> Expr {
        let folded = match self.dir {
            Direction::Backward => self.backward(e),
            Direction::Forward => self.forward(e),
        };
        folded.unwrap_or_else(|| rebuild_children(self, e))
    }
}
