//! Pass builders for the tests, and the passes, instrument and config keys the tests register.

use std::borrow::Cow;
use std::sync::Arc;

use irpass::__private::{InstrumentRegistration, PassRegistration, erase, inventory, location};
use irpass::doc_toy::Toy;
use irpass::{
    ConfigKey, ConfigOption, FunctionPass, ModulePass, Pass, PassContext, PassInfo, PassKind,
    Requirement, Result,
};
use serde::{Deserialize, Serialize};

use crate::tiny::{Func, Tiny};

type ModuleFn = dyn Fn(Tiny, &PassContext) -> Result<Tiny> + Send + Sync;
type FunctionFn = dyn Fn(Arc<Func>, &Tiny, &PassContext) -> Result<Arc<Func>> + Send + Sync;

/// A module pass made of a closure.
pub struct ModPass {
    info: PassInfo,
    requirements: Vec<Requirement<Tiny>>,
    body: Arc<ModuleFn>,
}

impl ModulePass<Tiny> for ModPass {
    fn info(&self) -> &PassInfo {
        &self.info
    }
    fn requirements(&self) -> Vec<Requirement<Tiny>> {
        self.requirements.clone()
    }
    fn transform_module(&self, module: Tiny, ctx: &PassContext) -> Result<Tiny> {
        (self.body)(module, ctx)
    }
}

/// A function pass made of a closure.
pub struct FnPass {
    info: PassInfo,
    requirements: Vec<Requirement<Tiny>>,
    parallel: bool,
    body: Arc<FunctionFn>,
}

impl FunctionPass<Tiny> for FnPass {
    fn info(&self) -> &PassInfo {
        &self.info
    }
    fn requirements(&self) -> Vec<Requirement<Tiny>> {
        self.requirements.clone()
    }
    fn parallel(&self) -> bool {
        self.parallel
    }
    fn transform_function(&self, f: Arc<Func>, m: &Tiny, ctx: &PassContext) -> Result<Arc<Func>> {
        (self.body)(f, m, ctx)
    }
}

/// A module pass `name` at `opt_level` running `body`.
pub fn module_pass(
    name: &str,
    opt_level: u32,
    body: impl Fn(Tiny, &PassContext) -> Result<Tiny> + Send + Sync + 'static,
) -> ModPass {
    ModPass {
        info: PassInfo::new(name.to_string(), opt_level, PassKind::Module),
        requirements: Vec::new(),
        body: Arc::new(body),
    }
}

/// A function pass `name` at `opt_level` running `body` on each function.
pub fn function_pass(
    name: &str,
    opt_level: u32,
    body: impl Fn(Arc<Func>, &Tiny, &PassContext) -> Result<Arc<Func>> + Send + Sync + 'static,
) -> FnPass {
    FnPass {
        info: PassInfo::new(name.to_string(), opt_level, PassKind::Function),
        requirements: Vec::new(),
        parallel: true,
        body: Arc::new(body),
    }
}

impl ModPass {
    /// The same pass, requiring these passes by name.
    pub fn requires(mut self, names: &[&str]) -> Self {
        set_required(&mut self.info, &mut self.requirements, names);
        self
    }
    /// The same pass, requiring `pass` given as a value.
    pub fn requires_pass(mut self, pass: Pass<Tiny>) -> Self {
        self.info = self.info.clone().with_required(
            self.info
                .required_names()
                .map(str::to_string)
                .chain([pass.info().name.to_string()])
                .collect::<Vec<_>>(),
        );
        self.requirements.push(Requirement::Pass(pass));
        self
    }
    /// As a [`Pass`].
    pub fn pass(self) -> Pass<Tiny> {
        Pass::module(self)
    }
}

impl FnPass {
    /// The same pass, requiring these passes by name.
    pub fn requires(mut self, names: &[&str]) -> Self {
        set_required(&mut self.info, &mut self.requirements, names);
        self
    }
    /// The same pass, run on one thread only.
    pub fn serial(mut self) -> Self {
        self.parallel = false;
        self
    }
    /// As a [`Pass`].
    pub fn pass(self) -> Pass<Tiny> {
        Pass::function(self)
    }
}

