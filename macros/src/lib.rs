//! Procedural macros of [irpass](https://docs.rs/irpass): define passes, instruments and
//! config keys as plain Rust items. Use them through `irpass` (`irpass::function_pass`, ...),
//! which re-exports them; generated code names only `::irpass::__private_v<major>_<minor>` paths (the version this
//! crate is) (or the path
//! given with `crate = "..."`).
//!
//! Every misuse is a compile error on the token at fault, saying what to write instead, and
//! the item still compiles beside it, so one mistake gives one error.

mod analysis;
mod args;
mod config_option;
mod docs;
mod errors;
mod instrument;
mod names;
mod options;
mod pass;

use proc_macro::TokenStream;

/// Defines a function pass: a transformation of one function at a time, which the framework
/// maps over the module's functions (in parallel).
///
/// **On a function**, it keeps the function and generates a unit struct named after it in
/// UpperCamelCase (`fold_constant` → `FoldConstant`, or `name = "..."`) that implements
/// `FunctionPass`, converts into a `Pass`, can be named in other passes' `required`, and is
/// registered by that name. The doc comment is the pass's description.
///
/// The signature is `fn(func: F, module: &M, ctx: &PassContext) -> R`, in that order (a context
/// written before the module is an error): the module and context parameters may be left out,
/// `R` is `F` or `Result<F, E>` (`E: Into<irpass::BoxError>`, see `irpass::IntoResult`). The
/// IR is the type of the module parameter; without one, `ir = M` names it. A parameter
/// `edits: &mut ModuleEdits<M>` (anywhere after the function) asks for edits of the module,
/// applied after the map (`irpass::FunctionPass::transform_function_with_edits`).
///
/// `required = [...]` lists the passes that must run before this one (TVM's `required`): a pass
/// type is checked at compile time (it must be a pass); a pass named by a string is checked
/// when the pass is built into a context's pipeline, where an unknown name is an error listing
/// the closest registered names — it cannot be a compile error, because passes of other crates
/// are registered at link time. (Not to be confused with a context's
/// `PassContextBuilder::required_pass`, which force-enables a pass whatever its opt level.)
/// Likewise a pass `name` must be unique among everything linked: two registrations of one name
/// (a pass named like a library pass, say) are an error when the registry is first used
/// (`RegistryError::Duplicate`, `irpass::registry::check()`), not at compile time.
///
/// **On an impl block** defining `fn transform_function(&self, ...)`, it makes the type a pass
/// (state lives in the struct). Such a pass is registered when the registry can build it:
/// `default` (with `Default::default()`), `options` (from options, with serde:
/// `ReplaceFunc{target=main}` in a pipeline), or both.
///
/// Keys: `opt_level = 0..=4` (required), `required = [PassType, "PassName"]`,
/// `preserves = [AnalysisType, "AnalysisName"]` (analyses whose cached results stay valid
/// where the pass changes a function; see `irpass::analysis`), `name = "..."`,
/// `parallel = false`, `ir = Module`, `default`, `options`, `crate = "path::to::irpass"`.
///
/// ```
/// use irpass::doc_toy::Toy;
/// use std::sync::Arc;
/// use irpass::{function_pass, Pass, PassContext};
///
/// /// Doubles every value.
/// #[function_pass(opt_level = 1)]
/// fn double(func: Arc<Vec<i64>>, _module: &Toy) -> Arc<Vec<i64>> {
///     Arc::new(func.iter().map(|v| v * 2).collect())
/// }
///
/// /// Adds `amount` to every value.
/// #[derive(Default, serde::Deserialize)]
/// struct AddConst { amount: i64 }
///
/// #[function_pass(opt_level = 2, required = [Double], options)]
/// impl AddConst {
///     fn transform_function(&self, func: Arc<Vec<i64>>, _m: &Toy, _ctx: &PassContext)
///         -> irpass::Result<Arc<Vec<i64>>> {
///         Ok(Arc::new(func.iter().map(|v| v + self.amount).collect()))
///     }
/// }
///
/// let mut module = Toy::default();
/// module.insert("main", vec![1, 2]);
/// let doubled = Pass::from(Double).run(module.clone()).unwrap();
/// assert_eq!(doubled.to_string(), "main = [2, 4]\n");
/// assert_eq!(Double.info().description, "Doubles every value.");
///
/// // Registered by name; `AddConst` is built from options, and its requirement runs first.
/// let add = irpass::registry::lookup_with_options::<Toy>("AddConst",
///     &serde_json::json!({"amount": 5})).unwrap();
/// assert_eq!(add.run(module).unwrap().to_string(), "main = [7, 9]\n");
/// # use irpass::FunctionPass;
/// ```
#[proc_macro_attribute]
pub fn function_pass(attr: TokenStream, item: TokenStream) -> TokenStream {
    pass::expand(pass::Kind::Function, attr.into(), item.into()).into()
}

