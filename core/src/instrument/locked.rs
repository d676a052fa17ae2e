//! Instruments whose hooks take `&mut self`: [`PassInstrumentMut`] and the [`Locked`] wrapper.

use std::error::Error;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::{PassInstrument, SkipReason};
use crate::analysis::AnalysisEvent;
use crate::{ModuleView, PassInfo, Result};

/// An instrument whose hooks take `&mut self`. Wrap it in [`Locked`] to use it: the lock
/// serialises the hooks (a context may run passes on several threads).
///
/// `#[pass_instrument]` implements this trait instead of [`PassInstrument`] when one of the
/// hooks written takes `&mut self`. The hooks mean what [`PassInstrument`]'s mean.
pub trait PassInstrumentMut: Send + 'static {
    /// The instrument's name.
    const NAME: &'static str;

    /// See [`PassInstrument::enter_pass_ctx`].
    fn enter_pass_ctx(&mut self) -> Result<()> {
        Ok(())
    }
    /// See [`PassInstrument::exit_pass_ctx`].
    fn exit_pass_ctx(&mut self) -> Result<()> {
        Ok(())
    }
    /// See [`PassInstrument::should_run`].
    fn should_run(&mut self, _module: &dyn ModuleView, _info: &PassInfo) -> Result<bool> {
        Ok(true)
    }
    /// See [`PassInstrument::run_before_pass`].
    fn run_before_pass(&mut self, _module: &dyn ModuleView, _info: &PassInfo) -> Result<()> {
        Ok(())
    }
    /// See [`PassInstrument::run_after_pass`].
    fn run_after_pass(&mut self, _module: &dyn ModuleView, _info: &PassInfo) -> Result<()> {
        Ok(())
    }
    /// See [`PassInstrument::run_after_pass_failed`].
    fn run_after_pass_failed(
        &mut self,
        _module: &dyn ModuleView,
        _info: &PassInfo,
        _error: &(dyn Error + 'static),
    ) -> Result<()> {
        Ok(())
    }
    /// See [`PassInstrument::run_skipped_pass`].
    fn run_skipped_pass(
        &mut self,
        _module: &dyn ModuleView,
        _info: &PassInfo,
        _reason: &SkipReason,
    ) -> Result<()> {
        Ok(())
    }
    /// See [`PassInstrument::on_analysis`].
    fn on_analysis(&mut self, _event: &AnalysisEvent<'_>) -> Result<()> {
        Ok(())
    }
}

/// A [`PassInstrumentMut`] behind a mutex, usable as a [`PassInstrument`].
///
/// A hook that panicked does not poison it for the next hooks: the framework reports the panic
/// and the state is used as it was left.
///
/// ```
/// use irpass::doc_toy::{Toy, append};
/// use irpass::{ModuleView, PassContext, PassInfo, instrument::Locked};
///
/// #[derive(Default)]
/// struct Names(Vec<String>);
///
/// #[irpass::pass_instrument]
/// impl Names {
///     fn run_before_pass(&mut self, _module: &dyn ModuleView, info: &PassInfo) {
///         self.0.push(info.name.to_string());
///     }
/// }
///
/// let ctx = PassContext::builder().instrument(Locked::new(Names::default())).build().unwrap();
/// ctx.scope(|| append("A", 0, 1).run(Toy::with_main())).unwrap().unwrap();
/// assert_eq!(ctx.instrument::<Locked<Names>>().unwrap().lock().0, ["A"]);
/// ```
#[derive(Debug, Default)]
pub struct Locked<T>(Mutex<T>);

impl<T> Locked<T> {
    /// Wraps `inner`.
    pub fn new(inner: T) -> Self {
        Locked(Mutex::new(inner))
    }

    /// The wrapped instrument, locked (to read its results).
    pub fn lock(&self) -> MutexGuard<'_, T> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The wrapped instrument.
    pub fn into_inner(self) -> T {
        self.0.into_inner().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T: PassInstrumentMut> PassInstrument for Locked<T> {
    fn name(&self) -> &str {
        T::NAME
    }
    fn enter_pass_ctx(&self) -> Result<()> {
        self.lock().enter_pass_ctx()
    }
    fn exit_pass_ctx(&self) -> Result<()> {
        self.lock().exit_pass_ctx()
    }
    fn should_run(&self, module: &dyn ModuleView, info: &PassInfo) -> Result<bool> {
        self.lock().should_run(module, info)
    }
    fn run_before_pass(&self, module: &dyn ModuleView, info: &PassInfo) -> Result<()> {
        self.lock().run_before_pass(module, info)
    }
    fn run_after_pass(&self, module: &dyn ModuleView, info: &PassInfo) -> Result<()> {
        self.lock().run_after_pass(module, info)
    }
    fn run_after_pass_failed(
        &self,
        module: &dyn ModuleView,
        info: &PassInfo,
        error: &(dyn Error + 'static),
    ) -> Result<()> {
        self.lock().run_after_pass_failed(module, info, error)
    }
    fn run_skipped_pass(
        &self,
        module: &dyn ModuleView,
        info: &PassInfo,
        reason: &SkipReason,
    ) -> Result<()> {
        self.lock().run_skipped_pass(module, info, reason)
    }
    fn on_analysis(&self, event: &AnalysisEvent<'_>) -> Result<()> {
        self.lock().on_analysis(event)
    }
}
