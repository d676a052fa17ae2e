//! A toy IR for examples, doctests and experiments: each function of a [`Toy`] module is a
//! list of integers, and `Display` prints `name = [..]` lines. The framework's documentation
//! uses it so that every example compiles as it is written; an IR of your own implements
//! [`IrModule`] the same way (see the `bring_your_own_ir` example), and the
//! reference IR (crate `irpass-ir`) is the full-size one.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::{FunctionPass, IrModule, ModulePass, Pass, PassContext, PassInfo, PassKind, Result};

/// A module of integer-list functions.
#[derive(Clone, Default, Debug)]
pub struct Toy(Arc<BTreeMap<String, Arc<Vec<i64>>>>);

impl Toy {
    /// A module with one empty function, `main`.
    pub fn with_main() -> Self {
        let mut m = Toy::default();
        m.insert("main", Vec::new());
        m
    }

    /// Adds or replaces a function.
    pub fn insert(&mut self, name: &str, body: Vec<i64>) {
        Arc::make_mut(&mut self.0).insert(name.to_string(), Arc::new(body));
    }
}

impl fmt::Display for Toy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, body) in self.0.iter() {
            writeln!(f, "{name} = {body:?}")?;
        }
        Ok(())
    }
}

impl IrModule for Toy {
    type Key = str;
    type Function = Arc<Vec<i64>>;
    fn ir_name() -> &'static str {
        "toy"
    }
    fn functions(&self) -> impl Iterator<Item = (&str, &Self::Function)> {
        self.0.iter().map(|(n, f)| (n.as_str(), f))
    }
    fn replace_function(&mut self, name: &str, func: Self::Function) {
        Arc::make_mut(&mut self.0).insert(name.to_string(), func);
    }
    fn same_function(a: &Self::Function, b: &Self::Function) -> bool {
        Arc::ptr_eq(a, b)
    }
    fn function_identity(f: &Self::Function) -> Option<usize> {
        Some(Arc::as_ptr(f) as usize)
    }
    fn same_as(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

struct Append(PassInfo, i64);

impl FunctionPass<Toy> for Append {
    fn info(&self) -> &PassInfo {
        &self.0
    }
    fn transform_function(
        &self,
        f: Arc<Vec<i64>>,
        _: &Toy,
        _: &PassContext,
    ) -> Result<Arc<Vec<i64>>> {
        let mut body = (*f).clone();
        body.push(self.1);
        Ok(Arc::new(body))
    }
}

/// A function pass called `name` that appends `value` to every function.
pub fn append(name: &'static str, opt_level: u32, value: i64) -> Pass<Toy> {
    Pass::function(Append(
        PassInfo::new(name, opt_level, PassKind::Function),
        value,
    ))
}

struct Failing(PassInfo);

impl ModulePass<Toy> for Failing {
    fn info(&self) -> &PassInfo {
        &self.0
    }
    fn transform_module(&self, _: Toy, _: &PassContext) -> Result<Toy> {
        Err("boom".into())
    }
}

/// A module pass called `name` that always fails with the error "boom".
pub fn failing(name: &'static str) -> Pass<Toy> {
    Pass::module(Failing(PassInfo::new(name, 0, PassKind::Module)))
}