/// Defines a module pass: a transformation of the whole module (it may add or remove
/// functions).
///
/// Works like [`macro@function_pass`]: on a function `fn(module: M, ctx: &PassContext) -> R`
/// (the context may be left out; `R` is `M` or `Result<M, E>`), or on an impl block defining
/// `fn transform_module(&self, module: M, ctx: &PassContext) -> R`.
///
/// Keys: `opt_level = 0..=4` (required), `required = [...]`, `preserves = [...]` (analyses
/// that stay valid although the pass changes the module), `name = "..."`, `default`,
/// `options` (impl blocks), `crate = "..."`.
///
/// ```
/// use irpass::doc_toy::Toy;
/// use irpass::{module_pass, Pass, PassContext};
///
/// /// Adds a function `abs` (TVM's module pass example).
/// #[module_pass(opt_level = 0, name = "AddAbs")]
/// fn add_abs(mut module: Toy, _ctx: &PassContext) -> irpass::Result<Toy> {
///     module.insert("abs", vec![1]);
///     Ok(module)
/// }
///
/// let module = Pass::from(AddAbs).run(Toy::with_main()).unwrap();
/// assert_eq!(module.to_string(), "abs = [1]\nmain = []\n");
/// assert!(irpass::registry::lookup::<Toy>("AddAbs").is_ok());
/// ```
///
/// On the reference IR (crate `irpass-ir`, re-exported as `irpass_passes::ir`), in a pipeline
/// with a library pass (`use irpass_passes as _;` links the library's registrations):
///
/// ```
/// use irpass::{module_pass, Pass};
/// use irpass_ir::Module;
/// use irpass_passes as _;
///
/// /// Removes the functions marked `Skip=1`.
/// #[module_pass(opt_level = 1)]
/// fn drop_skipped(mut module: Module) -> Module {
///     module.retain(|_, f| !f.has_attr("Skip"));
///     module
/// }
///
/// let m = Module::parse(
///     "def @helper(%x: float32, Skip=1) { %x } def @main(%x: float32) { add(%x, 0f) }",
/// )
/// .unwrap();
/// let pipeline = irpass::pipeline::parse("DropSkipped,InferType,SimplifyExpr").unwrap();
/// let out = pipeline.build::<Module>().unwrap().run(m).unwrap();
/// assert_eq!(out.names().collect::<Vec<_>>(), ["main"]);
/// assert!(out.to_string().contains("def @main(%x: float32) {\n  %x\n}"), "{out}");
/// ```
#[proc_macro_attribute]
pub fn module_pass(attr: TokenStream, item: TokenStream) -> TokenStream {
    pass::expand(pass::Kind::Module, attr.into(), item.into()).into()
}

