//! `tiny`: each function is a list of integers, optionally marked `SkipOptimization`.

use std::fmt;
use std::sync::Arc;

use irpass::{Diagnostic, Diagnostics, IrModule};

/// One function: a list of integers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Func {
    /// The body.
    pub body: Vec<i64>,
    /// Carries the `SkipOptimization` attribute.
    pub skip: bool,
}

/// A module of named functions, in insertion order.
#[derive(Clone, Default)]
pub struct Tiny {
    funcs: Arc<Vec<(String, Arc<Func>)>>,
}

impl Tiny {
    /// A module from `(name, body)` pairs.
    pub fn new<'a>(funcs: impl IntoIterator<Item = (&'a str, Vec<i64>)>) -> Self {
        let mut m = Tiny::default();
        for (name, body) in funcs {
            m.add(name, body, false);
        }
        m
    }

    /// A module with one function, `main = []`.
    pub fn main() -> Self {
        Tiny::new([("main", vec![])])
    }

    /// A module with `n` functions `f0 = [0]`, `f1 = [1]`, ...
    pub fn with_functions(n: usize) -> Self {
        let mut m = Tiny::default();
        let funcs = Arc::make_mut(&mut m.funcs);
        for i in 0..n {
            funcs.push((
                format!("f{i}"),
                Arc::new(Func {
                    body: vec![i as i64],
                    skip: false,
                }),
            ));
        }
        m
    }

    /// Adds a function (or replaces the one of that name).
    pub fn add(&mut self, name: &str, body: Vec<i64>, skip: bool) {
        let func = Arc::new(Func { body, skip });
        let funcs = Arc::make_mut(&mut self.funcs);
        match funcs.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = func,
            None => funcs.push((name.to_string(), func)),
        }
    }

    /// The body of a function.
    pub fn body(&self, name: &str) -> Option<&[i64]> {
        self.funcs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, f)| f.body.as_slice())
    }
}

impl Tiny {
    /// Reads the text `Display` writes (`def @name[ #skip]: [1, 2]` per line).
    ///
    /// # Errors
    /// A line that is not of that form, with its number.
    pub fn parse(text: &str) -> Result<Tiny, irpass::BoxError> {
        let mut m = Tiny::new([]);
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let bad = || {
                format!(
                    "line {}: expected `def @name: [1, 2]`, found `{line}`",
                    i + 1
                )
            };
            let rest = line.trim().strip_prefix("def @").ok_or_else(bad)?;
            let (head, body) = rest.split_once(':').ok_or_else(bad)?;
            let (name, skip) = match head.strip_suffix(" #skip") {
                Some(n) => (n, true),
                None => (head, false),
            };
            let body = body
                .trim()
                .strip_prefix('[')
                .and_then(|b| b.strip_suffix(']'))
                .ok_or_else(bad)?;
            let values = body
                .split(',')
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(|v| v.parse::<i64>().map_err(|_| bad()))
                .collect::<Result<Vec<_>, _>>()?;
            m.add(name.trim(), values, skip);
        }
        Ok(m)
    }
}

impl fmt::Display for Tiny {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, func) in self.funcs.iter() {
            let skip = if func.skip { " #skip" } else { "" };
            writeln!(f, "def @{name}{skip}: {:?}", func.body)?;
        }
        Ok(())
    }
}

impl fmt::Debug for Tiny {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl IrModule for Tiny {
    type Key = str;
    type Function = Arc<Func>;

    fn ir_name() -> &'static str {
        "tiny"
    }

    fn functions(&self) -> impl Iterator<Item = (&str, &Self::Function)> {
        self.funcs.iter().map(|(n, f)| (n.as_str(), f))
    }

    fn replace_function(&mut self, name: &str, func: Self::Function) {
        let funcs = Arc::make_mut(&mut self.funcs);
        if let Some(slot) = funcs.iter_mut().find(|(n, _)| n == name) {
            slot.1 = func;
        }
    }

    fn same_function(a: &Self::Function, b: &Self::Function) -> bool {
        Arc::ptr_eq(a, b)
    }

    fn function_identity(f: &Self::Function) -> Option<usize> {
        Some(Arc::as_ptr(f) as usize)
    }

    fn same_as(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.funcs, &other.funcs)
    }

    fn function_count(&self) -> usize {
        self.funcs.len()
    }

    fn skip_optimization(func: &Self::Function) -> bool {
        func.skip
    }

    /// A module is well formed when no function holds a negative number.
    fn verify(&self) -> Result<(), Diagnostics> {
        let errors: Vec<Diagnostic> = self
            .funcs
            .iter()
            .filter(|(_, f)| f.body.iter().any(|v| *v < 0))
            .map(|(n, _)| Diagnostic::error("negative value").at(format!("@{n}")))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.into())
        }
    }
}
