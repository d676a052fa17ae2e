//! The analysis cache of a context: results keyed by analysis and function identity (or by
//! analysis alone for a module analysis), each kept beside a clone of what it was computed
//! from, so that a result is served only for that very value.

use std::any::{Any, TypeId};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use rustc_hash::FxHashMap;

use super::{AnalysisEvent, FunctionAnalysis, ModuleAnalysis};
use crate::{Diagnostic, IrModule, PassContext, PassInfo};

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    analysis: TypeId,
    /// The function's key, or `None` for a module analysis.
    function: Option<usize>,
}

struct Entry {
    name: &'static str,
    /// When it was made (the cache's count of entries made so far): the oldest go first when
    /// the cache passes [`MAX_CACHED_ANALYSES`].
    made: u64,
    /// What the result was computed from (`M::Function` or `M`): keeps a function's key from
    /// being reused while the entry exists, and lets a module result be checked with `same_as`.
    pin: Box<dyn Any + Send + Sync>,
    /// The result, set once by whichever thread computes it; threads asking meanwhile wait
    /// for it instead of computing it again.
    slot: Slot,
}

type Slot = Arc<OnceLock<Arc<dyn Any + Send + Sync>>>;

/// The cache. Results are computed outside the map's lock, so function passes running in
/// parallel never wait on each other's analyses of other functions; threads asking for the
/// same missing result wait for the one computing it (each result is computed once; an
/// analysis must not ask for itself).
#[derive(Default)]
pub(crate) struct AnalysisCache {
    entries: Mutex<FxHashMap<Key, Entry>>,
    made: std::sync::atomic::AtomicU64,
}

/// The most analysis results a context keeps: past it, the oldest quarter goes (to be computed
/// again if asked for). The runner drops what a pass invalidates as it goes, so a pipeline stays
/// far below it; it bounds a context that lives long and has analyses asked for outside the
/// runner (a loop calling passes' functions directly), where every result would otherwise keep
/// the function it was computed from alive.
pub const MAX_CACHED_ANALYSES: usize = 1 << 16;

/// Tells every instrument of `ctx`; a hook's error becomes a warning on the context (an
/// observer's failure must not change what the pass computes).
fn tell(ctx: &PassContext, event: AnalysisEvent<'_>) {
    for i in ctx.instruments().iter() {
        if let Err(e) = i.on_analysis(&event) {
            ctx.report(Diagnostic::warning(format!(
                "instrument `{}` failed in on_analysis: {e}",
                i.name()
            )));
        }
    }
}

/// Drops the oldest entries of `map` until three quarters of [`MAX_CACHED_ANALYSES`] are left.
fn evict_oldest(map: &mut FxHashMap<Key, Entry>) {
    let keep = MAX_CACHED_ANALYSES / 4 * 3;
    let mut ages: Vec<u64> = map.values().map(|e| e.made).collect();
    let drop = ages.len().saturating_sub(keep);
    if drop == 0 {
        return;
    }
    let (_, &mut cutoff, _) = ages.select_nth_unstable(drop - 1);
    map.retain(|_, e| e.made > cutoff);
}

impl AnalysisCache {
    fn lock(&self) -> MutexGuard<'_, FxHashMap<Key, Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many results are cached.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    /// Drops every result.
    pub(crate) fn clear(&self) {
        self.lock().clear();
    }

    /// The result for `key` if its entry was computed from `pin` (as `same` judges) and is
    /// still `valid`, else computed now and cached beside a clone of `pin`. Instruments hear
    /// the hit, or the computation. `valid` runs outside the lock (it may ask for other
    /// analyses).
    #[allow(clippy::too_many_arguments)] // one private path for both kinds of analysis
    fn get_or_compute<P, T>(
        &self,
        ctx: &PassContext,
        key: Key,
        name: &'static str,
        pin: &P,
        same: impl FnOnce(&P) -> bool,
        valid: impl FnOnce(&T) -> bool,
        compute: impl FnOnce() -> T,
    ) -> Arc<T>
    where
        P: Clone + Send + Sync + 'static,
        T: Send + Sync + 'static,
    {
        let module = key.function.is_none();
        // The slot of a valid entry for this very value, or a fresh one put in its place.
        let slot: Slot = {
            let mut map = self.lock();
            match map.get(&key) {
                Some(e) if e.pin.downcast_ref::<P>().is_some_and(same) => e.slot.clone(),
                _ => {
                    let slot = Slot::default();
                    let made = self.made.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    map.insert(
                        key,
                        Entry {
                            name,
                            made,
                            pin: Box::new(pin.clone()),
                            slot: slot.clone(),
                        },
                    );
                    if map.len() > MAX_CACHED_ANALYSES {
                        evict_oldest(&mut map);
                    }
                    slot
                }
            }
        };
        let typed = |r: &Arc<dyn Any + Send + Sync>| r.clone().downcast::<T>().ok();
        if let Some(done) = slot.get().and_then(typed) {
            if valid(&done) {
                tell(
                    ctx,
                    AnalysisEvent::CacheHit {
                        analysis: name,
                        module,
                    },
                );
                return done;
            }
            // No longer valid: a fresh slot replaces this one (unless another thread did).
            let fresh = {
                let mut map = self.lock();
                match map.get_mut(&key) {
                    Some(e) if Arc::ptr_eq(&e.slot, &slot) => {
                        e.slot = Slot::default();
                        e.slot.clone()
                    }
                    Some(e) => e.slot.clone(),
                    None => Slot::default(),
                }
            };
            return Self::fill(ctx, name, module, &fresh, compute);
        }
        Self::fill(ctx, name, module, &slot, compute)
    }

