//! Mapping a function pass over a module's functions, in parallel with rayon.

use std::borrow::Borrow;
use std::sync::{Arc, Mutex, OnceLock};

use rayon::ThreadPool;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::traits::{FunctionPass, ModuleEdit, ModuleEdits};
use crate::error::FailureCause;
use crate::panic::guarded;
use crate::{IrModule, PassContext};

/// The edits one function asked for: its position in the map, its key, the edits.
type Asked<M> = (usize, Owned<M>, Vec<ModuleEdit<M>>);

/// A function's key, owned.
type Owned<M> = <<M as IrModule>::Key as ToOwned>::Owned;

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
    // Edits are rare: asked-for ones go to a list by the asking function's position (sorted
    // after the map), so a pass that asks for none pays nothing per function.
    let asked: Mutex<Vec<Asked<M>>> = Mutex::new(Vec::new());
    let changes = {
        let targets: Vec<(&M::Key, &M::Function)> = module
            .functions()
            .filter(|(_, f)| !M::skip_optimization(f))
            .collect();
        let run_one = |i: usize, &(key, func): &(&M::Key, &M::Function)| {
            let mut edits = ModuleEdits::default();
            let out = guarded(|| {
                pass.transform_function_with_edits(key, func.clone(), &module, ctx, &mut edits)
            });
            if !edits.is_empty() {
                let mut list = asked.lock().unwrap_or_else(|e| e.into_inner());
                list.push((i, key.to_owned(), edits.into_vec()));
            }
            out.map(|out| (!M::same_function(&out, func)).then_some(out))
        };
        let parallel =
            pass.parallel() && ctx.threads() != Some(1) && targets.len() >= PARALLEL_THRESHOLD;
        let serial = || {
            targets
                .iter()
                .enumerate()
                .map(|(i, t)| run_one(i, t))
                .collect()
        };
        let results: Vec<Result<Option<M::Function>, FailureCause>> = if parallel {
            let work = || {
                targets
                    .par_iter()
                    .enumerate()
                    .map_init(|| ctx.enter_worker(), |_, (i, target)| run_one(i, target))
                    .collect()
            };
            match ctx.threads().map(pool) {
                Some(Some(pool)) => pool.install(work),
                // A pool that cannot be built (no threads left): run on this thread.
                Some(None) => serial(),
                None => work(),
            }
        } else {
            serial()
        };
        let mut changes = Vec::new();
        for ((key, _), result) in targets.iter().zip(results) {
            match result {
                Ok(Some(func)) => changes.push(((*key).to_owned(), func)),
                Ok(None) => {}
                Err(cause) => return Err((key.to_string(), cause)),
            }
        }
        changes
    };
    let mut module = module;
    for (key, func) in changes {
        module.replace_function(key.borrow(), func);
    }
    // The module edits, in the order of the functions that asked (the map's order).
    let mut asked = asked.into_inner().unwrap_or_else(|e| e.into_inner());
    asked.sort_by_key(|(i, _, _)| *i);
    for (_, key, edits) in asked {
        for edit in edits {
            guarded(|| edit(&mut module, key.borrow()))
                .map_err(|cause| (key.borrow().to_string(), cause))?;
        }
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
