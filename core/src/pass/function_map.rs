//! Mapping a function pass over a module's functions, in parallel with rayon.

use std::sync::{Arc, Mutex, OnceLock};

use rayon::ThreadPool;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::traits::{FunctionPass, ModuleEdit, ModuleEdits};
use crate::error::FailureCause;
use crate::panic::guarded;
use crate::{IrModule, PassContext};

/// Below this many functions the pass runs on the calling thread: forking costs more.
const PARALLEL_THRESHOLD: usize = 2;

/// Runs `pass` on every function of `module` that does not skip optimisation and puts the
/// changed ones back. The result does not depend on the thread count: functions are collected
/// in the module's order, and the first failure in that order is the one reported.
pub(crate) fn map_functions<M: IrModule>(
    pass: &dyn FunctionPass<M>,
    module: M,
    ctx: &PassContext,
) -> Result<M, (String, FailureCause)> {
    let changes = {
        let targets: Vec<(&str, &M::Function)> = module
            .functions()
            .filter(|(_, f)| !M::skip_optimization(f))
            .collect();
        let run_one = |&(name, func): &(&str, &M::Function)| {
            guarded(|| {
                let mut edits = ModuleEdits::default();
                let out = pass.transform_function_with_edits(
                    name,
                    func.clone(),
                    &module,
                    ctx,
                    &mut edits,
                )?;
                Ok((out, edits))
            })
            .map(|(out, edits): (M::Function, ModuleEdits<M>)| {
                (
                    (!M::same_function(&out, func)).then_some(out),
                    edits.into_vec(),
                )
            })
        };
        let parallel =
            pass.parallel() && ctx.threads() != Some(1) && targets.len() >= PARALLEL_THRESHOLD;
        type Outcome<M> = (Option<<M as IrModule>::Function>, Vec<ModuleEdit<M>>);
        let results: Vec<Result<Outcome<M>, FailureCause>> = if parallel {
            let work = || {
                targets
                    .par_iter()
                    .map_init(|| ctx.enter_worker(), |_, target| run_one(target))
                    .collect()
            };
            match ctx.threads().map(pool) {
                Some(Some(pool)) => pool.install(work),
                // A pool that cannot be built (no threads left): run on this thread.
                Some(None) => targets.iter().map(run_one).collect(),
                None => work(),
            }
        } else {
            targets.iter().map(run_one).collect()
        };
        let mut changes = Vec::new();
        let mut edits = Vec::new();
        for ((name, _), result) in targets.iter().zip(results) {
            match result {
                Ok((func, asked)) => {
                    if let Some(func) = func {
                        changes.push((name.to_string(), func));
                    }
                    edits.extend(asked.into_iter().map(|e| (name.to_string(), e)));
                }
                Err(cause) => return Err((name.to_string(), cause)),
            }
        }
        (changes, edits)
    };
    let (changes, edits) = changes;
    let mut module = module;
    for (name, func) in changes {
        module.replace_function(&name, func);
    }
    // The module edits, in the order of the functions that asked (the map's order).
    for (name, edit) in edits {
        guarded(|| edit(&mut module)).map_err(|cause| (name, cause))?;
    }
    Ok(module)
}

/// A rayon pool of `n` threads, built once per size and kept (`None` if it cannot be built).
fn pool(n: usize) -> Option<Arc<ThreadPool>> {
    static POOLS: OnceLock<Mutex<FxHashMap<usize, Arc<ThreadPool>>>> = OnceLock::new();
    let mut pools = POOLS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(pool) = pools.get(&n) {
        return Some(pool.clone());
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .thread_name(move |i| format!("irpass-{n}-{i}"))
        .build()
        .ok()?;
    Some(pools.entry(n).or_insert(Arc::new(pool)).clone())
}
