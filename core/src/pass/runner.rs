//! The runner: the one place where every pass, of every kind, is run.
//!
//! Every decision is made here, in one funnel that all pass kinds go through (like rustc's
//! `pass_manager.rs`): is the pass enabled (and if not, who hears why), has its required pass
//! already run on this very module, do the instruments let it run, the before/after hooks,
//! catching panics, change detection, and building the error that carries the last good
//! module.

use std::borrow::Cow;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use super::function_map::map_functions;
use super::handle::Repr;
use super::resolve::{Step, collect_watched};
use crate::context::InstrumentList;
use crate::error::{Culprit, FailureCause, Hook, PassError, SecondaryFailure};
use crate::instrument::SkipReason;
use crate::panic::{guarded, guarded_each, panic_message};
use crate::{IrModule, PassContext, PassInfo, PassInstrument};

/// How a pass came to be run: this decides which enabling rule applies.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// Called directly (or the outermost Sequential): always runs.
    Top,
    /// A pass of a Sequential: runs when the context enables it.
    Child,
    /// A required pass: runs unless it already ran on this very module.
    Required,
}

/// The state of one pipeline run.
pub(crate) struct Runner<'a, M: IrModule> {
    ctx: &'a PassContext,
    instruments: &'a [Arc<dyn PassInstrument>],
    /// Passes whose runs are recorded, because some pass requires them.
    watched: Cow<'a, FxHashSet<Cow<'static, str>>>,
    /// Bumped every time a pass changes the module.
    generation: u64,
    /// For each watched pass: the generation of the module it last ran on (after it ran).
    ran: FxHashMap<&'a str, u64>,
    /// Names from the outermost pass down to the running one.
    path: Vec<&'a str>,
    _ir: std::marker::PhantomData<fn(M) -> M>,
}

impl<'a, M: IrModule> Runner<'a, M> {
    pub(crate) fn new(
        ctx: &'a PassContext,
        instruments: &'a InstrumentList,
        top: &'a Step<M>,
    ) -> Self {
        let watched = match (&top.pass.0, top.required.is_empty()) {
            (Repr::Sequential(seq), true) => Cow::Borrowed(&seq.watched),
            _ => {
                let mut names = FxHashSet::default();
                collect_watched(top, &mut names);
                Cow::Owned(names)
            }
        };
        Runner {
            ctx,
            instruments,
            watched,
            generation: 0,
            ran: FxHashMap::default(),
            path: Vec::new(),
            _ir: std::marker::PhantomData,
        }
    }

    /// Runs a directly called pass (or outermost Sequential) with `ctx` current on this thread.
    pub(crate) fn run_top(mut self, step: &'a Step<M>, module: M) -> Result<M, PassError<M>> {
        let _current = self.ctx.enter_worker();
        self.execute(step, module, Origin::Top)
    }

    fn execute(&mut self, step: &'a Step<M>, module: M, origin: Origin) -> Result<M, PassError<M>> {
        let info = step.pass.info();
        let name: &'a str = &info.name;
        let skipped = match origin {
            Origin::Child => self.ctx.skip_reason(info),
            Origin::Required if self.ran.get(name) == Some(&self.generation) => return Ok(module),
            _ => None,
        };
        self.path.push(name);
        let result = match skipped {
            None => self.execute_enabled(step, info, module),
            Some(reason) => self.skip(info, module, &reason),
        };
        self.path.pop();
        result
    }

    /// A pass that does not run: every instrument hears why (`run_skipped_pass`), and the
    /// module goes on unchanged.
    fn skip(&self, info: &PassInfo, module: M, reason: &SkipReason) -> Result<M, PassError<M>> {
        let instruments = self.instruments;
        match guarded_each(instruments, |i| i.run_skipped_pass(&module, info, reason)) {
            Ok(()) => Ok(module),
            Err((k, cause)) => {
                let culprit = instrument(instruments[k].name(), Hook::RunSkippedPass);
                Err(self.error(culprit, cause, module))
            }
        }
    }