/// Defines an instrument from the hooks an impl block writes; the others are no-ops.
///
/// Hooks: `enter_pass_ctx(&self)`, `exit_pass_ctx(&self)`,
/// `should_run(&self, module: &dyn ModuleView, info: &PassInfo) -> bool`,
/// `run_before_pass(&self, module: &dyn ModuleView, info: &PassInfo)`,
/// `run_after_pass(&self, module: &dyn ModuleView, info: &PassInfo)`,
/// `run_after_pass_failed(&self, module: &dyn ModuleView, info: &PassInfo, error: &(dyn Error + 'static))`,
/// `run_skipped_pass(&self, module: &dyn ModuleView, info: &PassInfo, reason: &SkipReason)`,
/// `on_analysis(&self, event: &AnalysisEvent<'_>)`.
/// Each may return its value or a `Result` of it. A method named like a hook but misspelt is
/// an error naming the closest hook; other methods are left alone.
///
/// With `&self` hooks the type implements `PassInstrument`. When a hook takes `&mut self`, it
/// implements `PassInstrumentMut` instead, and is used as `irpass::instrument::Locked<T>`.
///
/// Keys: `name = "..."` (default: the type's name), `default` (registered by name, built with
/// `Default::default()`, so `IRPASS_INSTRUMENTS` and drivers can switch it on),
/// `crate = "..."`.
///
/// The instrument's description (what `irpass-opt --list-instruments` and the registry show)
/// is the impl block's doc comment. The pass hooks fire for every pass the runner runs,
/// `Sequential`s included: a pipeline of two passes calls `run_before_pass` three times (the
/// Sequential, then each pass inside it), with `info.kind` telling them apart.
///
/// ```
/// use irpass::doc_toy::{Toy, append};
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use irpass::{pass_instrument, ModuleView, PassContext, PassInfo};
///
/// /// Counts the passes that ran.
/// #[derive(Default)]
/// struct CountPasses(AtomicUsize);
///
/// #[pass_instrument(default)]
/// impl CountPasses {
///     fn run_after_pass(&self, _module: &dyn ModuleView, _info: &PassInfo) {
///         self.0.fetch_add(1, Ordering::Relaxed);
///     }
/// }
///
/// let ctx = PassContext::builder().instrument(CountPasses::default()).build().unwrap();
/// ctx.scope(|| append("A", 0, 1).run(Toy::with_main())).unwrap().unwrap();
/// assert_eq!(ctx.instrument::<CountPasses>().unwrap().0.load(Ordering::Relaxed), 1);
/// assert!(irpass::registry::lookup_instrument("CountPasses").is_ok());
///
/// // A Sequential of two passes: the hooks fire for it and for each pass in it.
/// let pipeline = irpass::Sequential::new([append("B", 0, 2), append("C", 0, 3)]).unwrap();
/// ctx.scope(|| irpass::Pass::from(pipeline).run(Toy::with_main())).unwrap().unwrap();
/// assert_eq!(ctx.instrument::<CountPasses>().unwrap().0.load(Ordering::Relaxed), 1 + 3);
/// ```
#[proc_macro_attribute]
pub fn pass_instrument(attr: TokenStream, item: TokenStream) -> TokenStream {
    instrument::expand(attr.into(), item.into()).into()
}

