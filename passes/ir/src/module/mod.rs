//! A module of global functions: parsing, printing, type inference that re-types only what
//! changed, structural equality, verification.

use std::fmt;
use std::sync::Arc;

use indexmap::IndexMap;
use rustc_hash::FxHashSet;

use crate::Function;
use crate::error::{ErrorKind, IrError, Source};
use crate::infer::{BodyTypes, FunctionInput, infer_types};
use crate::structural::{structural_hash, structurally_equal};
use crate::text::{function_text, parse_functions};

#[cfg(test)]
mod tests;

/// A module: global functions by name, in definition order.
///
/// Cloning is O(1) (the function table is shared); changing a function copies the table of
/// `Arc`s, never the functions.
///
/// ```
/// use irpass_ir::Module;
/// let text = "#[version = \"0.0.5\"]\ndef @main(%x: float32) {\n  exp(%x)\n}\n";
/// let m = Module::parse(text).unwrap();
/// assert_eq!(m.to_string(), text);
/// m.infer_types().unwrap();
/// assert_eq!(m.get("main").unwrap().types().unwrap().function_type().to_string(), "fn (float32) -> float32");
/// ```
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

    /// Parses a module from text (Relay's text format), straight into arenas.
    ///
    /// # Errors
    /// A parse error with its position, rendered against `text`.
    pub fn parse(text: &str) -> Result<Module, IrError> {
        Module::parse_named("<input>", text)
    }

    /// Parses a module from text, naming the source `name` in messages.
    ///
    /// # Errors
    /// A parse error with its position.
    pub fn parse_named(name: &str, text: &str) -> Result<Module, IrError> {
        let parsed = parse_functions(name, text)?;
        let funcs = parsed
            .into_iter()
            .map(|p| {
                let f = Function::new(p.function, p.ret_type, p.attrs, p.span);
                (p.name, f)
            })
            .collect();
        Ok(Module {
            funcs: Arc::new(funcs),
            source: Some(Arc::new(Source {
                name: name.to_string(),
                text: text.to_string(),
            })),
        })
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

    /// Replaces the function `name`, if there is one.
    pub fn replace(&mut self, name: &str, func: Function) {
        if let Some(slot) = Arc::make_mut(&mut self.funcs).get_mut(name) {
            *slot = func;
        }
    }

    /// Removes the function `name` (the others keep their order).
    pub fn remove(&mut self, name: &str) -> Option<Function> {
        Arc::make_mut(&mut self.funcs).shift_remove(name)
    }

    /// Keeps only the functions for which `keep(name, function)` is true, in their order; when
    /// it keeps them all, the module is left as it was.
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

    /// Whether both are the same value (one function table).
    pub fn same_as(&self, other: &Module) -> bool {
        Arc::ptr_eq(&self.funcs, &other.funcs)
    }

    /// Infers the types of every function (read them with [`Function::types`]).
    ///
    /// Incremental: a function keeps the types an earlier inference found while the globals
    /// it refers to keep the types it was typed against; only the others are typed (with the
    /// kept functions' types as known), so after a pass that changed one function, inference
    /// types that function, and its callers only if its type changed.
    ///
    /// # Errors
    /// The type errors, with positions.
    pub fn infer_types(&self) -> Result<(), IrError> {
        // First only the functions without types, the others' recorded types known: a kept
        // function calling a changed one then needs nothing when the changed one's type is
        // what it was (the common case after a pass).
        let untyped = self.untyped();
        if !untyped.is_empty() && self.type_untyped(|n| untyped.contains(n)).is_err() {
            // Possibly an error only because a kept function's recorded type is out of date:
            // decide with the stale functions and their callers typed together.
            return self.infer_types_with_callers();
        }
        // Then the functions whose callees' types are not the ones they were typed against,
        // until every recorded type agrees with its callees' (each round types fewer in
        // practice; the bound stops a recursion whose types keep moving).
        let none = FxHashSet::default();
        for _ in 0..=self.len() {
            let mismatched: FxHashSet<&str> = self
                .iter()
                .filter(|(_, f)| !self.callee_types_hold(f, &none))
                .map(|(n, _)| n)
                .collect();
            if mismatched.is_empty() {
                return Ok(());
            }
            if self.type_functions(|n| mismatched.contains(n)).is_err() {
                break;
            }
        }
        self.infer_types_with_callers()
    }

    /// The names of the functions without types.
    fn untyped(&self) -> FxHashSet<&str> {
        self.iter()
            .filter(|(_, f)| f.types().is_none())
            .map(|(n, _)| n)
            .collect()
    }

    /// Whether `f` has types and each global it refers to is not `stale` and still has the
    /// type `f` was typed against.
    fn callee_types_hold(&self, f: &Function, stale: &FxHashSet<&str>) -> bool {
        f.types().is_some_and(|types| {
            types.callees().all(|(callee, t)| {
                !stale.contains(callee)
                    && self
                        .get(callee)
                        .and_then(Function::types)
                        .is_some_and(|ct| ct.function_type() == t)
            })
        })
    }

    /// The conservative incremental inference: the functions without types, the kept ones
    /// whose callees are among them or changed type, transitively, typed together.
    fn infer_types_with_callers(&self) -> Result<(), IrError> {
        let mut stale = self.untyped();
        // A kept function whose callee is typed again, or whose callee's type is not the one
        // it was typed against, is typed again too; until nothing more is added.
        loop {
            let mut added = false;
            for (name, f) in self.iter() {
                if stale.contains(name) {
                    continue;
                }
                if !self.callee_types_hold(f, &stale) {
                    stale.insert(name);
                    added = true;
                }
            }
            if !added {
                break;
            }
        }
        if stale.is_empty() {
            return Ok(());
        }
        self.type_functions(|name| stale.contains(name))
    }

    /// Infers the types of every function from scratch, whatever an earlier inference found.
    ///
    /// # Errors
    /// The type errors, with positions.
    pub fn check_types(&self) -> Result<(), IrError> {
        self.type_functions(|_| true)
    }

    /// Types the functions `retype` says, the others' types known.
    fn type_functions(&self, retype: impl Fn(&str) -> bool) -> Result<(), IrError> {
        self.type_and_record(retype, Function::set_types)
    }

    /// As `type_functions`, for functions without types: one another thread typed meanwhile
    /// keeps the types it recorded.
    fn type_untyped(&self, retype: impl Fn(&str) -> bool) -> Result<(), IrError> {
        self.type_and_record(retype, Function::set_types_if_untyped)
    }

    fn type_and_record(
        &self,
        retype: impl Fn(&str) -> bool,
        record: fn(&Function, Arc<BodyTypes>),
    ) -> Result<(), IrError> {
        let chosen: Vec<(&str, &Function)> = self.iter().filter(|(n, _)| retype(n)).collect();
        let inputs: Vec<FunctionInput<'_>> = chosen
            .iter()
            .map(|(name, f)| FunctionInput {
                name,
                body: &f.code.body,
                params: &f.code.params,
                root: f.code.root,
                ret_type: f.ret_type.as_ref(),
                span: f.span,
            })
            .collect();
        let known = |name: &str| {
            self.get(name)
                .filter(|_| !retype(name))
                .and_then(Function::types)
                .map(|t| t.function_type().clone())
        };
        let types = infer_types(&inputs, &known).map_err(|e| e.with_source(self.source.clone()))?;
        for ((_, f), t) in chosen.iter().zip(types) {
            record(f, Arc::new(t));
        }
        Ok(())
    }

    /// Checks that every function is well formed: every variable bound once and used only in
    /// its scope, every global defined ([`crate::verify`]).
    ///
    /// # Errors
    /// The problems found (at most 20), each with its position and function.
    ///
    /// ```
    /// use irpass_ir::Module;
    /// let m = Module::parse("def @main(%x: float32) { @missing(%x) }").unwrap();
    /// let err = m.check_well_formed().unwrap_err();
    /// assert!(err.message().contains("`@missing` is not defined in the module"), "{err}");
    /// ```
    pub fn check_well_formed(&self) -> Result<(), IrError> {
        let problems = crate::verify::check_functions(self.iter(), |g| self.get(g).is_some());
        if problems.is_empty() {
            return Ok(());
        }
        Err(IrError {
            kind: ErrorKind::WellFormed,
            problems,
            source: self.source().cloned(),
        })
    }

    /// Checks that every function is well formed ([`Module::check_well_formed`]) and types
    /// from scratch: what verification after a pass runs.
    ///
    /// # Errors
    /// The first kind of problem found, with positions.
    pub fn verify(&self) -> Result<(), IrError> {
        self.check_well_formed()?;
        self.check_types()
    }

    /// The types of function `name`, inferring them if needed.
    ///
    /// # Errors
    /// The type errors of the module.
    pub fn types_of(&self, name: &str) -> Result<Option<Arc<BodyTypes>>, IrError> {
        self.infer_types()?;
        Ok(self.get(name).and_then(Function::types))
    }

    /// Whether both modules are structurally equal: the same names, and functions equal up to
    /// the names of their variables, sharing included.
    pub fn structurally_equal(&self, other: &Module) -> bool {
        self.len() == other.len()
            && self.iter().all(|(name, a)| {
                other.get(name).is_some_and(|b| {
                    a.ret_type == b.ret_type
                        && a.attrs == b.attrs
                        && structurally_equal(&a.code, &b.code)
                })
            })
    }

    /// A hash equal for structurally equal modules.
    pub fn structural_hash(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut parts: Vec<(&str, u64)> = self
            .iter()
            .map(|(n, f)| (n, structural_hash(&f.code)))
            .collect();
        parts.sort_unstable();
        let mut h = rustc_hash::FxHasher::default();
        parts.hash(&mut h);
        h.finish()
    }

    fn text(&self) -> String {
        let mut out = String::from("#[version = \"0.0.5\"]\n");
        for (i, (name, f)) in self.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&function_text(name, &f.code, f.ret_type.as_ref(), &f.attrs));
        }
        out
    }
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl fmt::Debug for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl irpass::IrModule for Module {
    type Key = str;
    type Function = Function;

    fn ir_name() -> &'static str {
        "relay"
    }

    fn functions(&self) -> impl Iterator<Item = (&str, &Function)> {
        self.iter()
    }

    fn replace_function(&mut self, name: &str, func: Function) {
        self.replace(name, func);
    }

    fn same_function(a: &Function, b: &Function) -> bool {
        Function::ptr_eq(a, b)
    }

    fn function_identity(f: &Function) -> Option<usize> {
        Some(f.address())
    }

    fn same_as(&self, other: &Self) -> bool {
        Module::same_as(self, other)
    }

    fn function_count(&self) -> usize {
        self.len()
    }

    fn skip_optimization(func: &Function) -> bool {
        func.has_attr("SkipOptimization")
    }

    fn verify(&self) -> Result<(), irpass::Diagnostics> {
        // One diagnostic: the problems rendered against the source (file, line, caret).
        Module::verify(self).map_err(|e| {
            let e = e.with_source(self.source.clone());
            let text = e.render();
            let text = text
                .trim_end()
                .strip_prefix("error: ")
                .unwrap_or(text.trim_end());
            irpass::Diagnostics(vec![irpass::Diagnostic::error(text.to_string())])
        })
    }

    fn structural_hash(&self) -> u64 {
        Module::structural_hash(self)
    }
}
