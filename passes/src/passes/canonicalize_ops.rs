//! `CanonicalizeOps`.

use irpass::{PassContext, function_pass};
use irpass_ir::{Function, Module};

/// Rewrites operators into simpler ones the rest of the pipeline handles: `nn.bias_add(x, b,
/// axis)` becomes `add(x, expand_dims(b, ...))`, the bias broadcast along `axis`.
#[function_pass(opt_level = 3, name = "CanonicalizeOps")]
pub fn canonicalize_ops(
    func: Function,
    _module: &Module,
    _ctx: &PassContext,
) -> irpass::Result<Function> {
    // None computed for it: it asks about the few bias operands, and typing those on demand
    // costs less than typing the module.
    let types = crate::analyses::carried_types(&func);
    Ok(func.with_code(crate::rewrites::canonicalize_ops(
        &func.code,
        types.as_deref(),
    )?))
}
