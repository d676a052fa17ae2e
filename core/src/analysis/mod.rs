//! Analyses: facts computed from a function or a module, cached by the context and dropped
//! when a pass changes what they were computed from.
//!
//! TVM has no analysis manager (a pass that needs types requires `InferType`, which runs
//! again); LLVM's new pass manager and MLIR cache analyses and invalidate them after each
//! pass, with `PreservedAnalyses` / `markAnalysesPreserved` saying what survives. Here the
//! IR's functions are immutable shared values, so most of that bookkeeping is free:
//!
//! - A **function analysis** ([`FunctionAnalysis`]) is computed from one function and cached
//!   under the function's identity ([`IrModule::function_identity`]). A function a pass did not
//!   change is the very same value afterwards, so its results stay valid with no declaration
//!   by the pass author; a changed function is a new value, so a stale result is never served.
//!   An analysis that also reads other functions (types read the callees' signatures) checks a
//!   cached result against the current module ([`FunctionAnalysis::still_valid`]).
//! - A **module analysis** ([`ModuleAnalysis`]) is computed from a whole module and cached
//!   with the module value; after a pass that changed the module it is dropped unless the pass
//!   lists it in [`PassInfo::preserves`](crate::PassInfo::preserves).
//! - A pass that changed a function but keeps one of its function analyses valid lists it in
//!   `preserves` too: the result moves to the new function.
//!
//! A pass asks its context: [`PassContext::function_analysis`](crate::PassContext::function_analysis) and
//! [`PassContext::module_analysis`](crate::PassContext::module_analysis) return an `Arc` of the result, computed once and shared
//! (between threads too: function passes running in parallel share the cache). Instruments
//! see every computation, cache hit and invalidation ([`AnalysisEvent`]).
//!
//! ```
//! use std::sync::Arc;
//! use irpass::analysis::{Analysis, FunctionAnalysis};
//! use irpass::{PassContext, IrModule};
//! use irpass::doc_toy::Toy;
//!
//! /// The sum of a toy function's values.
//! struct Sum;
//! impl Analysis for Sum {
//!     const NAME: &'static str = "Sum";
//! }
//! impl FunctionAnalysis<Toy> for Sum {
//!     type Output = i64;
//!     fn compute(&self, func: &Arc<Vec<i64>>, _: &Toy, _: &PassContext) -> i64 {
//!         func.iter().sum()
//!     }
//! }
//!
//! let ctx = PassContext::default();
//! let module = Toy::with_main();
//! let (_, main) = module.functions().next().unwrap();
//! let first = ctx.function_analysis(&Sum, main, &module);
//! let again = ctx.function_analysis(&Sum, main, &module);
//! assert!(Arc::ptr_eq(&first, &again)); // computed once
//! ```

mod cache;
mod registration;

pub(crate) use cache::AnalysisCache;
pub use cache::MAX_CACHED_ANALYSES;
pub use registration::{AnalysisKind, AnalysisRegistration, registered};

use crate::{IrModule, PassContext};

/// What every analysis has: a name, known at compile time so that a pass can list the
/// analyses it preserves in a `static` (`#[module_pass(preserves = [CallGraph])]`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an analysis",
    label = "`preserves` lists analyses: types implementing `irpass::analysis::Analysis`, or names as string literals"
)]
pub trait Analysis: Send + Sync + 'static {
    /// The analysis's name: unique, as used in `preserves` and in reports.
    const NAME: &'static str;
}

/// A fact computed from one function of a module, cached under the function's identity.
///
/// Most function analyses read the function only. One that also reads the rest of the module
/// (a function's types read its callees' signatures) says when a result cached for the very
/// same function no longer holds, in [`still_valid`](Self::still_valid) — LLVM's
/// `Result::invalidate`. `compute` and `still_valid` get the context, so an analysis can build
/// on other analyses (`ctx.module_analysis(...)`), cached like any other.
pub trait FunctionAnalysis<M: IrModule>: Analysis {
    /// The result.
    type Output: Send + Sync + 'static;
    /// Computes the result for `func`, a function of `module`.
    fn compute(&self, func: &M::Function, module: &M, ctx: &PassContext) -> Self::Output;
    /// Whether `result`, computed for this very function value in an earlier module state,
    /// still holds in `module`. The default, `true`, is right for an analysis that reads only
    /// the function.
    fn still_valid(
        &self,
        result: &Self::Output,
        func: &M::Function,
        module: &M,
        ctx: &PassContext,
    ) -> bool {
        let _ = (result, func, module, ctx);
        true
    }
}

/// A fact computed from a whole module (a call graph, a global signature table).
pub trait ModuleAnalysis<M: IrModule>: Analysis {
    /// The result.
    type Output: Send + Sync + 'static;
    /// Computes the result for `module` (`ctx` serves the other analyses it builds on).
    fn compute(&self, module: &M, ctx: &PassContext) -> Self::Output;
}

/// What instruments are told about analyses ([`PassInstrument::on_analysis`](crate::PassInstrument::on_analysis)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AnalysisEvent<'a> {
    /// The analysis is about to be computed (no valid cached result).
    Computing {
        /// The analysis's name.
        analysis: &'a str,
        /// Whether it is a module analysis (otherwise a function analysis).
        module: bool,
    },
    /// The analysis was computed (after `Computing`).
    Computed {
        /// The analysis's name.
        analysis: &'a str,
        /// Whether it is a module analysis.
        module: bool,
    },
    /// A valid cached result was served.
    CacheHit {
        /// The analysis's name.
        analysis: &'a str,
        /// Whether it is a module analysis.
        module: bool,
    },
    /// After pass `pass` changed the module, `entries` cached results of the analysis were
    /// dropped (they belonged to functions or a module state that no longer exist).
    Invalidated {
        /// The analysis's name.
        analysis: &'a str,
        /// The pass after which they were dropped.
        pass: &'a str,
        /// How many results were dropped.
        entries: usize,
    },
}
