//! `BackwardFoldScaleAxis`, `ForwardFoldScaleAxis` (and the `FoldScaleAxis` Sequential).

use irpass::{PassContext, function_pass, pass_config_option};
use irpass_ir::{Function, Module};

use crate::analyses::{UseCounts, types};

pass_config_option! {
    /// When true, `BackwardFoldScaleAxis` and `ForwardFoldScaleAxis` also fold scales that are
    /// not constants (computed at run time, as a squeeze-and-excitation gate), as TVM does;
    /// default false: the weights would then be rescaled on every run instead of the
    /// activations, and stop being constants.
    pub FOLD_VARIABLE_SCALES: bool = "relay.FoldScaleAxis.variable_scales";
}

fn variable_scales(ctx: &PassContext) -> bool {
    ctx.get(&FOLD_VARIABLE_SCALES).copied().unwrap_or(false)
}

/// Folds a per-output-channel scale into the weights of the convolution or dense layer that
/// produces the scaled value (TVM's backward folding): in `relu(conv2d(x, w) + b) * s` the
/// scale moves through the relu (when it is a positive constant), the bias add or
/// `nn.bias_add` (the bias is multiplied by it) and an add of two such paths, into the
/// weight's output channels: `relu(conv2d(x, w * s') + b * s'')`; the same for `nn.dense`.
/// The scale is squeezed to the channel axis and laid along the weight's with `expand_dims`,
/// as TVM writes it; in a split layout (`NCHW4c` data, `OIHW1i4o` weights) a channel is a
/// block and a lane axis, and the scale is reshaped onto the weight's. Only values with a single use are rescaled (the unscaled result is needed
/// nowhere else). A constant scale that would overflow
/// the constant weights or biases it is multiplied into stays. `FoldConstant` then computes
/// the new weights.
#[function_pass(opt_level = 3, name = "BackwardFoldScaleAxis")]
pub fn backward_fold_scale_axis(
    func: Function,
    module: &Module,
    ctx: &PassContext,
) -> irpass::Result<Function> {
    let types = types(&func, module, ctx)?;
    let uses = ctx.function_analysis(&UseCounts, &func, module);
    Ok(func.with_code(crate::rewrites::backward_fold_scale_axis(
        &func.code,
        &types,
        &uses,
        variable_scales(ctx),
    )))
}

/// Folds a per-input-channel scale into the weights of the convolution or dense layer that
/// consumes the scaled value (TVM's forward folding): in `conv2d(relu(x * s) + b, w)` the
/// scale moves through the relu (when it is a positive constant) and the bias add (the bias is
/// divided by it) into the weight's input channels (output channels for a depthwise
/// convolution): `conv2d(relu(x) + b / s', w * s'')`. Folded only when every user of the
/// scaled value can take the scale (two convolutions can; any other use keeps it). A scale
/// that a bias is divided by must be a float constant with no zero (a pruned channel) and no
/// infinity in it, and no folded constant may overflow; otherwise the scale stays (unlike
/// TVM, which folds a zero scale and computes NaN).
#[function_pass(opt_level = 3, name = "ForwardFoldScaleAxis")]
pub fn forward_fold_scale_axis(
    func: Function,
    module: &Module,
    ctx: &PassContext,
) -> irpass::Result<Function> {
    let types = types(&func, module, ctx)?;
    let uses = ctx.function_analysis(&UseCounts, &func, module);
    Ok(func.with_code(crate::rewrites::forward_fold_scale_axis(
        &func.code,
        &types,
        &uses,
        variable_scales(ctx),
    )))
}
