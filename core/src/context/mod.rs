//! [`PassContext`]: the options, config and instruments passes run under, and its scopes.

mod builder;
mod hooks;
mod stack;

use rustc_hash::FxHashSet;
use std::fmt;
use std::sync::{Arc, Mutex, RwLock};

pub use builder::{INSTRUMENTS_ENV, MAX_OPT_LEVEL, PassContextBuilder};
pub use stack::ContextGuard;
pub(crate) use stack::WorkerGuard;

use crate::analysis::{AnalysisCache, FunctionAnalysis, ModuleAnalysis};
use crate::config::{Config, ConfigKey};
use crate::diagnostics::Diagnostic;
use crate::error::ContextError;
use crate::instrument::{PassInstrument, SkipReason};
use crate::{IrModule, PassInfo};

/// The instruments of a context, shared cheaply with a running pipeline.
pub type InstrumentList = Arc<[Arc<dyn PassInstrument>]>;

/// The options, config and instruments that passes run under.
///
/// Build one with [`PassContext::builder`]; make it current for a scope with
/// [`PassContext::enter`] (or [`PassContext::scope`]). [`PassContext::current`] gives the innermost
/// entered context of this thread, or the thread's own default one. Cloning is an `Arc` clone:
/// clones are the same context.
///
/// ```
/// use irpass::PassContext;
///
/// let ctx = PassContext::builder().opt_level(3).disabled_pass("FuseOps").build().unwrap();
/// assert_eq!(PassContext::current().opt_level(), 2); // the thread's default
/// ctx.scope(|| {
///     assert_eq!(PassContext::current().opt_level(), 3);
///     assert!(PassContext::current().same_as(&ctx));
/// })
/// .unwrap();
/// assert_eq!(PassContext::current().opt_level(), 2);
/// ```
#[derive(Clone)]
pub struct PassContext {
    inner: Arc<Inner>,
}

struct Inner {
    opt_level: u32,
    required: FxHashSet<String>,
    disabled: FxHashSet<String>,
    config: Config,
    threads: Option<usize>,
    instruments: RwLock<InstrumentList>,
    /// Whether `instruments` is empty, kept beside it (written under its write lock): the
    /// enter, exit and pass paths of a context without instruments read one flag, not a lock.
    no_instruments: std::sync::atomic::AtomicBool,
    diagnostics: Mutex<Vec<Diagnostic>>,
    analyses: AnalysisCache,
    exit_errors: Mutex<Vec<ContextError>>,
}

impl PassContext {
    /// A builder with the defaults: opt_level 2, no required or disabled passes, empty config,
    /// no instruments, threads chosen by rayon.
    pub fn builder() -> PassContextBuilder {
        PassContextBuilder::default()
    }

    pub(crate) fn from_parts(
        opt_level: u32,
        required: FxHashSet<String>,
        disabled: FxHashSet<String>,
        config: Config,
        threads: Option<usize>,
        instruments: Vec<Arc<dyn PassInstrument>>,
    ) -> Self {
        PassContext {
            inner: Arc::new(Inner {
                opt_level,
                required,
                disabled,
                config,
                threads,
                no_instruments: std::sync::atomic::AtomicBool::new(instruments.is_empty()),
                instruments: RwLock::new(instruments.into()),
                diagnostics: Mutex::new(Vec::new()),
                analyses: AnalysisCache::default(),
                exit_errors: Mutex::new(Vec::new()),
            }),
        }
    }

    /// The innermost context entered on this thread, or the thread's default context.
    pub fn current() -> PassContext {
        stack::current()
    }

    /// Makes this context current until the guard is dropped or [`ContextGuard::exit`]ed.
    ///
    /// Every instrument's `enter_pass_ctx` runs first, in order; if one fails, the ones before it
    /// get `exit_pass_ctx` in reverse order, the instruments are cleared, the context is not
    /// entered and the error is returned.
    pub fn enter(&self) -> Result<ContextGuard, ContextError> {
        hooks::enter_all(self)?;
        Ok(stack::push(self.clone()))
    }

    /// Runs `body` with this context entered, then exits it. An error entering or exiting is
    /// returned; `body`'s value is lost only when exiting fails.
    pub fn scope<R>(&self, body: impl FnOnce() -> R) -> Result<R, ContextError> {
        let guard = self.enter()?;
        let value = body();
        guard.exit()?;
        Ok(value)
    }

