//! The module: named global functions, and its `IrModule` implementation.

use std::fmt;
use std::sync::Arc;

use indexmap::IndexMap;

use super::error::{IrError, Source};
use super::{parse, print};
use crate::expr::Function;
use irpass::{Diagnostic, Diagnostics, IrModule};

/// A module of the reference IR: global functions by name, in definition order.
///
/// Cloning is O(1) (the function table is shared); changing a function copies the table of
/// `Arc`s, never the functions.
#[derive(Clone, Default)]
pub struct Module {
    funcs: Arc<IndexMap<String, Function>>,
    source: Option<Arc<Source>>,
}

impl Module {
    /// An empty module.
    pub fn new() -> Module {
        Module::default()
    }

    /// Parses a module from text (Relay's text format).
    ///
    /// # Errors
    /// A parse error with its position, rendered against `text`.
    pub fn parse(text: &str) -> Result<Module, IrError> {
        parse::parse_module("<input>", text)
    }

    /// Parses a module from text, naming the source `name` in messages.
    ///
    /// # Errors
    /// A parse error with its position.
    pub fn parse_named(name: &str, text: &str) -> Result<Module, IrError> {
        parse::parse_module(name, text)
    }

    /// A module of these functions.
    pub fn from_functions<I, S>(funcs: I) -> Module
    where
        I: IntoIterator<Item = (S, Function)>,
        S: Into<String>,
    {
        Module {
            funcs: Arc::new(funcs.into_iter().map(|(n, f)| (n.into(), f)).collect()),
            source: None,
        }
    }

    pub(crate) fn with_source(mut self, source: Arc<Source>) -> Module {
        self.source = Some(source);
        self
    }

    /// The source text it was parsed from (spans point into it).
    pub fn source(&self) -> Option<&Arc<Source>> {
        self.source.as_ref()
    }

    /// The function named `name`.
    pub fn get(&self, name: &str) -> Option<&Function> {
        self.funcs.get(name)
    }

    /// Adds or replaces the function `name` (a new name goes last).
    pub fn add(&mut self, name: impl Into<String>, func: Function) {
        Arc::make_mut(&mut self.funcs).insert(name.into(), func);
    }

    /// Removes the function `name` (the others keep their order). Time linear in the number
    /// of functions: to remove several, [`Module::retain`] does it in one sweep.
    pub fn remove(&mut self, name: &str) -> Option<Function> {
        Arc::make_mut(&mut self.funcs).shift_remove(name)
    }

    /// Keeps only the functions for which `keep(name, function)` is true, in their order, in
    /// one sweep over the module (`keep` is asked once per function, in order). When it keeps
    /// them all, the module is left as it was (the same value, see `IrModule::same_as`).
    ///
    /// ```
    /// use irpass_ir::Module;
    /// let mut m = Module::parse(
    ///     "def @a(%x: float32) { %x } def @b(%x: float32) { %x } def @main(%x: float32) { @a(%x) }",
    /// )
    /// .unwrap();
    /// m.retain(|name, _| name != "b");
    /// assert_eq!(m.names().collect::<Vec<_>>(), ["a", "main"]);
    /// ```
    pub fn retain(&mut self, mut keep: impl FnMut(&str, &Function) -> bool) {
        let verdicts: Vec<bool> = self.funcs.iter().map(|(n, f)| keep(n, f)).collect();
        if verdicts.iter().all(|&k| k) {
            return;
        }
        let mut verdicts = verdicts.into_iter();
        Arc::make_mut(&mut self.funcs).retain(|_, _| verdicts.next().unwrap_or(true));
    }

    /// The functions, in definition order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Function)> {
        self.funcs.iter().map(|(n, f)| (n.as_str(), f))
    }

    /// The names, in definition order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.funcs.keys().map(String::as_str)
    }

    /// How many functions.
    pub fn len(&self) -> usize {
        self.funcs.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.funcs.is_empty()
    }

    /// Infers the type of every function, node and variable (recorded on them: `checked_type()`).
    ///
    /// Incremental: a node typed before keeps its type unless a global it mentions is involved,
    /// so inference after a pass visits what the pass built and the nodes above it, not the
    /// whole module; [`Module::check_types`] starts from scratch.
    ///
    /// # Errors
    /// The type errors, with positions.
    pub fn infer_types(&self) -> Result<(), IrError> {
        super::typeck::infer_module(self)
    }

    /// Infers every type from scratch, ignoring what was recorded before, and checks that each
    /// recorded type agrees with the new one: what [`IrModule::verify`] runs after a pass.
    ///
    /// ```
    /// use irpass_ir::Module;
    /// let m = Module::parse("def @main(%x: Tensor[(2), float32]) { nn.relu(%x) }").unwrap();
    /// m.infer_types().unwrap();
    /// m.infer_types().unwrap(); // visits nothing: every node is typed and mentions no global
    /// m.check_types().unwrap(); // visits everything, and agrees with what was recorded
    /// assert_eq!(m.get("main").unwrap().body.checked_type().unwrap().to_string(),
    ///            "Tensor[(2), float32]");
    /// ```
    ///
    /// # Errors
    /// The type errors, with positions, including a node or variable whose recorded type a pass
    /// made wrong (by reusing it where it computes something else).
    pub fn check_types(&self) -> Result<(), IrError> {
        super::typeck::check_module(self)
    }

    /// Whether both modules are structurally equal (bound variables up to renaming).
    pub fn structurally_equal(&self, other: &Module) -> bool {
        super::structural::modules_equal(self, other)
    }
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&print::module_text(self))
    }
}

impl fmt::Debug for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&print::module_text(self))
    }
}

impl IrModule for Module {
    type Function = Function;

    fn ir_name() -> &'static str {
        "relay"
    }

    fn functions(&self) -> impl Iterator<Item = (&str, &Function)> {
        self.iter()
    }

    fn replace_function(&mut self, name: &str, func: Function) {
        if let Some(slot) = Arc::make_mut(&mut self.funcs).get_mut(name) {
            *slot = func;
        }
    }

    fn same_function(a: &Function, b: &Function) -> bool {
        Function::ptr_eq(a, b)
    }

    fn function_key(f: &Function) -> Option<usize> {
        Some(f.address())
    }

    fn same_as(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.funcs, &other.funcs)
    }

    fn function_count(&self) -> usize {
        self.funcs.len()
    }

    fn skip_optimization(func: &Function) -> bool {
        func.has_attr("SkipOptimization")
    }

    fn verify(&self) -> Result<(), Diagnostics> {
        let check = super::wellformed::check_module(self).and_then(|()| self.check_types());
        check.map_err(|e| {
            let e = e.with_source(self.source.clone());
            Diagnostics(
                e.problems
                    .iter()
                    .map(|p| Diagnostic::error(p.message.clone()))
                    .collect(),
            )
        })
    }

    fn structural_hash(&self) -> u64 {
        super::structural::module_hash(self)
    }
}
