//! [`PassContextBuilder`]: builds a validated [`PassContext`].

use rustc_hash::FxHashSet;
use std::sync::Arc;

use super::PassContext;
use crate::config::{Config, ConfigKey};
use crate::error::ConfigError;
use crate::instrument::PassInstrument;

/// Builds a [`PassContext`]; config values are validated against the registered keys in
/// [`build`](PassContextBuilder::build).
///
/// ```
/// use irpass::PassContext;
/// // An unregistered key is an error that names it.
/// let err = PassContext::builder().config_text("no.such.Key", "1").build().unwrap_err();
/// assert!(err.to_string().contains("unknown config key `no.such.Key`"));
/// ```
#[must_use]
pub struct PassContextBuilder {
    opt_level: u32,
    required: FxHashSet<String>,
    disabled: FxHashSet<String>,
    config: Config,
    errors: Vec<ConfigError>,
    threads: Option<usize>,
    instruments: Vec<Arc<dyn PassInstrument>>,
}

impl Default for PassContextBuilder {
    fn default() -> Self {
        PassContextBuilder {
            opt_level: 2,
            required: FxHashSet::default(),
            disabled: FxHashSet::default(),
            config: Config::default(),
            errors: Vec::new(),
            threads: None,
            instruments: Vec::new(),
        }
    }
}

/// The highest optimisation level: a pass declares a level from 0 to this, and a context runs
/// the passes whose level is at most its own.
pub const MAX_OPT_LEVEL: u32 = 4;

/// The environment variable that adds registered instruments to every context built:
/// `IRPASS_INSTRUMENTS=PassTiming,PrintChanged`.
pub const INSTRUMENTS_ENV: &str = "IRPASS_INSTRUMENTS";

impl PassContextBuilder {
    /// Sets the optimisation level (default 2): 0 to [`MAX_OPT_LEVEL`], the range of a pass's
    /// own level. A level above it is an error of [`build`](PassContextBuilder::build) (it
    /// would run what [`MAX_OPT_LEVEL`] runs, and is more likely a mistake).
    ///
    /// ```
    /// use irpass::PassContext;
    /// let err = PassContext::builder().opt_level(7).build().unwrap_err();
    /// assert!(err.to_string().contains("opt level 7"), "{err}");
    /// ```
    pub fn opt_level(mut self, level: u32) -> Self {
        if level > MAX_OPT_LEVEL {
            self.errors.push(ConfigError::OptLevel { level });
        }
        self.opt_level = level.min(MAX_OPT_LEVEL);
        self
    }

    /// Adds a pass name to `required_pass`.
    pub fn required_pass(mut self, name: impl Into<String>) -> Self {
        self.required.insert(name.into());
        self
    }

    /// Adds a pass name to `disabled_pass`.
    pub fn disabled_pass(mut self, name: impl Into<String>) -> Self {
        self.disabled.insert(name.into());
        self
    }

    /// Sets how many threads function passes may use (`1` runs them on the calling thread).
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads.max(1));
        self
    }

    /// Sets a config value, typed.
    pub fn config<T>(mut self, key: &ConfigKey<T>, value: T) -> Self
    where
        T: serde::Serialize + Send + Sync + 'static,
    {
        if let Err(e) = self.config.set(key, value) {
            self.errors.push(e);
        }
        self
    }

    /// Sets a config value from text, as on a command line: JSON (`4`, `true`, `{"max_depth": 4}`),
    /// or else a plain string.
    pub fn config_text(mut self, key: &str, text: &str) -> Self {
        if let Err(e) = self.config.set_text(key, text) {
            self.errors.push(e);
        }
        self
    }

    /// Sets a config value from JSON.
    pub fn config_json(mut self, key: &str, value: serde_json::Value) -> Self {
        if let Err(e) = self.config.set_json(key, value) {
            self.errors.push(e);
        }
        self
    }

    /// Adds an instrument (instruments are called in the order they are added).
    pub fn instrument(mut self, instrument: impl PassInstrument) -> Self {
        self.instruments.push(Arc::new(instrument));
        self
    }

    /// Adds an instrument that the caller keeps a handle to (to read its results later).
    pub fn instrument_arc(mut self, instrument: Arc<dyn PassInstrument>) -> Self {
        self.instruments.push(instrument);
        self
    }

    /// Builds the context, or returns the first config error.
    pub fn build(mut self) -> Result<PassContext, ConfigError> {
        if !self.errors.is_empty() {
            return Err(self.errors.swap_remove(0));
        }
        // Instruments switched on by name for any program, without code.
        if let Ok(names) = std::env::var(INSTRUMENTS_ENV) {
            for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                let instrument = crate::registry::lookup_instrument(name)?;
                self.instruments.push(instrument);
            }
        }
        Ok(PassContext::from_parts(
            self.opt_level,
            self.required,
            self.disabled,
            self.config,
            self.threads,
            self.instruments,
        ))
    }
}
