//! `SimplifyExpr`.

use irpass::{PassContext, function_pass};
use irpass_ir::{Function, Module};

/// Algebraic simplifications that keep the type (TVM's `SimplifyExpr`): identities `x * 1`,
/// `1 * x`, `x + 0`, `0 + x`, `x - 0`, `x / 1` (the 0 or 1 a constant or a `zeros`/`ones`
/// call, when it does not broadcast `x` to a bigger shape or another dtype), `--x`,
/// `relu(relu(x))`, a `transpose` of a `transpose` (composed, or removed when it is the
/// identity; a `layout_transform` between layouts of the same letters counts as one), layout
/// changes in a row through a split layout (`NCHW` to `NCHW4c` and back, a `transpose` beside
/// a `layout_transform`) as one `layout_transform` or nothing, a
/// `reshape` or `reverse_reshape` of another, a `reshape` or `cast` to what `x` already is;
/// an operand that is one value everywhere (`full` of a constant, `zeros`, `ones`) as a scalar;
/// `x + x` to `x * 2`; `c / sqrt(x)` to `c * rsqrt(x)` (`rsqrt(x)` for c = 1); a widening cast
/// followed by another cast to one cast; a clip to a range an intermediate integer cast
/// holds, cast on to an integer type, without the intermediate cast; a clip covering an
/// integer type's whole range removed; `zeros_like`, `ones_like`, `full_like`, `cast_like`,
/// `reshape_like`, `broadcast_to_like` made concrete (`zeros`, ..., `broadcast_to`) when
/// shapes are static; constants reassociated and folded: `(x + c1) + c2` to `x + (c1 + c2)`,
/// `(x * c1) * c2` to `x * (c1 * c2)`, `(x + c1) * c2` to `x * c2 + c1 * c2`; a binomial
/// `x² + b·xy + c·y²` (or with `y²` leading) with real roots factored into
/// `(x + p·y) * (x + q·y)` (integer roots for integer types); `squeeze` of exactly the axes
/// an `expand_dims` added removed with it.
#[function_pass(opt_level = 0, name = "SimplifyExpr")]
pub fn simplify_expr(
    func: Function,
    module: &Module,
    ctx: &PassContext,
) -> irpass::Result<Function> {
    let types = || crate::analyses::types(&func, module, ctx);
    Ok(func.with_code(crate::rewrites::simplify_expr(&func.code, types)?))
}
