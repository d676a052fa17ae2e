//! # irpass-passes
//!
//! The classic Relay optimisations on irpass's reference IR ([`irpass_ir`], re-exported as [`ir`]), each a pass
//! defined with irpass's macros and registered by name, and the pipelines `O0`..`O3`.
//!
//! A program that finds these passes by name (pipelines in text, drivers) must link this crate
//! by naming it: `use irpass_passes as _;`.
//!
//! ```
//! use irpass_ir::Module;
//! use irpass::{PassContext, registry};
//! use irpass_passes as _;
//!
//! let m = Module::parse("def @main(%x: Tensor[(2), float32]) { add(%x, multiply(2f, 3f)) }").unwrap();
//! let fold = registry::lookup::<Module>("FoldConstant").unwrap();
//! let ctx = PassContext::builder().opt_level(2).build().unwrap();
//! let out = fold.run_in(m, &ctx).unwrap();
//! assert!(out.to_string().contains("add(%x, 6f)"));
//! ```
//!
//! The standard pipelines are values too: [`pipeline`]`(n)` is `On` (also registered by that
//! name, for pipeline texts), and [`standard_passes`] lists what they choose from.
//!
//! ```
//! use irpass::{Pass, PassContext};
//! use irpass_passes::ir::Module;
//!
//! let m = Module::parse("def @main(%x: Tensor[(2), float32]) { add(%x, multiply(2f, 3f)) }").unwrap();
//! let ctx = PassContext::builder().opt_level(2).build().unwrap();
//! let out = Pass::from(irpass_passes::pipeline(2)).run_in(m, &ctx).unwrap();
//! assert!(out.to_string().contains("6f"), "{out}");
//! assert!(irpass::registry::lookup::<Module>("O2").is_ok());
//! ```

/// The reference IR these passes work on (crate `irpass-ir`), re-exported so that a user of the
/// pass library has one dependency to write.
pub use irpass_ir as ir;

pub mod analyses;
mod passes;
mod pipelines;
pub mod rewrites;
mod util;

pub use passes::a_normal_form::ToANormalForm;
pub use passes::canonicalize_ops::CanonicalizeOps;
pub use passes::combine_parallel_dense::{COMBINE_MIN_BRANCHES, CombineParallelDense};
pub use passes::convert_layout::ConvertLayout;
pub use passes::cse::{CSE_CALLS_ONLY, CSE_SKIP_OPS, EliminateCommonSubexpr};
pub use passes::dead_code::{DCE_INLINE_ONCE, DeadCodeElimination};
pub use passes::flatten_matmul::FlattenMatMul;
pub use passes::fold_constant::{DEFAULT_FOLD_MAX_ELEMENTS, FOLD_MAX_ELEMENTS, FoldConstant};
pub use passes::fold_scale_axis::{BackwardFoldScaleAxis, ForwardFoldScaleAxis};
pub use passes::fuse_layer_norm::FuseLayerNorm;
pub use passes::fuse_ops::{FUSE_MAX_DEPTH, FUSE_OPT_LEVEL, FuseOps};
pub use passes::graph_normal_form::ToGraphNormalForm;
pub use passes::infer_type::InferType;
pub use passes::inline::Inline;
pub use passes::lambda_lift::LambdaLift;
pub use passes::print_ir::PrintIR;
pub use passes::remove_unused_functions::{ENTRY_FUNCTIONS, RemoveUnusedFunctions};
pub use passes::simplify_expr::SimplifyExpr;
pub use passes::simplify_inference::SimplifyInference;
pub use passes::sink_reshape::SinkReshape;
pub use pipelines::{fold_scale_axis, pipeline, standard_passes};

/// Declares rule sets on the reference IR: `irpass_ir_macros::rules!` (documented there) for a
/// crate that depends on the pass library alone. The generated code names the IR as
/// `::irpass_passes::ir`, so `irpass-ir` need not be a dependency of its own.
///
/// ```
/// use irpass_passes::ir::Module;
///
/// irpass_passes::rules! {
///     /// `x * 1` is `x`.
///     pub static MUL_ONE: RuleSet = {
///         mul_one: "multiply(?x, 1f)" if cx.same_type(x, root) => "?x";
///     };
/// }
///
/// let m = Module::parse("def @main(%a: float32) { exp(multiply(%a, 1f)) }").unwrap();
/// let f = m.get("main").unwrap();
/// let out = MUL_ONE.apply(&f.code, None).unwrap();
/// let text = Module::from_functions([("main", f.with_code(out))]).to_string();
/// assert!(text.contains("exp(%a)"), "{text}");
/// ```
#[macro_export]
macro_rules! rules {
    ($($input:tt)*) => {
        $crate::__private::rules! { [::irpass_passes::ir] $($input)* }
    };
}

/// What [`rules!`] expands to; not an API.
#[doc(hidden)]
pub mod __private {
    pub use irpass_ir_macros::rules;
}