    /// The result in `slot`: computed now by this thread if no other is computing it, else
    /// the other's once it is done (a hit). A computation that panics leaves the slot empty,
    /// and the next thread computes it.
    fn fill<T: Send + Sync + 'static>(
        ctx: &PassContext,
        name: &'static str,
        module: bool,
        slot: &Slot,
        compute: impl FnOnce() -> T,
    ) -> Arc<T> {
        let mut computed_here = false;
        let result = slot.get_or_init(|| {
            computed_here = true;
            let result: Arc<dyn Any + Send + Sync> = Self::compute(ctx, name, module, compute);
            result
        });
        if !computed_here {
            tell(
                ctx,
                AnalysisEvent::CacheHit {
                    analysis: name,
                    module,
                },
            );
        }
        result
            .clone()
            .downcast::<T>()
            .unwrap_or_else(|_| unreachable!("a slot holds its analysis's output type"))
    }

    fn compute<T: Send + Sync + 'static>(
        ctx: &PassContext,
        name: &str,
        module: bool,
        f: impl FnOnce() -> T,
    ) -> Arc<T> {
        tell(
            ctx,
            AnalysisEvent::Computing {
                analysis: name,
                module,
            },
        );
        let result = Arc::new(f());
        tell(
            ctx,
            AnalysisEvent::Computed {
                analysis: name,
                module,
            },
        );
        result
    }

    pub(crate) fn function<M: IrModule, A: FunctionAnalysis<M>>(
        &self,
        ctx: &PassContext,
        analysis: &A,
        func: &M::Function,
        module: &M,
    ) -> Arc<A::Output> {
        let Some(fkey) = M::function_identity(func) else {
            // No identity: nothing can be cached safely.
            return Self::compute(ctx, A::NAME, false, || analysis.compute(func, module, ctx));
        };
        let key = Key {
            analysis: TypeId::of::<A>(),
            function: Some(fkey),
        };
        self.get_or_compute(
            ctx,
            key,
            A::NAME,
            func,
            |f| M::same_function(f, func),
            |r| analysis.still_valid(r, func, module, ctx),
            || analysis.compute(func, module, ctx),
        )
    }

    pub(crate) fn module<M: IrModule, A: ModuleAnalysis<M>>(
        &self,
        ctx: &PassContext,
        analysis: &A,
        module: &M,
    ) -> Arc<A::Output> {
        let key = Key {
            analysis: TypeId::of::<A>(),
            function: None,
        };
        self.get_or_compute(
            ctx,
            key,
            A::NAME,
            module,
            |m| m.same_as(module),
            |_| true,
            || analysis.compute(module, ctx),
        )
    }

    /// After `pass` turned `input` into a different `output`: drops the results of functions
    /// that are not in `output` and of module states other than `output`, except the analyses
    /// the pass preserves, whose results move to the function of the same name in `output`
    /// (or to `output` itself). Instruments hear one `Invalidated` per analysis, by name.
    pub(crate) fn invalidate<M: IrModule>(
        &self,
        ctx: &PassContext,
        pass: &PassInfo,
        input: &M,
        output: &M,
    ) {
        let mut map = self.lock();
        if map.is_empty() {
            return;
        }
        let live: FxHashMap<usize, &M::Function> = output
            .functions()
            .filter_map(|(_, f)| M::function_identity(f).map(|k| (k, f)))
            .collect();
        let mut dropped: Vec<(&'static str, usize)> = Vec::new();
        let mut moved: Vec<(Key, Entry)> = Vec::new();
        let preserved_function = |fkey: usize| -> Option<&M::Function> {
            let (name, _) = input
                .functions()
                .find(|(_, f)| M::function_identity(f) == Some(fkey))?;
            output.functions().find(|(n, _)| *n == name).map(|(_, f)| f)
        };
        map.retain(|key, entry| {
            let keep = match key.function {
                Some(fkey) if live.contains_key(&fkey) => true,
                Some(fkey) if pass.preserves(entry.name) => {
                    if let Some(new) =
                        preserved_function(fkey).filter(|f| M::function_identity(f).is_some())
                    {
                        let new_key = Key {
                            analysis: key.analysis,
                            function: M::function_identity(new),
                        };
                        moved.push((
                            new_key,
                            Entry {
                                name: entry.name,
                                made: entry.made,
                                pin: Box::new(new.clone()),
                                slot: entry.slot.clone(),
                            },
                        ));
                        return false;
                    }
                    false
                }
                Some(_) => false,
                None if pass.preserves(entry.name) => {
                    entry.pin = Box::new(output.clone());
                    true
                }
                None => entry
                    .pin
                    .downcast_ref::<M>()
                    .is_some_and(|m| m.same_as(output)),
            };
            if !keep {
                match dropped.iter_mut().find(|(n, _)| *n == entry.name) {
                    Some((_, count)) => *count += 1,
                    None => dropped.push((entry.name, 1)),
                }
            }
            keep
        });
        for (key, entry) in moved {
            map.insert(key, entry);
        }
        drop(map);
        // Hash order is not an order to report in: by name.
        dropped.sort_unstable();
        for (analysis, entries) in dropped {
            tell(
                ctx,
                AnalysisEvent::Invalidated {
                    analysis,
                    pass: &pass.name,
                    entries,
                },
            );
        }
    }
}
