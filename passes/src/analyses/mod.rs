//! The pass library's analyses, cached by the pass context (see [`irpass::analysis`]): the
//! passes ask for them instead of requiring a pass that recomputes them.
//!
//! - [`Types`] (per function) and [`ModuleTypes`] (per module state) replace the `InferType`
//!   requirement: a pass that needs types asks for them, and gets the cached result when the
//!   function has not changed since they were found. `InferType` stays a pass for users and
//!   TVM-compatible pipelines.
//! - [`UseCounts`]: how many users each node of a function has.
//! - [`CallGraph`]: which functions each function calls, and which are called.
//! - [`PostDominators`]: a function's data-flow graph and its post-dominator tree (`FuseOps`).
//!
//! ```
//! use irpass::PassContext;
//! use irpass_passes::analyses::{CallGraph, Types};
//! use irpass_passes::ir::Module;
//!
//! let module = Module::parse(
//!     "def @f(%x: float32) { exp(%x) }\ndef @main(%x: float32) { @f(%x) }",
//! ).unwrap();
//! let ctx = PassContext::default();
//! let main = module.get("main").unwrap();
//! let types = ctx.function_analysis(&Types, main, &module);
//! let found = types.as_ref().as_ref().expect("well typed");
//! assert_eq!(found.of(main.code.root).to_string(), "float32");
//! // Asked again for the same function: the cached result.
//! let again = ctx.function_analysis(&Types, main, &module);
//! assert!(std::sync::Arc::ptr_eq(&types, &again));
//! let calls = ctx.module_analysis(&CallGraph, &module);
//! assert_eq!(calls.callees("main"), ["f"]);
//! assert!(calls.is_called("f") && !calls.is_called("main"));
//! ```

use std::collections::BTreeSet;
use std::sync::Arc;

use irpass::PassContext;
use irpass::analysis::{Analysis, FunctionAnalysis, ModuleAnalysis};
use irpass_ir::body::{Idx, Node};
use irpass_ir::infer::{BodyTypes, FunctionInput, infer_types};
use irpass_ir::{Function, IrError, Module};
use rustc_hash::{FxHashMap, FxHashSet};

mod post_dominators;

pub use post_dominators::{PostDominatorTree, PostDominators};

/// What [`Types`] gives: a function's types, or the module's type errors.
pub type TypesResult = Result<Arc<BodyTypes>, IrError>;

/// Type inference of a module state: every function without types, or whose callees' types
/// changed, is typed (incrementally, as `InferType` does) and keeps its types with it. Asked
/// for by [`Types`]; computed once per module state a pass sees.
#[derive(Clone, Copy, Debug, Default)]
pub struct ModuleTypes;

impl Analysis for ModuleTypes {
    const NAME: &'static str = "ModuleTypes";
}

impl ModuleAnalysis<Module> for ModuleTypes {
    type Output = Result<(), IrError>;
    fn compute(&self, module: &Module, _ctx: &PassContext) -> Result<(), IrError> {
        module.infer_types()
    }
}

/// The types of a function: of every expression and variable, and the function's own type.
/// Computed once per distinct function state: a function a pass left as it was keeps them,
/// unless a function it calls changed type (then the module's inference types it again).
///
/// The one way a pass reaches a function's types: [`Types::of`] when it needs them (the types
/// the function carries when they are valid, else computed and cached), [`Types::carried`]
/// when it would rather type the few nodes it asks about on demand than have the module
/// typed. (Inside a rewrite, the body being built is typed on demand by the IR's
/// `LocalTyper`, which rule sets use.)
#[derive(Clone, Copy, Debug, Default)]
pub struct Types;

impl Types {
    /// The types of `func`, as a plain `Result`, through the context's cache: what a pass that
    /// needs types writes (`let types = Types::of(&func, module, ctx)?;`).
    ///
    /// # Errors
    /// The module's type errors.
    pub fn of(
        func: &Function,
        module: &Module,
        ctx: &PassContext,
    ) -> Result<Arc<BodyTypes>, IrError> {
        ctx.function_analysis(&Types, func, module).as_ref().clone()
    }

    /// The types `func` already carries, when nothing can have made them stale (an inference
    /// typed this very function value, and it refers to no global whose type could have
    /// changed since); `None` otherwise. Computes nothing.
    pub fn carried(func: &Function) -> Option<Arc<BodyTypes>> {
        func.types().filter(|t| t.callees().next().is_none())
    }

    /// `func` typed alone, the other functions' recorded types known: for a function that is
    /// not one of `module`'s.
    fn alone(func: &Function, module: &Module) -> Result<Arc<BodyTypes>, IrError> {
        let input = FunctionInput {
            name: "<function>",
            body: &func.code.body,
            params: &func.code.params,
            root: func.code.root,
            ret_type: func.ret_type.as_ref(),
            span: func.span,
        };
        let known = |name: &str| module.get(name).and_then(Function::function_type);
        let mut types = infer_types(&[input], &known)?;
        Ok(Arc::new(types.remove(0)))
    }
}