/// Derives `irpass::registry::PassOptions` for a pass whose fields are its options
/// (`Name{field=value}` in pipeline text), so each option is declared once: its name is the
/// field's, its type the field's, its description the field's doc comment (first paragraph),
/// its default the struct's `Default`.
/// (The listing shows the doc's first sentence after a dash, its first letter in lower case.)
///
/// `#[option(config = KEY, default = value)]` on a field of type `Option<T>` makes the option
/// override a config key (a `pass_config_option!` constant) for this pass, TVM's way: the
/// derive generates `fn field(&self, ctx: &PassContext) -> T`, the value in force — the
/// option when set, else the key's value in the context, else `default` (which may read
/// `ctx`; it then needs `default_text = "..."`, how the listing shows it). `type_name = "..."`
/// shows another type text in the listing. `#[option(crate = "path")]` on the struct names
/// irpass by another path.
///
/// ```
/// use irpass::{PassContext, PassOptions, pass_config_option};
///
/// pass_config_option! {
///     /// How often to unroll, for every pass that unrolls.
///     pub UNROLL_FACTOR: u32 = "doc.Unroll.factor";
/// }
///
/// #[derive(Default, serde::Deserialize, PassOptions)]
/// #[serde(default)]
/// struct Unroll {
///     /// How often to unroll.
///     #[option(config = UNROLL_FACTOR, default = 4)]
///     factor: Option<u32>,
///     /// Unroll loops with calls too.
///     calls: bool,
/// }
///
/// let ctx = PassContext::builder().config(&UNROLL_FACTOR, 8).build().unwrap();
/// assert_eq!(Unroll::default().factor(&PassContext::default()), 4);
/// assert_eq!(Unroll::default().factor(&ctx), 8);
/// assert_eq!(Unroll { factor: Some(2), calls: false }.factor(&ctx), 2);
///
/// use irpass::registry::PassOptions as _;
/// let listed = Unroll::options();
/// assert_eq!((listed[0].name, listed[0].type_name), ("factor", "u32"));
/// assert_eq!(listed[0].default, "doc.Unroll.factor, else 4");
/// assert_eq!((listed[1].doc, listed[1].default.as_str()), ("unroll loops with calls too", "false"));
/// ```
#[proc_macro_derive(PassOptions, attributes(option))]
pub fn derive_pass_options(input: TokenStream) -> TokenStream {
    options::derive(input.into()).into()
}

/// Declares typed config keys and registers them. Use it through `irpass::pass_config_option!`
/// (documented there), which passes irpass's own path.
#[proc_macro]
pub fn pass_config_option(input: TokenStream) -> TokenStream {
    config_option::expand(input.into()).into()
}

/// Defines a function analysis from a function that reads one function of the IR: a unit
/// struct named after it (`op_count` → `OpCount`) implementing `irpass::analysis::Analysis`
/// and `FunctionAnalysis<IR>`, registered with its doc comment as the description. Its result
/// is cached by the context per function value (see `irpass::analysis`).
///
/// Keys: `ir = Module` (required: the IR whose functions it reads), `name = "..."` (default:
/// the struct's name), `crate = "..."`.
///
/// ```
/// use std::sync::Arc;
/// use irpass::{IrModule, PassContext, function_analysis};
/// use irpass::doc_toy::Toy;
///
/// /// The largest value of a function.
/// #[function_analysis(ir = Toy)]
/// fn max_value(func: &Arc<Vec<i64>>) -> Option<i64> {
///     func.iter().copied().max()
/// }
///
/// let mut module = Toy::default();
/// module.insert("main", vec![3, 9, 4]);
/// let (_, main) = module.functions().next().unwrap();
/// assert_eq!(*PassContext::default().function_analysis(&MaxValue, main, &module), Some(9));
/// assert!(irpass::analysis::registered().iter().any(|a| a.name == "MaxValue"));
/// ```
#[proc_macro_attribute]
pub fn function_analysis(attr: TokenStream, item: TokenStream) -> TokenStream {
    analysis::expand(analysis::Kind::Function, attr.into(), item.into()).into()
}

/// Defines a module analysis from a function that reads a whole module: as
/// [`macro@function_analysis`], with the IR taken from the parameter's type. Its result is
/// cached with the module value and dropped after a pass that changes the module, unless the
/// pass lists it in `preserves`.
///
/// Keys: `name = "..."`, `crate = "..."`.
///
/// ```
/// use irpass::{IrModule, PassContext, module_analysis};
/// use irpass::doc_toy::Toy;
///
/// /// The names of the module's functions.
/// #[module_analysis]
/// fn function_names(module: &Toy) -> Vec<String> {
///     module.functions().map(|(n, _)| n.to_string()).collect()
/// }
///
/// let names = PassContext::default().module_analysis(&FunctionNames, &Toy::with_main());
/// assert_eq!(*names, ["main"]);
/// ```
#[proc_macro_attribute]
pub fn module_analysis(attr: TokenStream, item: TokenStream) -> TokenStream {
    analysis::expand(analysis::Kind::Module, attr.into(), item.into()).into()
}
