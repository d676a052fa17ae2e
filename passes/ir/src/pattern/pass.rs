//! A rule set run as a function pass (what `irpass_ir_macros::rules!`'s `#[pass(...)]`
//! registers).

use super::RuleSet;
use crate::{Function, IrError, Module};

/// Applies `set` to `func` (a function of `module`), with the function's types when an
/// inference found them (inferring the module's if none has yet; without types, type
/// constraints and guards see what the annotations give).
///
/// # Errors
/// What [`RuleSet::apply`] reports, as an [`IrError`].
pub fn run_pass(set: &RuleSet, func: Function, module: &Module) -> Result<Function, IrError> {
    let types = func.types().or_else(|| {
        module.infer_types().ok()?;
        func.types()
    });
    let out = set.apply(&func.code, types.as_deref())?;
    Ok(func.with_code(out))
}