impl Analysis for Types {
    const NAME: &'static str = "Types";
}

impl FunctionAnalysis<Module> for Types {
    type Output = TypesResult;

    fn compute(&self, func: &Function, module: &Module, ctx: &PassContext) -> TypesResult {
        if let Some(types) = Types::carried(func) {
            return Ok(types);
        }
        if let Err(e) = ctx.module_analysis(&ModuleTypes, module).as_ref() {
            return Err(e.clone());
        }
        match func.types() {
            Some(types) => Ok(types),
            // Not a function of `module`: typed alone, the module's types known.
            None => Types::alone(func, module),
        }
    }

    fn still_valid(
        &self,
        result: &TypesResult,
        func: &Function,
        module: &Module,
        ctx: &PassContext,
    ) -> bool {
        // The module's inference keeps a function's types while they hold, and types it again
        // when a callee's type changed: the cached result holds if it is still the one the
        // function carries after that inference. A function that refers to no global needs
        // no inference of the module to tell.
        let Ok(cached) = result else { return false };
        let refers_to_globals = cached.callees().next().is_some();
        if refers_to_globals && ctx.module_analysis(&ModuleTypes, module).is_err() {
            return false;
        }
        func.types().is_some_and(|c| Arc::ptr_eq(cached, &c))
    }
}

/// How many users each node of a function's body has (indexed by node id; nodes the result
/// does not reach have none). Reads the function only.
#[derive(Clone, Copy, Debug, Default)]
pub struct UseCounts;

impl Analysis for UseCounts {
    const NAME: &'static str = "UseCounts";
}

impl FunctionAnalysis<Module> for UseCounts {
    type Output = Vec<u32>;
    fn compute(&self, func: &Function, _module: &Module, _ctx: &PassContext) -> Vec<u32> {
        func.code.body.use_counts(func.code.root)
    }
}

/// Which functions each function of a module calls (by name, sorted), and which are called.
#[derive(Clone, Copy, Debug, Default)]
pub struct CallGraph;

impl Analysis for CallGraph {
    const NAME: &'static str = "CallGraph";
}

/// The result of [`CallGraph`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Calls {
    callees: FxHashMap<String, Vec<String>>,
    called: BTreeSet<String>,
}

impl Calls {
    /// The call graph of `module` (what [`CallGraph`] computes).
    pub fn of(module: &Module) -> Calls {
        let mut calls = Calls::default();
        for (name, f) in module.iter() {
            let callees: BTreeSet<String> = globals_in(f).map(str::to_string).collect();
            calls.called.extend(callees.iter().cloned());
            calls
                .callees
                .insert(name.to_string(), callees.into_iter().collect());
        }
        calls
    }

    /// The names of `roots` and of every function they reach through calls or references.
    pub fn reached_from(&self, roots: impl IntoIterator<Item = String>) -> FxHashSet<String> {
        let mut reached: FxHashSet<String> = FxHashSet::default();
        let mut work: Vec<String> = roots.into_iter().collect();
        while let Some(name) = work.pop() {
            if reached.insert(name.clone()) {
                work.extend(
                    self.callees(&name)
                        .iter()
                        .filter(|r| !reached.contains(*r))
                        .cloned(),
                );
            }
        }
        reached
    }

    /// The functions `caller` refers to (calls or passes as a value), sorted; none for a name
    /// the module does not have.
    pub fn callees(&self, caller: &str) -> &[String] {
        self.callees.get(caller).map_or(&[], Vec::as_slice)
    }

    /// Whether some function refers to `name`.
    pub fn is_called(&self, name: &str) -> bool {
        self.called.contains(name)
    }
}

impl ModuleAnalysis<Module> for CallGraph {
    type Output = Calls;
    fn compute(&self, module: &Module, _ctx: &PassContext) -> Calls {
        Calls::of(module)
    }
}

/// The globals function `f` refers to (in the part of its body its result reaches).
pub(crate) fn globals_in(f: &Function) -> impl Iterator<Item = &str> {
    let body = &f.code.body;
    let live = body.reachable(f.code.root);
    body.ids()
        .filter(move |e| live[e.index()])
        .filter_map(move |e| match body.node(e) {
            Node::Global(g) => Some(body.global(*g)),
            _ => None,
        })
}

macro_rules! register {
    ($ty:ident, $kind:ident, $description:literal) => {
        irpass::register_analysis!(Module, $ty, $kind, $description);
    };
}

register!(
    ModuleTypes,
    Module,
    "Type inference of a module state: types every function without types, or whose callees' types changed; computed once per module state a pass sees."
);
register!(
    Types,
    Function,
    "The types of a function: of every expression and variable, and the function's own type; computed once per distinct function state."
);
register!(
    UseCounts,
    Function,
    "How many users each node of a function's body has."
);
register!(
    PostDominators,
    Function,
    "A function's data-flow graph (what flows into which operation, what escapes) and its post-dominator tree."
);
register!(
    CallGraph,
    Module,
    "Which functions each function of a module calls, and which are called."
);
