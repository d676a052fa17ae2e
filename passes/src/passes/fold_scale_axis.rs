//! `BackwardFoldScaleAxis`, `ForwardFoldScaleAxis` (and the `FoldScaleAxis` Sequential).

use irpass::{PassContext, function_pass};
use irpass_ir::{Function, Module};

use crate::analyses::{UseCounts, types};

/// Folds a constant per-output-channel scale into the weights of the convolution or dense
/// layer that produces the scaled value: `conv2d(x, w) * s` becomes `conv2d(x, w * s')`, also
/// through a bias add (`(conv2d(x, w) + b) * s` becomes `conv2d(x, w * s') + b * s`), and
/// `dense(x, W) * s` becomes `dense(x, W * s')`. Only values with a single use are folded
/// (the unscaled result is needed nowhere else); `FoldConstant` then computes the new weights.
#[function_pass(opt_level = 3, name = "BackwardFoldScaleAxis")]
pub fn backward_fold_scale_axis(
    func: Function,
    module: &Module,
    ctx: &PassContext,
) -> irpass::Result<Function> {
    let types = types(&func, module, ctx)?;
    let uses = ctx.function_analysis(&UseCounts, &func, module);
    Ok(func.with_code(crate::rewrites::backward_fold_scale_axis(
        &func.code, &types, &uses,
    )))
}

/// Folds a constant per-input-channel scale into the weights of the convolution (groups = 1)
/// or dense layer that consumes the scaled value: `conv2d(x * s, w)` becomes
/// `conv2d(x, w * s')` and `dense(x * s, W)` becomes `dense(x, W * s)`.
#[function_pass(opt_level = 3, name = "ForwardFoldScaleAxis")]
pub fn forward_fold_scale_axis(
    func: Function,
    module: &Module,
    ctx: &PassContext,
) -> irpass::Result<Function> {
    let types = types(&func, module, ctx)?;
    let uses = ctx.function_analysis(&UseCounts, &func, module);
    Ok(func.with_code(crate::rewrites::forward_fold_scale_axis(
        &func.code, &types, &uses,
    )))
}
