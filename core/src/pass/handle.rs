//! [`Pass`]: the cheap-to-clone, type-erased pass value that pipelines are made of.

use std::fmt;
use std::sync::Arc;

use super::PassInfo;
use super::resolve::resolve;
use super::runner::Runner;
use super::sequential::SequentialInner;
use super::traits::{FunctionPass, ModulePass, Requirement};
use crate::error::PassError;
use crate::{IrModule, PassContext};

/// A pass on modules of type `M`: a module pass, a function pass or a [`Sequential`](super::Sequential).
///
/// A `Pass` is a value: cloning it is an `Arc` clone, and it is `Send + Sync`, so one pass can
/// run on many threads at once. Running it takes the module by value and gives back a new module
/// or a [`PassError`] that carries the last good module.
pub struct Pass<M: IrModule>(pub(crate) Repr<M>);

pub(crate) enum Repr<M: IrModule> {
    Module(Arc<dyn ModulePass<M>>),
    Function(Arc<dyn FunctionPass<M>>),
    Sequential(Arc<SequentialInner<M>>),
}

impl<M: IrModule> Pass<M> {
    /// Wraps a module pass.
    pub fn module(pass: impl ModulePass<M>) -> Self {
        Pass(Repr::Module(Arc::new(pass)))
    }

    /// Wraps a function pass.
    pub fn function(pass: impl FunctionPass<M>) -> Self {
        Pass(Repr::Function(Arc::new(pass)))
    }

    /// The pass's metadata.
    pub fn info(&self) -> &PassInfo {
        match &self.0 {
            Repr::Module(p) => p.info(),
            Repr::Function(p) => p.info(),
            Repr::Sequential(s) => &s.info,
        }
    }

    /// The passes a [`Sequential`](super::Sequential) runs, in order; none for a module or
    /// function pass. With [`PassInfo::required_names`] this walks a whole pipeline, e.g. to
    /// list what it runs or to check a pass name against it.
    ///
    /// ```
    /// use irpass::doc_toy::append;
    /// use irpass::{Pass, Sequential};
    ///
    /// let inner = Sequential::named("inner", [append("B", 0, 2)]).unwrap();
    /// let outer: Pass<_> = Sequential::new([append("A", 0, 1), inner.into()]).unwrap().into();
    /// let names: Vec<&str> = outer.passes().map(|p| p.info().name.as_ref()).collect();
    /// assert_eq!(names, ["A", "inner"]);
    /// assert_eq!(outer.passes().nth(1).unwrap().passes().count(), 1);
    /// ```
    pub fn passes(&self) -> impl ExactSizeIterator<Item = &Pass<M>> {
        let steps: &[super::resolve::Step<M>] = match &self.0 {
            Repr::Sequential(s) => &s.steps,
            _ => &[],
        };
        steps.iter().map(|s| &s.pass)
    }

    /// The passes that must run before this one, as declared (not yet resolved).
    pub fn requirements(&self) -> Vec<Requirement<M>> {
        match &self.0 {
            Repr::Module(p) => p.requirements(),
            Repr::Function(p) => p.requirements(),
            Repr::Sequential(s) => Requirement::from_info(&s.info),
        }
    }

    /// Checks that every required pass can be found and that there is no cycle, as building a
    /// [`Sequential`](super::Sequential) does.
    pub fn check_requirements(&self) -> Result<(), crate::BuildError> {
        resolve(self).map(|_| ())
    }

    /// Runs the pass on `module` under [`PassContext::current()`].
    ///
    /// A pass called directly always runs (the context's `opt_level` and `disabled_pass` only
    /// decide what a Sequential runs); its required passes run first, and the context's
    /// instruments see it.
    pub fn run(&self, module: M) -> Result<M, PassError<M>> {
        self.run_in(module, &PassContext::current())
    }

    /// Runs the pass on `module` under `ctx` (without making `ctx` current).
    pub fn run_in(&self, module: M, ctx: &PassContext) -> Result<M, PassError<M>> {
        let step = match resolve(self) {
            Ok(step) => step,
            Err(err) => return Err(PassError::build(self.info(), err, module)),
        };
        let instruments = ctx.instruments();
        Runner::new(ctx, &instruments, &step).run_top(&step, module)
    }
}

impl<M: IrModule> Clone for Pass<M> {
    fn clone(&self) -> Self {
        Pass(match &self.0 {
            Repr::Module(p) => Repr::Module(p.clone()),
            Repr::Function(p) => Repr::Function(p.clone()),
            Repr::Sequential(s) => Repr::Sequential(s.clone()),
        })
    }
}

impl<M: IrModule> fmt::Debug for Pass<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Sequential(s) => f
                .debug_struct("Sequential")
                .field("name", &s.info.name)
                .field("opt_level", &s.info.opt_level)
                .field(
                    "passes",
                    &s.steps.iter().map(|st| &st.pass).collect::<Vec<_>>(),
                )
                .finish(),
            _ => {
                let info = self.info();
                write!(
                    f,
                    "{}({} pass, opt_level {})",
                    info.name, info.kind, info.opt_level
                )
            }
        }
    }
}