    fn execute_enabled(
        &mut self,
        step: &'a Step<M>,
        info: &'a PassInfo,
        module: M,
    ) -> Result<M, PassError<M>> {
        let mut module = module;
        for required in &step.required {
            module = self.execute(required, module, Origin::Required)?;
        }
        let instruments = self.instruments;
        if !instruments.is_empty() {
            match self.open(info, &module) {
                Ok(None) => {}
                Ok(Some(vetoed_by)) => {
                    let by = instruments[vetoed_by].name().to_string();
                    return self.skip(info, module, &SkipReason::Vetoed { by });
                }
                Err((Hook::ShouldRun, k, cause)) => {
                    let culprit = instrument(instruments[k].name(), Hook::ShouldRun);
                    return Err(self.error(culprit, cause, module));
                }
                Err((hook, k, cause)) => {
                    let mut err =
                        self.error(instrument(instruments[k].name(), hook), cause, module);
                    notify_failed(&instruments[..k], info, &mut err);
                    return Err(err);
                }
            }
        }

        let input = module.clone();
        let output = match &step.pass.0 {
            Repr::Module(pass) => guarded(|| pass.transform_module(module, self.ctx))
                .map_err(|cause| self.error(pass_culprit(info, None), cause, input.clone())),
            Repr::Function(pass) => {
                map_functions(pass.as_ref(), module, self.ctx).map_err(|(function, cause)| {
                    self.error(pass_culprit(info, Some(function)), cause, input.clone())
                })
            }
            Repr::Sequential(seq) => match seq.max_rounds {
                None => self.run_children(&seq.steps, module),
                Some(max) => self.run_to_fixpoint(info, &seq.steps, max, module),
            },
        };
        let output = match output {
            Ok(output) => output,
            Err(mut err) => {
                notify_failed(instruments, info, &mut err);
                return Err(err);
            }
        };

        if !output.same_as(&input) {
            self.generation += 1;
            // A Sequential's passes invalidated as they went (and kept what they preserve).
            if !matches!(step.pass.0, Repr::Sequential(_)) {
                self.ctx.invalidate_analyses(info, &input, &output);
            }
        }
        if !self.watched.is_empty() && self.watched.contains(info.name.as_ref()) {
            self.ran.insert(&info.name, self.generation);
        }
        if let Err((k, cause)) = guarded_each(instruments, |i| i.run_after_pass(&output, info)) {
            let culprit = instrument(instruments[k].name(), Hook::RunAfterPass);
            let mut err = self.error(culprit, cause, input);
            notify_failed(&instruments[k + 1..], info, &mut err);
            return Err(err);
        }
        Ok(output)
    }

    /// Runs a fixpoint's passes in rounds until one leaves the module as it was; a round that
    /// still changes it after `max` is an error carrying the module it left.
    fn run_to_fixpoint(
        &mut self,
        info: &PassInfo,
        steps: &'a [Step<M>],
        max: u32,
        module: M,
    ) -> Result<M, PassError<M>> {
        let mut module = module;
        for _ in 0..max {
            let before = module.clone();
            module = self.run_children(steps, module)?;
            if module.same_as(&before) {
                return Ok(module);
            }
        }
        let rounds = if max == 1 { "round" } else { "rounds" };
        let cause = FailureCause::Error(
            format!("no fixpoint within {max} {rounds}: the last round still changed the module")
                .into(),
        );
        Err(self.error(pass_culprit(info, None), cause, module))
    }

    /// Runs a Sequential's passes in order; the first failure stops it.
    fn run_children(&mut self, steps: &'a [Step<M>], module: M) -> Result<M, PassError<M>> {
        let mut module = module;
        for child in steps {
            module = self.execute(child, module, Origin::Child)?;
        }
        Ok(module)
    }

    /// Opens a pass: asks every instrument whether it may run (all of them, even after one
    /// says no; not for passes in the context's `required_pass`), then, unless one said no,
    /// calls every `run_before_pass`. `Ok(Some(k))` is a veto, `k` the first instrument that
    /// said no; a failure says in which hook and instrument. One unwinding guard covers both
    /// phases (it is the fixed cost per pass).
    fn open(
        &self,
        info: &PassInfo,
        module: &M,
    ) -> Result<Option<usize>, (Hook, usize, FailureCause)> {
        let consult = !self.ctx.is_required(&info.name);
        let (mut hook, mut at) = (Hook::ShouldRun, 0);
        let opened = catch_unwind(AssertUnwindSafe(|| -> crate::Result<Option<usize>> {
            if consult {
                let mut veto = None;
                for (k, inst) in self.instruments.iter().enumerate() {
                    at = k;
                    if !inst.should_run(module, info)? && veto.is_none() {
                        veto = Some(k);
                    }
                }
                if veto.is_some() {
                    return Ok(veto);
                }
            }
            hook = Hook::RunBeforePass;
            for (k, inst) in self.instruments.iter().enumerate() {
                at = k;
                inst.run_before_pass(module, info)?;
            }
            Ok(None)
        }));
        match opened {
            Ok(Ok(run)) => Ok(run),
            Ok(Err(err)) => Err((hook, at, FailureCause::Error(err))),
            Err(payload) => Err((
                hook,
                at,
                FailureCause::Panic(panic_message(payload.as_ref())),
            )),
        }
    }

    fn error(&self, culprit: Culprit, cause: FailureCause, module: M) -> PassError<M> {
        let path = self.path.iter().map(|s| s.to_string()).collect();
        PassError::new(culprit, path, cause, module)
    }
}

fn pass_culprit(info: &PassInfo, function: Option<String>) -> Culprit {
    Culprit::Pass {
        name: info.name.to_string(),
        function,
    }
}

fn instrument(name: &str, hook: Hook) -> Culprit {
    Culprit::Instrument {
        name: name.to_string(),
        hook,
    }
}

/// Tells `instruments` (those whose `run_before_pass` succeeded) that the pass failed; their
/// own failures are attached to `err`, never replacing it.
fn notify_failed<M: IrModule>(
    instruments: &[Arc<dyn PassInstrument>],
    info: &PassInfo,
    err: &mut PassError<M>,
) {
    let mut also = Vec::new();
    for inst in instruments {
        let failure: &(dyn std::error::Error + 'static) = &*err;
        if let Err(cause) = guarded(|| inst.run_after_pass_failed(err.module(), info, failure)) {
            also.push(SecondaryFailure {
                culprit: instrument(inst.name(), Hook::RunAfterPassFailed),
                cause,
            });
        }
    }
    for s in also {
        err.attach(s);
    }
}
