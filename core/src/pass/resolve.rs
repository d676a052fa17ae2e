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
    resolve_in(pass.clone(), &mut Vec::new())
}

/// `stack` holds the names of the passes whose requirements are being resolved, outermost
/// first; a requirement already on it closes a cycle. A pass with no requirements (the common
/// case, and every direct call of such a pass) costs no allocation.
fn resolve_in<M: IrModule>(pass: Pass<M>, stack: &mut Vec<String>) -> Result<Step<M>, BuildError> {
    let requirements = pass.requirements();
    if requirements.is_empty() {
        return Ok(Step {
            pass,
            required: Vec::new(),
        });
    }
    stack.push(pass.info().name.to_string());
    let required: Result<Vec<_>, _> = requirements
        .into_iter()
        .map(|r| resolve_requirement(&pass, r, stack))
        .collect();
    stack.pop();
    Ok(Step {
        pass,
        required: required?,
    })
}

fn resolve_requirement<M: IrModule>(
    pass: &Pass<M>,
    requirement: Requirement<M>,
    stack: &mut Vec<String>,
) -> Result<Step<M>, BuildError> {
    let name = requirement.name();
    if let Some(start) = stack.iter().position(|n| n == name) {
        let mut cycle = stack[start..].to_vec();
        cycle.push(name.to_string());
        return Err(BuildError::Cycle { cycle });
    }
    let dep = match requirement {
        Requirement::Pass(p) => p,
        Requirement::Named(n) => {
            registry::lookup::<M>(&n).map_err(|error| BuildError::UnknownRequired {
                required_by: pass.info().name.to_string(),
                error,
            })?
        }
    };
    resolve_in(dep, stack)
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
