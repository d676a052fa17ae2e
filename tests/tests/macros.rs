//! What the macros generate: names, metadata from attributes and doc comments, registration,
//! parameterised passes, instruments (`&self` and `&mut self`), config keys.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use irpass::instrument::Locked;
use irpass::{
    DefaultPass, FunctionPass, ModulePass, ModuleView, Pass, PassContext, PassInfo, PassKind,
    function_pass, module_pass, pass_config_option, pass_instrument, registry,
};
use irpass_tests::registered::{Analyze, Canon, NeedsCanon, Scaled};
use irpass_tests::{Func, Tiny};

#[test]
fn a_pass_on_a_function_is_a_struct_named_in_upper_camel_case_with_its_metadata() {
    let info = FunctionPass::<Tiny>::info(&Canon);
    assert_eq!(info.name, "Canon");
    assert_eq!(info.kind, PassKind::Function);
    assert_eq!(info.opt_level, 0);
    assert_eq!(info.required_names().collect::<Vec<_>>(), ["Analyze"]);
    let info = ModulePass::<Tiny>::info(&NeedsCanon);
    assert_eq!(
        (info.name.as_ref(), info.kind, info.opt_level),
        ("NeedsCanon", PassKind::Module, 1)
    );
    assert_eq!(<NeedsCanon as DefaultPass<Tiny>>::NAME, "NeedsCanon");
}

#[test]
fn the_description_is_the_doc_comment_with_paragraphs_kept() {
    let info = FunctionPass::<Tiny>::info(&Canon);
    assert_eq!(
        info.description,
        "Appends 100 to every function.\n\nA second paragraph."
    );
    assert_eq!(info.summary(), "Appends 100 to every function.");
    let scaled = registry::lookup::<Tiny>("Scaled").unwrap();
    assert_eq!(scaled.info().description, "Appends a value.");
    let quiet = registry::instruments()
        .into_iter()
        .find(|r| r.name == "Quiet")
        .unwrap();
    assert_eq!(quiet.description, "Does nothing, quietly.");
    assert_eq!(
        registry::config_option("tiny.Limit").unwrap().doc,
        "Limits for the tests."
    );
}

/// Has no doc comment on purpose? No: documented, with `name` given.
#[function_pass(opt_level = 2, name = "Renamed", parallel = false)]
fn some_function(func: Arc<Func>, _module: &Tiny) -> Arc<Func> {
    func
}

#[test]
fn name_overrides_the_struct_and_pass_name_and_parallel_false_is_kept() {
    let pass = Pass::from(Renamed);
    assert_eq!(pass.info().name, "Renamed");
    assert_eq!(pass.info().opt_level, 2);
    assert!(!FunctionPass::<Tiny>::parallel(&Renamed));
    assert!(FunctionPass::<Tiny>::parallel(&Canon));
    assert!(registry::lookup::<Tiny>("Renamed").is_ok());
}

#[test]
fn required_types_run_first_transitively_and_names_resolve_from_the_registry() {
    // NeedsCanon requires Canon (a type) which requires Analyze (a type).
    let (ctx, log) = irpass_tests::trace::traced_context("t");
    let out = Pass::from(NeedsCanon).run_in(Tiny::main(), &ctx).unwrap();
    assert_eq!(out.body("main"), Some(&[100][..]));
    let befores = irpass_tests::trace::events_with(&log, "t.before");
    assert_eq!(
        befores,
        ["t.before Analyze", "t.before Canon", "t.before NeedsCanon"]
    );
    // A name that exists nowhere is an error when the pipeline is built.
    let err = irpass::Sequential::new([Pass::from(irpass_tests::registered::RequiresMissing)])
        .unwrap_err();
    assert!(err.to_string().contains("`Analyse`"), "{err}");
    let _ = Analyze;
}

