//! `FuseLayerNorm`.

use irpass::{PassContext, function_pass};
use irpass_ir::{Function, Module};

/// Fuses a layer normalisation's decomposition over the last axis back into one
/// `nn.layer_norm`: `(x - mean(x)) / sqrt(mean((x - mean(x))²) + eps)`, the square written as a
/// product or a power of 2, then a constant scale and a constant shift along that axis. What
/// `SimplifyInference` expands and nothing changed since becomes one operator again (one
/// `LayerNormalization` in an ONNX model from opset 17). A decomposition whose intermediate
/// values are used elsewhere is left as it is.
#[function_pass(opt_level = 0, name = "FuseLayerNorm")]
pub fn fuse_layer_norm(
    func: Function,
    _module: &Module,
    _ctx: &PassContext,
) -> irpass::Result<Function> {
    // None computed for it: the guards ask about a few nodes, and typing those on demand
    // costs less than typing the module.
    let types = crate::analyses::carried_types(&func);
    Ok(func.with_code(crate::rewrites::fuse_layer_norm(
        &func.code,
        types.as_deref(),
    )?))
}
