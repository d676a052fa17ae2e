//! Instruments: code that observes (and may veto) every pass a context runs, without touching
//! the passes. [`PassInstrument`] is the trait; the built-in instruments live here too.

mod chrome;
mod debug;
mod dump;
mod locked;
mod print;
mod sink;
mod skip;
mod timing;

pub use chrome::ChromeTrace;
pub use debug::{
    CrashReproducer, DebugPassManager, OptBisect, PrintChanged, Reproducer, VerifyEach,
};
pub use dump::DumpIr;
pub use locked::{Locked, PassInstrumentMut};
pub use print::{PassPrinting, PrintAfterAll, PrintBeforeAll};
pub use sink::{SharedBuffer, Sink};
pub use skip::SkipReason;
pub use timing::{PassTiming, TimingNode};

use std::any::Any;
use std::error::Error;

use crate::analysis::AnalysisEvent;
use crate::{ModuleView, PassInfo, Result};

/// An instrument: hooks called around every pass a context runs, and around the context itself.
///
/// All hooks have no-op defaults; implement the ones you need. For every hook, a context calls
/// its instruments in the order they were given. For each pass that runs: every instrument's
/// [`should_run`](PassInstrument::should_run) is called (all of them, even after one says no);
/// if any says no, the pass is skipped and only [`run_skipped_pass`](PassInstrument::run_skipped_pass)
/// fires for it (as for a pass the context's rules skip); otherwise every
/// [`run_before_pass`](PassInstrument::run_before_pass), the pass, and every
/// [`run_after_pass`](PassInstrument::run_after_pass) (which sees the output). A hook fails by
/// returning an error or by panicking; either becomes a [`PassError`](crate::PassError) or a
/// [`ContextError`](crate::ContextError) naming the instrument.
///
/// Hooks take `&self` (a context may be used from several threads): keep mutable state behind
/// a `Mutex` or atomics. Keep an `Arc` of the instrument to read its results after the run.
///
/// ```
/// use std::sync::{atomic::{AtomicUsize, Ordering}, Arc};
/// use irpass::{ModuleView, PassContext, PassInfo, PassInstrument};
/// use irpass::doc_toy::{Toy, append};
///
/// #[derive(Default)]
/// struct CountPasses(AtomicUsize);
/// impl PassInstrument for CountPasses {
///     fn name(&self) -> &str { "CountPasses" }
///     fn run_before_pass(&self, _: &dyn ModuleView, _: &PassInfo) -> irpass::Result<()> {
///         self.0.fetch_add(1, Ordering::Relaxed);
///         Ok(())
///     }
/// }
///
/// let counter = Arc::new(CountPasses::default());
/// let ctx = PassContext::builder().instrument_arc(counter.clone()).build().unwrap();
/// append("A", 0, 1).run_in(Toy::with_main(), &ctx).unwrap();
/// assert_eq!(counter.0.load(Ordering::Relaxed), 1);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a pass instrument",
    label = "not a `PassInstrument`",
    note = "an instrument whose hooks take `&mut self` (a `PassInstrumentMut`, as `#[pass_instrument]` \
            makes when a hook takes `&mut self`) is used wrapped: `irpass::instrument::Locked::new(instrument)`"
)]
pub trait PassInstrument: Any + Send + Sync {
    /// The instrument's name, used in errors and listings.
    fn name(&self) -> &str;

    /// Called when a context with this instrument is entered (before it becomes current).
    fn enter_pass_ctx(&self) -> Result<()> {
        Ok(())
    }

    /// Called when the context is exited (after it stops being current).
    fn exit_pass_ctx(&self) -> Result<()> {
        Ok(())
    }

    /// Whether the pass should run. Not consulted for passes in the context's `required_pass`.
    fn should_run(&self, _module: &dyn ModuleView, _info: &PassInfo) -> Result<bool> {
        Ok(true)
    }

    /// Called just before the pass runs, with its input.
    fn run_before_pass(&self, _module: &dyn ModuleView, _info: &PassInfo) -> Result<()> {
        Ok(())
    }

    /// Called just after the pass ran, with its output.
    fn run_after_pass(&self, _module: &dyn ModuleView, _info: &PassInfo) -> Result<()> {
        Ok(())
    }

    /// Called instead of `run_after_pass` when the pass failed after this instrument's
    /// `run_before_pass` succeeded: the pass itself (or a pass nested in it) failed, a later
    /// instrument's `run_before_pass` failed, or an earlier instrument's `run_after_pass` failed.
    /// `module` is the pass's input. Every successful
    /// `run_before_pass` is matched by exactly one `run_after_pass` or `run_after_pass_failed`,
    /// so an instrument that keeps a stack (timing) stays consistent. An error here is attached
    /// to the first one; it never replaces it.
    fn run_after_pass_failed(
        &self,
        _module: &dyn ModuleView,
        _info: &PassInfo,
        _error: &(dyn Error + 'static),
    ) -> Result<()> {
        Ok(())
    }

    /// Called for a pass of a Sequential that does not run, with the reason: its opt level
    /// is above the context's, the context disables it, or an instrument's
    /// [`should_run`](PassInstrument::should_run) said no (then after every `should_run`).
    /// No other hook fires for that pass. `module` is the module the pass would have seen.
    /// (A required pass that already ran on the very same module is not "skipped": it is
    /// simply not needed, and no hook fires.)
    fn run_skipped_pass(
        &self,
        _module: &dyn ModuleView,
        _info: &PassInfo,
        _reason: &SkipReason,
    ) -> Result<()> {
        Ok(())
    }

    /// Called when an [analysis](crate::analysis) is computed (before and after), served from
    /// the cache, or has cached results dropped after a pass. An error becomes a warning
    /// diagnostic on the context: an observer never changes what a pass computes.
    fn on_analysis(&self, _event: &AnalysisEvent<'_>) -> Result<()> {
        Ok(())
    }
}
