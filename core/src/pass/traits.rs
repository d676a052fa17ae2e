//! The traits a pass implements: [`ModulePass`] and [`FunctionPass`], and [`Requirement`].

use std::borrow::Cow;

use super::{Pass, PassInfo};
use crate::{IrModule, PassContext, Result};

/// A prerequisite of a pass: a pass to run before it.
pub enum Requirement<M: IrModule> {
    /// A pass looked up by name in the registry when the pipeline is built.
    Named(Cow<'static, str>),
    /// A pass given as a value (what `required = [SomeType]` in the macros produces).
    Pass(Pass<M>),
}

impl<M: IrModule> Requirement<M> {
    /// The name of the required pass.
    pub fn name(&self) -> &str {
        match self {
            Requirement::Named(name) => name,
            Requirement::Pass(pass) => &pass.info().name,
        }
    }

    /// The requirements named in `info.required`, all looked up by name.
    pub fn from_info(info: &PassInfo) -> Vec<Requirement<M>> {
        info.required
            .iter()
            .map(|name| Requirement::Named(name.clone()))
            .collect()
    }
}

impl<M: IrModule> Clone for Requirement<M> {
    fn clone(&self) -> Self {
        match self {
            Requirement::Named(name) => Requirement::Named(name.clone()),
            Requirement::Pass(pass) => Requirement::Pass(pass.clone()),
        }
    }
}

/// A pass over the whole module. It may add and delete functions.
///
/// Wrap it in a [`Pass`] with [`Pass::module`] to run it. `#[module_pass]` implements this trait.
///
/// ```
/// use irpass::doc_toy::Toy;
/// use irpass::{ModulePass, Pass, PassContext, PassInfo, PassKind};
///
/// struct AddMain(PassInfo);
/// impl ModulePass<Toy> for AddMain {
///     fn info(&self) -> &PassInfo { &self.0 }
///     fn transform_module(&self, mut m: Toy, _ctx: &PassContext) -> irpass::Result<Toy> {
///         m.insert("main", vec![0]);
///         Ok(m)
///     }
/// }
///
/// let pass = Pass::module(AddMain(PassInfo::new("AddMain", 0, PassKind::Module)));
/// let out = pass.run(Toy::default()).unwrap();
/// assert_eq!(out.to_string(), "main = [0]\n");
/// ```
pub trait ModulePass<M: IrModule>: Send + Sync + 'static {
    /// The pass's metadata. Its `kind` should be [`PassKind::Module`](super::PassKind::Module).
    fn info(&self) -> &PassInfo;

    /// The passes to run first. The default looks up every name of `info().required`.
    fn requirements(&self) -> Vec<Requirement<M>> {
        Requirement::from_info(self.info())
    }

    /// Transforms the module.
    fn transform_module(&self, module: M, ctx: &PassContext) -> Result<M>;
}

/// A pass over one function at a time. It cannot add or delete functions.
///
/// The framework maps it over every function that does not skip optimisation, in parallel
/// (rayon) unless [`FunctionPass::parallel`] says no or the context asks for one thread. The
/// output is the same at any thread count. `#[function_pass]` implements this trait.
pub trait FunctionPass<M: IrModule>: Send + Sync + 'static {
    /// The pass's metadata. Its `kind` should be [`PassKind::Function`](super::PassKind::Function).
    fn info(&self) -> &PassInfo;

    /// The passes to run first. The default looks up every name of `info().required`.
    fn requirements(&self) -> Vec<Requirement<M>> {
        Requirement::from_info(self.info())
    }

    /// Whether the framework may run this pass on several functions at once (default `true`).
    fn parallel(&self) -> bool {
        true
    }

    /// Transforms one function. `module` is the module as it was before the pass.
    fn transform_function(
        &self,
        func: M::Function,
        module: &M,
        ctx: &PassContext,
    ) -> Result<M::Function>;
}