fn set_required(info: &mut PassInfo, reqs: &mut Vec<Requirement<Tiny>>, names: &[&str]) {
    let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    *info = info.clone().with_required(names.clone());
    *reqs = names
        .into_iter()
        .map(|n| Requirement::Named(Cow::Owned(n)))
        .collect();
}

/// A function pass that appends `value` to every function.
pub fn push(name: &str, opt_level: u32, value: i64) -> Pass<Tiny> {
    push_fn(name, opt_level, value).pass()
}

/// [`push`] before it is wrapped, to add requirements.
pub fn push_fn(name: &str, opt_level: u32, value: i64) -> FnPass {
    function_pass(name, opt_level, move |f, _, _| {
        let mut body = f.body.clone();
        body.push(value);
        Ok(Arc::new(Func { body, skip: f.skip }))
    })
}

/// A module pass that returns its input untouched.
pub fn keep(name: &str, opt_level: u32) -> Pass<Tiny> {
    module_pass(name, opt_level, |m, _| Ok(m)).pass()
}

/// A module pass that fails with an error.
pub fn fail(name: &str) -> Pass<Tiny> {
    module_pass(name, 0, |_, _| Err("deliberate failure".into())).pass()
}

/// A module pass that panics.
pub fn panicking(name: &str) -> Pass<Tiny> {
    module_pass(name, 0, |_, _| panic!("deliberate panic")).pass()
}

/// A module pass that adds the function `func = []`.
pub fn add_function(name: &str, func: &'static str) -> Pass<Tiny> {
    module_pass(name, 0, move |mut m, _| {
        m.add(func, vec![], false);
        Ok(m)
    })
    .pass()
}

/// The `tiny` passes registered for name lookup.
pub mod registered {
    use super::*;

    /// `Analyze`: leaves the module alone (an analysis-like prerequisite).
    pub static ANALYZE: PassInfo =
        PassInfo::new_static("Analyze", 0, PassKind::Module, &[], "Looks at the module.");
    /// `Canon`: appends 100 to each function; requires `Analyze`.
    pub static CANON: PassInfo = PassInfo::new_static(
        "Canon",
        0,
        PassKind::Function,
        &[Cow::Borrowed("Analyze")],
        "Appends 100 to every function.\n\nA second paragraph.",
    );
    /// `NeedsCanon`: leaves the module alone; requires `Canon` (so, transitively, `Analyze`).
    pub static NEEDS_CANON: PassInfo = PassInfo::new_static(
        "NeedsCanon",
        1,
        PassKind::Module,
        &[Cow::Borrowed("Canon")],
        "Needs Canon.",
    );
    /// `CycleA` requires `CycleB`.
    pub static CYCLE_A: PassInfo = PassInfo::new_static(
        "CycleA",
        0,
        PassKind::Module,
        &[Cow::Borrowed("CycleB")],
        "Half a cycle.",
    );
    /// `CycleB` requires `CycleA`.
    pub static CYCLE_B: PassInfo = PassInfo::new_static(
        "CycleB",
        0,
        PassKind::Module,
        &[Cow::Borrowed("CycleA")],
        "The other half.",
    );
    /// `RequiresMissing` requires a pass that exists nowhere.
    pub static REQUIRES_MISSING: PassInfo = PassInfo::new_static(
        "RequiresMissing",
        0,
        PassKind::Module,
        &[Cow::Borrowed("Analyse")],
        "Requires a misspelt pass.",
    );
    /// `Duplicated`: registered twice on purpose.
    pub static DUPLICATED: PassInfo =
        PassInfo::new_static("Duplicated", 0, PassKind::Module, &[], "Twice.");
    /// `Shared`: registered for `tiny` and for `toy`.
    pub static SHARED: PassInfo =
        PassInfo::new_static("Shared", 0, PassKind::Module, &[], "On two IRs.");
    /// `Scaled`: appends its `value` option (default 1); buildable from options.
    pub static SCALED: PassInfo =
        PassInfo::new_static("Scaled", 0, PassKind::Function, &[], "Appends a value.");

