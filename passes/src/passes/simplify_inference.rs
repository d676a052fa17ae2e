//! `SimplifyInference`.

use irpass::{PassContext, function_pass};
use irpass_ir::{Function, Module};

/// Rewrites the training-only forms for inference: `nn.batch_norm(x, g, b, m, v).0` becomes
/// `x * scale + shift` with `scale = g / sqrt(v + eps)` and `shift = b - m * scale` (broadcast
/// along the normalised axis; `FoldConstant` then folds them when the parameters are
/// constants), `nn.dropout(x).0` becomes `x`, and `nn.layer_norm` is expanded into means,
/// a variance and elementwise operations.
#[function_pass(opt_level = 0, name = "SimplifyInference")]
pub fn simplify_inference(
    func: Function,
    module: &Module,
    ctx: &PassContext,
) -> irpass::Result<Function> {
    let types = || crate::analyses::types(&func, module, ctx);
    Ok(func.with_code(crate::rewrites::simplify_inference(&func.code, types)?))
}
