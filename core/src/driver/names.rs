//! Pass names typed on the command line, checked before anything runs: a misspelt
//! `--print-after=FoldConstnt` is an error with a suggestion, not a silent no-op.

use crate::suggest::closest;
use crate::{IrModule, Pass, registry};

use super::failure::Failure;

/// The names a flag can be given: what the pipeline runs and what is registered.
pub(super) struct Known {
    /// Every pass, Sequential and required pass in the pipeline.
    in_pipeline: Vec<String>,
    /// Every registered pass of the IR.
    registered: Vec<String>,
}

impl Known {
    /// The names of `pipeline` (walked whole) and of the registered passes of `M`.
    pub(super) fn new<M: IrModule>(pipeline: &Pass<M>) -> Self {
        let mut in_pipeline = Vec::new();
        let mut stack = vec![pipeline];
        while let Some(p) = stack.pop() {
            in_pipeline.push(p.info().name.to_string());
            in_pipeline.extend(p.info().required_names().map(str::to_string));
            stack.extend(p.passes());
        }
        in_pipeline.sort();
        in_pipeline.dedup();
        let registered = registry::passes::<M>()
            .into_iter()
            .map(|r| r.info.name.to_string())
            .collect();
        Known {
            in_pipeline,
            registered,
        }
    }

    /// Checks the names given to `flag`. A name in the pipeline is fine; a registered pass the
    /// pipeline does not run gives a note (the flag will have no effect for it); any other
    /// name is a usage error (exit 2) with the closest names.
    pub(super) fn check(&self, flag: &str, given: &[String]) -> Result<Vec<String>, Failure> {
        let mut notes = Vec::new();
        for name in given {
            if self.in_pipeline.contains(name) {
                continue;
            }
            if self.registered.contains(name) {
                notes.push(format!(
                    "`{flag}`: pass `{name}` is not in the pipeline, so this has no effect on it"
                ));
                continue;
            }
            let all = self.in_pipeline.iter().chain(&self.registered);
            let suggestions = closest(name, all.map(String::as_str));
            return Err(Failure(
                format!(
                    "`{flag}`: no pass named `{name}` is in the pipeline or registered{}",
                    crate::suggest::did_you_mean(&suggestions)
                ),
                2,
            ));
        }
        Ok(notes)
    }
}
