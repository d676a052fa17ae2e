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

/// A pass over one function at a time. It cannot add or delete functions itself; what it
/// needs from the module around the function (a new local, a type, a helper function) it asks
/// for with [`ModuleEdits`] ([`FunctionPass::transform_function_with_edits`]), applied once
/// every function is done.
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

    /// Transforms one function and may ask for edits of the module around it, which the
    /// framework applies after every function is transformed and put back: in the module's
    /// order of functions, each function's edits in the order it made them, so the result does
    /// not depend on the thread count. The default calls
    /// [`transform_function`](FunctionPass::transform_function) and asks for none.
    ///
    /// ```
    /// use irpass::doc_toy::Toy;
    /// use irpass::{FunctionPass, ModuleEdits, Pass, PassContext, PassInfo, PassKind};
    /// use std::sync::Arc;
    ///
    /// /// Moves each function's last value into a new function `NAME_tail`.
    /// struct SplitTail(PassInfo);
    /// impl FunctionPass<Toy> for SplitTail {
    ///     fn info(&self) -> &PassInfo { &self.0 }
    ///     fn transform_function(&self, f: Arc<Vec<i64>>, _: &Toy, _: &PassContext)
    ///         -> irpass::Result<Arc<Vec<i64>>> {
    ///         Ok(f) // (only called through the method below)
    ///     }
    ///     fn transform_function_with_edits(
    ///         &self,
    ///         name: &str,
    ///         f: Arc<Vec<i64>>,
    ///         _: &Toy,
    ///         _: &PassContext,
    ///         edits: &mut ModuleEdits<Toy>,
    ///     ) -> irpass::Result<Arc<Vec<i64>>> {
    ///         let mut body = (*f).clone();
    ///         let Some(last) = body.pop() else { return Ok(f) };
    ///         let tail = format!("{name}_tail");
    ///         edits.push(move |m: &mut Toy| {
    ///             m.insert(&tail, vec![last]);
    ///             Ok(())
    ///         });
    ///         Ok(Arc::new(body))
    ///     }
    /// }
    ///
    /// let mut m = Toy::default();
    /// m.insert("a", vec![1, 2]);
    /// m.insert("b", vec![3]);
    /// let pass = Pass::function(SplitTail(PassInfo::new("SplitTail", 0, PassKind::Function)));
    /// let out = pass.run(m).unwrap();
    /// assert_eq!(out.to_string(), "a = [1]\na_tail = [2]\nb = []\nb_tail = [3]\n");
    /// ```
    fn transform_function_with_edits(
        &self,
        key: &M::Key,
        func: M::Function,
        module: &M,
        ctx: &PassContext,
        edits: &mut ModuleEdits<M>,
    ) -> Result<M::Function> {
        let _ = (key, &edits);
        self.transform_function(func, module, ctx)
    }
}

/// One edit of the module a function pass asks for: applied to the module once the pass has
/// transformed every function, with the key of the function that asked.
pub type ModuleEdit<M> = Box<dyn FnOnce(&mut M, &<M as IrModule>::Key) -> Result<()> + Send>;

/// The edits of the module a function pass asks for while it transforms one function
/// ([`FunctionPass::transform_function_with_edits`], or an `edits: &mut ModuleEdits<M>`
/// parameter of a `#[function_pass]`).
pub struct ModuleEdits<M: IrModule> {
    edits: Vec<ModuleEdit<M>>,
}

impl<M: IrModule> Default for ModuleEdits<M> {
    fn default() -> Self {
        ModuleEdits { edits: Vec::new() }
    }
}

impl<M: IrModule> ModuleEdits<M> {
    /// Asks for `edit` to be applied to the module after the pass.
    pub fn push(&mut self, edit: impl FnOnce(&mut M) -> Result<()> + Send + 'static) {
        self.edits
            .push(Box::new(move |m: &mut M, _: &M::Key| edit(m)));
    }

    /// Asks for `edit` to be applied to the module after the pass, given the key of the
    /// function being transformed (to put back a body rewritten with what only the module can
    /// hand out, a new local's id, say).
    pub fn push_for_function(
        &mut self,
        edit: impl FnOnce(&mut M, &M::Key) -> Result<()> + Send + 'static,
    ) {
        self.edits.push(Box::new(edit));
    }

    /// How many edits were asked for.
    pub fn len(&self) -> usize {
        self.edits.len()
    }

    /// Whether none was asked for.
    pub fn is_empty(&self) -> bool {
        self.edits.is_empty()
    }

    pub(crate) fn into_vec(self) -> Vec<ModuleEdit<M>> {
        self.edits
    }
}
