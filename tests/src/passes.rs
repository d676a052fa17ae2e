//! Pass builders for the tests, and the passes, instrument and config keys the tests register.

use std::borrow::Cow;
use std::sync::Arc;

use irpass::{
    FunctionPass, ModulePass, Pass, PassContext, PassInfo, PassKind, Requirement, Result,
};

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
    /// The same pass, preserving these analyses.
    pub fn preserves(mut self, names: &[&str]) -> Self {
        self.info = self
            .info
            .clone()
            .with_preserves(names.iter().map(|s| s.to_string()));
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
    /// The same pass, preserving these analyses.
    pub fn preserves(mut self, names: &[&str]) -> Self {
        self.info = self
            .info
            .clone()
            .with_preserves(names.iter().map(|s| s.to_string()));
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