    fn from_info(info: &'static PassInfo) -> Pass<Tiny> {
        let mut p = module_pass(&info.name, info.opt_level, |m, _| Ok(m));
        p.info = info.clone();
        p.requirements = Requirement::from_info(info);
        p.pass()
    }

    /// Options of `Scaled`.
    #[derive(Deserialize, Default)]
    #[serde(default, deny_unknown_fields)]
    pub struct ScaledOptions {
        /// The value to append.
        pub value: i64,
    }

    fn scaled(value: i64) -> Pass<Tiny> {
        let mut p = push_fn("Scaled", 0, value);
        p.info = SCALED.clone();
        p.pass()
    }

    inventory::submit! { PassRegistration::new::<Tiny>(&ANALYZE, Some(|| erase(from_info(&ANALYZE))), None, location!()) }
    inventory::submit! {
        PassRegistration::new::<Tiny>(&CANON, Some(|| {
            let mut p = push_fn("Canon", 0, 100);
            p.info = CANON.clone();
            p.requirements = Requirement::from_info(&CANON);
            erase(p.pass())
        }), None, location!())
    }
    inventory::submit! { PassRegistration::new::<Tiny>(&NEEDS_CANON, Some(|| erase(from_info(&NEEDS_CANON))), None, location!()) }
    inventory::submit! { PassRegistration::new::<Tiny>(&CYCLE_A, Some(|| erase(from_info(&CYCLE_A))), None, location!()) }
    inventory::submit! { PassRegistration::new::<Tiny>(&CYCLE_B, Some(|| erase(from_info(&CYCLE_B))), None, location!()) }
    inventory::submit! { PassRegistration::new::<Tiny>(&REQUIRES_MISSING, Some(|| erase(from_info(&REQUIRES_MISSING))), None, location!()) }
    inventory::submit! { PassRegistration::new::<Tiny>(&DUPLICATED, Some(|| erase(from_info(&DUPLICATED))), None, location!()) }
    inventory::submit! { PassRegistration::new::<Tiny>(&DUPLICATED, Some(|| erase(from_info(&DUPLICATED))), None, location!()) }
    inventory::submit! { PassRegistration::new::<Tiny>(&SHARED, Some(|| erase(from_info(&SHARED))), None, location!()) }
    inventory::submit! {
        PassRegistration::new::<Toy>(&SHARED, Some(|| erase(Pass::<Toy>::module(irpass::PrintIr::new()))), None, location!())
    }
    inventory::submit! {
        PassRegistration::new::<Tiny>(&SCALED, Some(|| erase(scaled(1))), Some(|options| {
            let o: ScaledOptions = serde_json::from_value(options.clone()).map_err(|e| e.to_string())?;
            Ok(erase(scaled(o.value)))
        }), location!())
    }
}

/// Config of the `tiny.Limit` key. Missing fields take their defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LimitConfig {
    /// An upper bound.
    pub max: u32,
    /// Talk more.
    pub verbose: bool,
}

impl Default for LimitConfig {
    fn default() -> Self {
        LimitConfig {
            max: 10,
            verbose: false,
        }
    }
}

/// `tiny.Limit`: a struct-valued key.
pub const LIMIT: ConfigKey<LimitConfig> = ConfigKey::new("tiny.Limit");
/// `tiny.Level`: an integer key.
pub const LEVEL: ConfigKey<u32> = ConfigKey::new("tiny.Level");
/// `tiny.Unregistered`: a key nobody registered.
pub const UNREGISTERED: ConfigKey<u32> = ConfigKey::new("tiny.Unregistered");

inventory::submit! { ConfigOption::new::<LimitConfig>("tiny.Limit", "LimitConfig", "Limits for the tests.", location!()) }
inventory::submit! { ConfigOption::new::<u32>("tiny.Level", "u32", "A level.", location!()) }

/// A registered instrument that does nothing (to test instrument lookup).
#[derive(Default)]
pub struct Quiet;

impl irpass::PassInstrument for Quiet {
    fn name(&self) -> &str {
        "Quiet"
    }
}

inventory::submit! {
    InstrumentRegistration { name: "Quiet", description: "Does nothing, quietly.", create: || Arc::new(Quiet), location: location!() }
}
