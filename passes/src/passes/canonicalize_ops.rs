//! `CanonicalizeOps`.

use irpass::{PassContext, function_pass};
use irpass_ir::{Function, Module};

/// Rewrites operators into simpler ones the rest of the pipeline handles: `nn.bias_add(x, b,
/// axis)` becomes `add(x, expand_dims(b, ...))`, the bias broadcast along `axis`.
#[function_pass(opt_level = 3, name = "CanonicalizeOps")]
pub fn canonicalize_ops(
    func: Function,
    module: &Module,
    ctx: &PassContext,
) -> irpass::Result<Function> {
    let types = || crate::analyses::types(&func, module, ctx);
    Ok(func.with_code(crate::rewrites::canonicalize_ops(&func.code, types)?))
}
