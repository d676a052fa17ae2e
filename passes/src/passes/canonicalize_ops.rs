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
    // Types the function already carries (of no other global, so nothing else can have
    // changed them) save typing a bias's operand; none are computed for it: typing the whole
    // module costs more than typing the few operands asked about.
    let types = func.types().filter(|t| t.callees().next().is_none());
    Ok(func.with_code(crate::rewrites::canonicalize_ops(
        &func.code,
        types.as_deref(),
    )?))
}