#[test]
fn a_parameterised_pass_is_built_from_defaults_or_options() {
    let module = Tiny::main();
    let default = registry::lookup::<Tiny>("Scaled").unwrap();
    assert_eq!(
        default.run(module.clone()).unwrap().body("main"),
        Some(&[1][..])
    );
    let seven =
        registry::lookup_with_options::<Tiny>("Scaled", &serde_json::json!({"value": 7})).unwrap();
    assert_eq!(
        seven.run(module.clone()).unwrap().body("main"),
        Some(&[7][..])
    );
    let value: Pass<Tiny> = Scaled { value: -2 }.into();
    assert_eq!(value.run(module).unwrap().body("main"), Some(&[-2][..]));
    let err = registry::lookup_with_options::<Tiny>("Scaled", &serde_json::json!({"value": "x"}))
        .unwrap_err();
    assert!(err.to_string().contains("invalid type"), "{err}");
}

/// Appends its `n`; built only in code (neither `default` nor `options`).
struct Unregistered {
    n: i64,
}

/// Appends `n`.
#[function_pass(opt_level = 0)]
impl Unregistered {
    fn transform_function(
        &self,
        func: Arc<Func>,
        _m: &Tiny,
        _ctx: &PassContext,
    ) -> irpass::Result<Arc<Func>> {
        let mut body = func.body.clone();
        body.push(self.n);
        Ok(Arc::new(Func {
            body,
            skip: func.skip,
        }))
    }
}

#[test]
fn an_impl_block_pass_without_default_or_options_is_a_value_not_a_registration() {
    let pass: Pass<Tiny> = Unregistered { n: 5 }.into();
    assert_eq!(pass.run(Tiny::main()).unwrap().body("main"), Some(&[5][..]));
    assert_eq!(pass.info().description, "Appends `n`.");
    assert!(registry::lookup::<Tiny>("Unregistered").is_err());
}

/// Counts pass runs; written with `&self` hooks, so it is an instrument as it is.
#[derive(Default)]
struct Counter {
    before: AtomicUsize,
    entered: AtomicUsize,
}

