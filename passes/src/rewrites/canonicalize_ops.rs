//! `CanonicalizeOps`, as a rule set.

use std::sync::Arc;

use irpass_ir::{BodyTypes, IrError, body::ArenaFunction, rewrite::Rewritten};
use irpass_ir_macros::rules;

use crate::util::{along_axis, norm_axis};

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
/// `types` gives `f`'s types, asked for only when `f` has something to rewrite (an error
/// comes from computing them, or from the rule engine: none in practice, the tests check the
/// rules).
pub fn canonicalize_ops(
    f: &ArenaFunction,
    types: impl FnOnce() -> Result<Arc<BodyTypes>, IrError>,
) -> Result<Option<Rewritten>, IrError> {
    if !CANONICALIZE_OPS.could_fire(f)? {
        return Ok(None);
    }
    let types = types()?;
    Ok(CANONICALIZE_OPS.apply(f, Some(&types))?)
}
