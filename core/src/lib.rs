//! # irpass
//!
//! An IR-generic framework for writing and running compiler passes, after Apache TVM's pass
//! infrastructure, with what LLVM's and MLIR's pass managers added since.
//!
//! - An IR implements one trait, [`IrModule`]; instruments see it as a [`ModuleView`].
//! - Passes are [`ModulePass`]es or [`FunctionPass`]es wrapped in a [`Pass`] value; a
//!   [`Sequential`] is an ordered, nestable list of passes. Function passes run in parallel.
//! - A [`PassContext`] carries the opt level, required/disabled passes, typed config and
//!   [instruments](instrument); contexts nest on a thread-local stack.
//! - Passes, instruments and config keys register themselves at link time ([`registry`]).
//! - A failed run returns a [`PassError`] that names the pass and its path and carries the last
//!   good module; panics in passes and hooks are caught and become such errors.
//!
//! ```
//! use irpass::doc_toy::{Toy, append};
//! use std::sync::Arc;
//! use irpass::{PassContext, Sequential, instrument::PassTiming};
//!
//! let timing = Arc::new(PassTiming::new());
//! let ctx = PassContext::builder().opt_level(2).instrument_arc(timing.clone()).build().unwrap();
//! let pipeline = Sequential::named("opt", [append("A", 1, 1), append("B", 3, 2)]).unwrap();
//! let module = ctx.scope(|| pipeline.run(Toy::with_main())).unwrap().unwrap();
//! assert_eq!(module.to_string(), "main = [1]\n");
//! let children = &timing.roots()[0].children;
//! assert_eq!(children[0].name, "A");
//! assert_eq!(children[1].skipped.as_deref(), Some("its opt level 3 is above the context's 2"));
//! ```

extern crate self as irpass;

pub mod analysis;
pub mod config;
mod config_key;
mod context;
mod decode;
mod diagnostics;
pub mod doc_toy;
#[cfg(feature = "driver")]
pub mod driver;
mod error;
pub mod guide;
pub mod instrument;
mod location;
mod macro_support;
#[cfg(feature = "mapped")]
pub mod mapped;
mod module;
mod panic;
mod pass;
pub mod pipeline;
pub mod registry;
pub mod shell;
pub mod stats;
pub mod suggest;

pub use config::{Config, ConfigKey, ConfigOption};
pub use context::{
    ContextGuard, INSTRUMENTS_ENV, InstrumentList, MAX_OPT_LEVEL, PassContext, PassContextBuilder,
};
pub use diagnostics::{Diagnostic, Diagnostics, Severity};
pub use error::{
    BoxError, BuildError, ConfigError, ContextError, Culprit, Duplicate, FailureCause, Hook,
    HookFailure, LINK_HINT, PassError, RegistryError, Result, SecondaryFailure,
};
pub use instrument::PassInstrument;
pub use macro_support::IntoResult;
pub use module::{IrModule, ModuleView};
pub use pass::{
    DEFAULT_MAX_ROUNDS, DEFAULT_SEQUENTIAL_NAME, DefaultPass, FIXPOINT_NAME, FunctionPass,
    ModuleEdit, ModuleEdits, ModulePass, Pass, PassInfo, PassKind, PrintIr, Requirement,
    Sequential,
};

pub use irpass_macros::{
    PassOptions, function_analysis, function_pass, module_analysis, module_pass, pass_instrument,
};

/// Declares typed config keys (`ConfigKey<T>` constants) and registers them, so that contexts
/// accept them and `--list-configs` shows them.
///
/// `pub NAME: Type = "namespace.Key";` per key, its doc comment kept; the value type must
/// implement `serde::Deserialize` (values are given as JSON or plain text). TVM's short form
/// `pass_config_option!("ns.Key", Type)` registers a key without declaring a constant.
///
/// ```
/// use irpass::{pass_config_option, PassContext};
///
/// #[derive(Debug, Default, PartialEq, serde::Deserialize)]
/// pub struct UnrollLoopConfig { pub auto_max_step: u32 }
///
/// pass_config_option! {
///     /// Limits for loop unrolling.
///     pub UNROLL_LOOP: UnrollLoopConfig = "tir.UnrollLoop";
/// }
/// pass_config_option!("tir.disable_vectorize", bool);
///
/// let ctx = PassContext::builder()
///     .config_text("tir.UnrollLoop", r#"{"auto_max_step": 16}"#)
///     .config_text("tir.disable_vectorize", "true")
///     .build()
///     .unwrap();
/// assert_eq!(ctx.get(&UNROLL_LOOP).unwrap().auto_max_step, 16);
/// assert_eq!(irpass::registry::config_option("tir.UnrollLoop").unwrap().doc, "Limits for loop unrolling.");
/// ```
#[macro_export]
macro_rules! pass_config_option {
    ($($input:tt)*) => {
        $crate::__private::pass_config_option! { [$crate] $($input)* }
    };
}

/// The name the irpass macros of this version use for [`__private`]: macros of another version
/// name another module, so a mismatched pair does not compile. Rename it with the version.
#[doc(hidden)]
pub use __private as __private_v0_1;

/// Paths used by code that the irpass macros generate. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::__location as location;
    pub use crate::analysis::{
        Analysis, AnalysisEvent, AnalysisKind, AnalysisRegistration, FunctionAnalysis,
        ModuleAnalysis,
    };
    pub use crate::config::{ConfigKey, ConfigOption};
    pub use crate::instrument::{Locked, PassInstrument, PassInstrumentMut, SkipReason};
    pub use crate::location::Location;
    pub use crate::macro_support::{
        ConfigValue, DescribedOptions, IntoResult, NamedOptions, OptionsProbe, UndescribedOptions,
        build_default, config_option, edits_refused, function_body, pass_from_options,
    };
    pub use crate::registry::{
        ErasedPass, InstrumentRegistration, OptionDoc, PassOptions, PassRegistration, erase,
    };
    pub use crate::{
        DefaultPass, FunctionPass, IrModule, ModuleEdits, ModulePass, ModuleView, Pass,
        PassContext, PassInfo, PassKind, Requirement, Result,
    };
    pub use core::option::Option::{self, None, Some};
    pub use inventory;
    pub use irpass_macros::pass_config_option;
    pub use serde_json;
    pub use std::borrow::Cow;
    pub use std::clone::Clone;
    pub use std::default::Default;
    pub use std::error::Error;
    pub use std::string::String;
    pub use std::sync::Arc;
    pub use std::vec::Vec;
    pub use std::{format, vec};
}