/// Counts.
#[pass_instrument(name = "CountingInstrument")]
impl Counter {
    fn enter_pass_ctx(&self) {
        self.entered.fetch_add(1, Ordering::Relaxed);
    }
    fn run_before_pass(&self, _module: &dyn ModuleView, _info: &PassInfo) -> irpass::Result<()> {
        self.before.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
    /// A helper, not a hook: left alone.
    fn total(&self) -> usize {
        self.before.load(Ordering::Relaxed)
    }
}

#[test]
fn an_instrument_with_shared_hooks_implements_pass_instrument_directly() {
    let ctx = PassContext::builder()
        .instrument(Counter::default())
        .build()
        .unwrap();
    ctx.scope(|| Pass::from(NeedsCanon).run(Tiny::main()))
        .unwrap()
        .unwrap();
    let counter = ctx.instrument::<Counter>().unwrap();
    assert_eq!(counter.total(), 3);
    assert_eq!(counter.entered.load(Ordering::Relaxed), 1);
    assert_eq!(
        irpass::PassInstrument::name(&*counter),
        "CountingInstrument"
    );
    assert!(
        registry::lookup_instrument("CountingInstrument").is_err(),
        "not `default`: not registered"
    );
}

/// Records pass names and vetoes one: `&mut self` hooks, used through `Locked`.
#[derive(Default)]
struct Recorder {
    seen: Vec<String>,
    failed: Vec<String>,
}

/// Records.
#[pass_instrument(default)]
impl Recorder {
    fn should_run(&mut self, _module: &dyn ModuleView, info: &PassInfo) -> bool {
        info.name != "Analyze"
    }
    fn run_before_pass(&mut self, module: &dyn ModuleView, info: &PassInfo) {
        self.seen.push(format!(
            "{} on {} functions",
            info.name,
            module.dyn_function_count()
        ));
    }
    fn run_after_pass_failed(
        &mut self,
        _module: &dyn ModuleView,
        info: &PassInfo,
        error: &(dyn std::error::Error + 'static),
    ) {
        self.failed.push(format!("{}: {error}", info.name));
    }
}

#[test]
fn an_instrument_with_mut_hooks_is_used_through_locked_and_can_veto() {
    let ctx = PassContext::builder()
        .instrument(Locked::new(Recorder::default()))
        .build()
        .unwrap();
    let out = ctx
        .scope(|| Pass::from(NeedsCanon).run(Tiny::main()))
        .unwrap()
        .unwrap();
    assert_eq!(out.body("main"), Some(&[100][..]));
    let recorder = ctx.instrument::<Locked<Recorder>>().unwrap();
    let rec = recorder.lock();
    // Analyze is vetoed; the required Canon runs before NeedsCanon's own hooks.
    assert_eq!(
        rec.seen,
        ["Canon on 1 functions", "NeedsCanon on 1 functions"]
    );
    // Registered by name (default): built inside a Locked.
    let by_name = registry::lookup_instrument("Recorder").unwrap();
    assert_eq!(by_name.name(), "Recorder");
    assert!(
        (by_name.as_ref() as &dyn std::any::Any)
            .downcast_ref::<Locked<Recorder>>()
            .is_some()
    );
}

#[test]
fn a_failing_pass_reaches_the_mut_instruments_failure_hook() {
    let ctx = PassContext::builder()
        .instrument(Locked::new(Recorder::default()))
        .build()
        .unwrap();
    let err = ctx
        .scope(|| Pass::from(irpass_tests::macro_passes::Fails).run(Tiny::main()))
        .unwrap()
        .unwrap_err();
    assert!(err.to_string().contains("deliberate failure"));
    let recorder = ctx.instrument::<Locked<Recorder>>().unwrap();
    let rec = recorder.lock();
    assert_eq!(rec.failed.len(), 1);
    assert!(
        rec.failed[0].starts_with("Fails: ") && rec.failed[0].ends_with("deliberate failure"),
        "{:?}",
        rec.failed
    );
}

/// A hook that fails.
#[derive(Default)]
struct Refuses;

/// Refuses every pass.
#[pass_instrument]
impl Refuses {
    fn run_before_pass(&self, _module: &dyn ModuleView, info: &PassInfo) -> Result<(), String> {
        Err(format!("no {}", info.name))
    }
}

#[test]
fn a_hook_error_names_the_instrument() {
    let ctx = PassContext::builder().instrument(Refuses).build().unwrap();
    let err = ctx
        .scope(|| Pass::from(Analyze).run(Tiny::main()))
        .unwrap()
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("Refuses") && msg.contains("no Analyze"),
        "{msg}"
    );
}

pass_config_option!("macros.ShortForm", Vec<String>);

pass_config_option! {
    /// A documented key.
    pub(crate) DEPTH: u32 = "macros.Depth";
    /// Another one.
    ON: bool = "macros.On"
}

/// Reads `macros.Depth`.
#[module_pass(opt_level = 0)]
fn read_depth(mut module: Tiny, ctx: &PassContext) -> Tiny {
    let depth = ctx.get(&DEPTH).copied().unwrap_or(0);
    let on = ctx.get(&ON).copied().unwrap_or(false);
    module.add("depth", vec![i64::from(depth), i64::from(on)], false);
    module
}

#[test]
fn config_keys_of_both_forms_are_registered_typed_and_read_by_passes() {
    let short = registry::config_option("macros.ShortForm").unwrap();
    assert_eq!(short.type_name, "Vec<String>");
    assert_eq!(
        registry::config_option("macros.Depth").unwrap().doc,
        "A documented key."
    );
    let ctx = PassContext::builder()
        .config_text("macros.Depth", "3")
        .config_text("macros.On", "true")
        .config_text("macros.ShortForm", r#"["a", "b"]"#)
        .build()
        .unwrap();
    let out = Pass::from(ReadDepth).run_in(Tiny::main(), &ctx).unwrap();
    assert_eq!(out.body("depth"), Some(&[3, 1][..]));
    let err = PassContext::builder()
        .config_text("macros.Depth", "deep")
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("macros.Depth"), "{err}");
}

mod reexport {
    pub use irpass;
}

/// Written against a re-exported irpass.
#[module_pass(opt_level = 0, crate = "crate::reexport::irpass")]
fn through_reexport(module: Tiny) -> Tiny {
    module
}

#[test]
fn generated_code_can_name_irpass_through_a_reexport() {
    assert_eq!(Pass::from(ThroughReexport).info().name, "ThroughReexport");
}
