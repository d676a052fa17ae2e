//! Resolving required passes when a pipeline is built: lookup, transitive closure, cycles.

use rustc_hash::FxHashSet;
use std::borrow::Cow;

use super::Pass;
use super::handle::Repr;
use super::traits::Requirement;
use crate::error::BuildError;
use crate::{IrModule, registry};

/// A pass with its required passes resolved (recursively): one node of a built pipeline.
pub(crate) struct Step<M: IrModule> {
    pub pass: Pass<M>,
    pub required: Vec<Step<M>>,
}

/// Resolves the requirements of `pass`, transitively. Unknown names and cycles are errors.
pub(crate) fn resolve<M: IrModule>(pass: &Pass<M>) -> Result<Step<M>, BuildError> {
    let mut stack = vec![pass.info().name.to_string()];
    resolve_in(pass.clone(), &mut stack)
}

fn resolve_in<M: IrModule>(pass: Pass<M>, stack: &mut Vec<String>) -> Result<Step<M>, BuildError> {
    let requirements = pass.requirements();
    let mut required = Vec::with_capacity(requirements.len());
    for requirement in requirements {
        let name = requirement.name().to_string();
        if let Some(start) = stack.iter().position(|n| *n == name) {
            let mut cycle = stack[start..].to_vec();
            cycle.push(name);
            return Err(BuildError::Cycle { cycle });
        }
        let dep = match requirement {
            Requirement::Pass(p) => p,
            Requirement::Named(n) => {
                registry::lookup::<M>(&n).map_err(|err| BuildError::UnknownRequired {
                    required_by: pass.info().name.to_string(),
                    error: err,
                })?
            }
        };
        stack.push(name);
        let step = resolve_in(dep, stack);
        stack.pop();
        required.push(step?);
    }
    Ok(Step { pass, required })
}

/// Adds to `names` every name that some step in `step` (or below it) requires, so that the
/// runner records when those passes run and does not re-run them on an unchanged module.
pub(crate) fn collect_watched<M: IrModule>(
    step: &Step<M>,
    names: &mut FxHashSet<Cow<'static, str>>,
) {
    for req in &step.required {
        names.insert(Cow::Owned(req.pass.info().name.to_string()));
        collect_watched(req, names);
    }
    if let Repr::Sequential(seq) = &step.pass.0 {
        names.extend(seq.watched.iter().cloned());
    }
}
