//! `CanonicalizeOps`: the pass and its rule set.

use crate::analyses::Types;
use crate::util::{along_axis, norm_axis};
use irpass::{PassContext, function_pass};
use irpass_ir::{BodyTypes, Function, IrError, Module, body::ArenaFunction};
use irpass_ir_macros::rules;

/// Rewrites operators into simpler ones the rest of the pipeline handles: `nn.bias_add(x, b,
/// axis)` becomes `add(x, expand_dims(b, ...))`, the bias broadcast along `axis`.
#[function_pass(opt_level = 3, name = "CanonicalizeOps")]
pub fn transform(func: Function, _module: &Module, _ctx: &PassContext) -> irpass::Result<Function> {
    // None computed for it: it asks about the few bias operands, and typing those on demand
    // costs less than typing the module.
    let types = Types::carried(&func);
    Ok(func.with_code(canonicalize_ops(&func.code, types.as_deref())?))
}

rules! {
    /// `CanonicalizeOps`'s rules.
    pub(crate) static CANONICALIZE_OPS: RuleSet = {
        /// `nn.bias_add(x, b, axis)` is `add(x, expand_dims(b, ...))`, the bias broadcast along
        /// `axis`, where the rank of `x` is known.
        bias_add: "nn.bias_add(?x, ?b)" => {
            let rank = cx.tensor(x)?.rank();
            let axis = norm_axis(cx.op_call(root)?.2, 1, rank);
            let bias = along_axis(cx, b, axis, rank)?;
            cx.binary("add", x, bias)
        };
    };
}

/// Rewrites `nn.bias_add` into `add` and `expand_dims`, as the registered `CanonicalizeOps`;
/// `types` are `f`'s when known (else a bias's operand is typed on demand, alone). An error
/// comes only from the rule engine: none in practice, the tests check the rules.
pub fn canonicalize_ops(
    f: &ArenaFunction,
    types: Option<&BodyTypes>,
) -> Result<Option<ArenaFunction>, IrError> {
    Ok(CANONICALIZE_OPS.apply(f, types)?)
}