    /// The optimisation level (default 2).
    pub fn opt_level(&self) -> u32 {
        self.inner.opt_level
    }

    /// The passes that must run whatever their level (`required_pass`).
    pub fn required_passes(&self) -> impl Iterator<Item = &str> {
        self.inner.required.iter().map(String::as_str)
    }

    /// The passes that must not run (`disabled_pass`).
    pub fn disabled_passes(&self) -> impl Iterator<Item = &str> {
        self.inner.disabled.iter().map(String::as_str)
    }

    /// Whether `name` is in `required_pass`.
    pub fn is_required(&self, name: &str) -> bool {
        !self.inner.required.is_empty() && self.inner.required.contains(name)
    }

    /// Whether `name` is in `disabled_pass`.
    pub fn is_disabled(&self, name: &str) -> bool {
        !self.inner.disabled.is_empty() && self.inner.disabled.contains(name)
    }

    /// Whether a Sequential runs a pass with this info: not disabled, and either required or
    /// at most the context's opt level. Disabled beats required; required beats opt level.
    ///
    /// ```
    /// use irpass::{PassContext, PassInfo, PassKind};
    /// let ctx = PassContext::builder().opt_level(1).required_pass("B").disabled_pass("C").build().unwrap();
    /// let info = |name, level| PassInfo::new(name, level, PassKind::Module);
    /// assert!(ctx.is_enabled(&info("A", 1)));   // inclusive
    /// assert!(!ctx.is_enabled(&info("A", 2)));
    /// assert!(ctx.is_enabled(&info("B", 3)));   // required beats opt level
    /// assert!(!ctx.is_enabled(&info("C", 0)));  // disabled
    /// ```
    pub fn is_enabled(&self, info: &PassInfo) -> bool {
        self.skip_reason(info).is_none()
    }

    /// Why a pass of a Sequential would not run under this context, or `None` when it runs:
    /// [`is_enabled`](Self::is_enabled) with the reason.
    ///
    /// ```
    /// use irpass::{PassContext, PassInfo, PassKind, instrument::SkipReason};
    /// let info = |name, level| PassInfo::new(name, level, PassKind::Module);
    /// let ctx = PassContext::builder().opt_level(1).disabled_pass("C").build().unwrap();
    /// assert_eq!(ctx.skip_reason(&info("A", 1)), None);
    /// assert_eq!(ctx.skip_reason(&info("B", 2)), Some(SkipReason::OptLevel { pass: 2, context: 1 }));
    /// assert_eq!(ctx.skip_reason(&info("C", 0)), Some(SkipReason::Disabled));
    /// ```
    pub fn skip_reason(&self, info: &PassInfo) -> Option<SkipReason> {
        if self.is_disabled(&info.name) {
            Some(SkipReason::Disabled)
        } else if self.inner.opt_level >= info.opt_level || self.is_required(&info.name) {
            None
        } else {
            Some(SkipReason::OptLevel {
                pass: info.opt_level,
                context: self.inner.opt_level,
            })
        }
    }

    /// The result of the function analysis `analysis` for `func`, a function of `module`: from
    /// the context's cache when it holds one for this very function value that is still valid
    /// in `module` ([`FunctionAnalysis::still_valid`]), else computed (and cached when the IR
    /// gives functions an identity, [`IrModule::function_identity`]). See [`crate::analysis`].
    pub fn function_analysis<M: IrModule, A: FunctionAnalysis<M>>(
        &self,
        analysis: &A,
        func: &M::Function,
        module: &M,
    ) -> Arc<A::Output> {
        self.inner.analyses.function(self, analysis, func, module)
    }

    /// The result of the module analysis `analysis` for `module`: cached with the module
    /// value, dropped after a pass that changes the module unless the pass preserves it.
    pub fn module_analysis<M: IrModule, A: ModuleAnalysis<M>>(
        &self,
        analysis: &A,
        module: &M,
    ) -> Arc<A::Output> {
        self.inner.analyses.module(self, analysis, module)
    }

    /// How many analysis results the context holds.
    pub fn cached_analyses(&self) -> usize {
        self.inner.analyses.len()
    }

    /// Drops every cached analysis result (and the functions and modules they pin).
    pub fn clear_analyses(&self) {
        self.inner.analyses.clear();
    }

