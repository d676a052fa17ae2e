//! `SimplifyExpr`.

use irpass::{PassContext, function_pass};
use irpass_ir::{Function, Module};

use crate::analyses::types;

/// Algebraic simplifications that keep the value and type exactly: `x * 1`, `1 * x`, `x + 0`,
/// `0 + x`, `x - 0`, `x / 1` (the 0 or 1 a constant or a `zeros`/`ones` call, when it does not
/// broadcast `x` to a bigger shape or another dtype), `--x`, `relu(relu(x))`, a `transpose` of a `transpose` (composed, or removed
/// when it is the identity), a `reshape` of a `reshape`, a `reshape` or `cast` to what `x`
/// already is.
#[function_pass(opt_level = 0, name = "SimplifyExpr")]
pub fn simplify_expr(
    func: Function,
    module: &Module,
    ctx: &PassContext,
) -> irpass::Result<Function> {
    let types = types(&func, module, ctx)?;
    Ok(func.with_code(crate::rewrites::simplify_expr(&func.code, &types)))
}