    /// After `pass` changed `input` into `output`: the runner's invalidation step.
    pub(crate) fn invalidate_analyses<M: IrModule>(&self, pass: &PassInfo, input: &M, output: &M) {
        self.inner.analyses.invalidate(self, pass, input, output);
    }

    /// The validated config.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The value of a config key, if set.
    pub fn get<T: 'static>(&self, key: &ConfigKey<T>) -> Option<&T> {
        self.inner.config.get(key)
    }

    /// The value of a config key, or the type's default when it is not set.
    pub fn get_or_default<T: Clone + Default + 'static>(&self, key: &ConfigKey<T>) -> T {
        self.get(key).cloned().unwrap_or_default()
    }

    /// How many threads function passes may use (`None`: rayon's default, one per core).
    pub fn threads(&self) -> Option<usize> {
        self.inner.threads
    }

    /// The instruments, in order (a snapshot: cheap to clone).
    pub fn instruments(&self) -> InstrumentList {
        self.inner
            .instruments
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The first instrument of type `T`, to read its results (e.g. a `PassTiming` report).
    pub fn instrument<T: PassInstrument>(&self) -> Option<Arc<T>> {
        self.instruments().iter().find_map(|i| {
            let any: Arc<dyn std::any::Any + Send + Sync> = i.clone();
            any.downcast::<T>().ok()
        })
    }

    /// Whether the context has no instruments (no snapshot taken).
    pub(crate) fn has_no_instruments(&self) -> bool {
        self.inner
            .no_instruments
            .load(std::sync::atomic::Ordering::Acquire)
    }

    pub(crate) fn set_instruments(&self, list: InstrumentList) {
        let mut slot = self
            .inner
            .instruments
            .write()
            .unwrap_or_else(|e| e.into_inner());
        self.inner
            .no_instruments
            .store(list.is_empty(), std::sync::atomic::Ordering::Release);
        *slot = list;
    }

    /// Replaces the instruments, as TVM's `override_instruments`: the old instruments get
    /// `exit_pass_ctx`, then the new ones get `enter_pass_ctx` (with the usual failure protocol).
    pub fn override_instruments(
        &self,
        instruments: Vec<Arc<dyn PassInstrument>>,
    ) -> Result<(), ContextError> {
        hooks::exit_all(self)?;
        self.set_instruments(instruments.into());
        hooks::enter_all(self)
    }

    /// Records a diagnostic (a pass's warning, say) on the context.
    pub fn report(&self, diagnostic: Diagnostic) {
        self.inner
            .diagnostics
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(diagnostic);
    }

    /// Takes the diagnostics recorded so far.
    pub fn take_diagnostics(&self) -> Vec<Diagnostic> {
        std::mem::take(
            &mut *self
                .inner
                .diagnostics
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        )
    }

    /// Takes the errors of exits that happened in a guard's `Drop` (where they cannot be returned).
    pub fn take_exit_errors(&self) -> Vec<ContextError> {
        std::mem::take(
            &mut *self
                .inner
                .exit_errors
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        )
    }

    pub(crate) fn record_exit_error(&self, err: ContextError) {
        self.inner
            .exit_errors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(err);
    }

    /// Whether `other` is the same context (a clone of this one).
    pub fn same_as(&self, other: &PassContext) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Makes this context current on a worker thread for a while, without running hooks.
    pub(crate) fn enter_worker(&self) -> WorkerGuard {
        stack::push_worker(self.clone())
    }
}

impl Default for PassContext {
    fn default() -> Self {
        PassContext::from_parts(
            2,
            FxHashSet::default(),
            FxHashSet::default(),
            Config::default(),
            None,
            Vec::new(),
        )
    }
}

impl fmt::Debug for PassContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut required: Vec<&str> = self.required_passes().collect();
        let mut disabled: Vec<&str> = self.disabled_passes().collect();
        required.sort_unstable();
        disabled.sort_unstable();
        let instruments: Vec<String> = self
            .instruments()
            .iter()
            .map(|i| i.name().to_string())
            .collect();
        f.debug_struct("PassContext")
            .field("opt_level", &self.opt_level())
            .field("required_pass", &required)
            .field("disabled_pass", &disabled)
            .field("config", &self.inner.config)
            .field("threads", &self.threads())
            .field("instruments", &instruments)
            .finish()
    }
}
