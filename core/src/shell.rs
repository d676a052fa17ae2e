//! An adapter for IRs edited in place: [`Shelled`] makes an [`IrModule`] of a module that
//! cannot be cloned (walrus's, Cranelift's, an LLVM-style IR) by keeping the module as a shared
//! *shell* and taking its function bodies out as values.
//!
//! The IR implements [`Shell`]: how bodies are taken out (*materialise*) and how a module value
//! is written (*write-back*: its bodies put into the shell, the functions it dropped left out).
//! Passes then replace bodies and drop functions by value, as on any IR, and everything that
//! needs an older module (the last good module after a failure, print-changed, bisection, the
//! crash reproducer) has one: an older value holds its own bodies and key list, and the shell
//! is only ever added to. The shell sits behind a lock: passes read it in parallel
//! ([`Shelled::shell`]) and module edits add to it ([`Shelled::shell_mut`]).
//!
//! ```
//! use std::fmt;
//! use irpass::shell::{Shell, Shelled, TakenOut};
//! use irpass::{IrModule, Pass, PassContext, PassInfo, PassKind, ModulePass};
//!
//! /// An in-place IR: named bodies in a vector it edits itself.
//! struct Registers(Vec<(String, Vec<u8>)>);
//!
//! impl Shell for Registers {
//!     type Key = String;
//!     type Body = Vec<u8>;
//!     type Written = String;
//!     fn ir_name() -> &'static str { "registers" }
//!     fn take_out(&self) -> TakenOut<String, Vec<u8>> {
//!         TakenOut { functions: self.0.clone(), declarations: Vec::new() }
//!     }
//!     fn write(&mut self, bodies: &[(&String, &Vec<u8>)], _dropped: &[String])
//!         -> irpass::Result<String> {
//!         Ok(bodies.iter().map(|(k, b)| format!("{k}: {b:?}\n")).collect())
//!     }
//!     fn print(written: &String, f: &mut fmt::Formatter<'_>) -> fmt::Result {
//!         f.write_str(written)
//!     }
//! }
//!
//! let m = Shelled::new(Registers(vec![("a".into(), vec![1]), ("b".into(), vec![2])]));
//! let mut smaller = m.clone();
//! smaller.retain(|k, _| k != "b");
//! assert_eq!(smaller.to_string(), "a: [1]\n");
//! assert_eq!(m.to_string(), "a: [1]\nb: [2]\n", "the older value is still written whole");
//! ```

use std::fmt;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::{Diagnostic, Diagnostics, IrModule};

/// What an IR edited in place gives [`Shelled`].
pub trait Shell: Send + Sync + Sized + 'static {
    /// How a function is identified ([`IrModule::Key`]); functions are kept in key order.
    type Key: Clone + Ord + fmt::Display + Send + Sync + 'static;
    /// A function's body as a value, taken out of the shell.
    type Body: Send + Sync + 'static;
    /// A module written out (bytes, text): what printing and verification read.
    type Written;

    /// A short name for the IR ([`IrModule::ir_name`]).
    fn ir_name() -> &'static str;

    /// Materialise: the functions with bodies, taken out as values, and the keys of the
    /// functions declared without one.
    fn take_out(&self) -> TakenOut<Self::Key, Self::Body>;

    /// Write-back: writes the module whose functions are `bodies`, in key order, leaving out
    /// `dropped` (functions taken out, or added by another value, that this module value does
    /// not hold). The shell may be
    /// changed only in ways every module value still holds (bodies put back are overwritten by
    /// the next write); a function deleted from the shell could not be written by an older
    /// value, so `dropped` is left out of what is written (a copy), not deleted.
    ///
    /// # Errors
    /// A module that cannot be written (a dropped function still used).
    fn write(
        &mut self,
        bodies: &[(&Self::Key, &Self::Body)],
        dropped: &[Self::Key],
    ) -> crate::Result<Self::Written>;

    /// Prints a written module (the module's `Display`).
    ///
    /// # Errors
    /// As `Display`.
    fn print(written: &Self::Written, f: &mut fmt::Formatter<'_>) -> fmt::Result;

    /// Checks a written module ([`IrModule::verify`]); the default accepts it.
    ///
    /// # Errors
    /// What is wrong with it.
    fn verify(written: &Self::Written) -> Result<(), Diagnostics> {
        let _ = written;
        Ok(())
    }

    /// Whether function passes leave `body` alone ([`IrModule::skip_optimization`]).
    fn skip_optimization(body: &Self::Body) -> bool {
        let _ = body;
        false
    }
}

/// What [`Shell::take_out`] gives: the functions with bodies and the declarations.
pub struct TakenOut<K, B> {
    /// The functions with a body, each taken out as a value (in any order: kept in key order).
    pub functions: Vec<(K, B)>,
    /// The keys of the functions declared without a body ([`IrModule::declarations`]).
    pub declarations: Vec<K>,
}

/// A module's functions: keys and bodies, in key order.
type Functions<S> = Vec<(<S as Shell>::Key, Arc<<S as Shell>::Body>)>;

/// A module of an IR edited in place, as a value: the shared shell, this value's functions
/// (bodies behind `Arc`, in key order) and declarations, and the keys of every function any
/// value of this shell has held (shared: what a value does not hold, it leaves out).
pub struct Shelled<S: Shell> {
    shell: Arc<RwLock<S>>,
    functions: Arc<Functions<S>>,
    declarations: Arc<Vec<S::Key>>,
    known: Arc<RwLock<Vec<S::Key>>>,
}

impl<S: Shell> Clone for Shelled<S> {
    fn clone(&self) -> Self {
        Shelled {
            shell: self.shell.clone(),
            functions: self.functions.clone(),
            declarations: self.declarations.clone(),
            known: self.known.clone(),
        }
    }
}

impl<S: Shell> Shelled<S> {
    /// Takes the bodies out of `shell` and keeps it.
    pub fn new(shell: S) -> Self {
        let TakenOut {
            mut functions,
            declarations,
        } = shell.take_out();
        functions.sort_by(|(a, _), (b, _)| a.cmp(b));
        let known = functions.iter().map(|(k, _)| k.clone()).collect();
        Shelled {
            shell: Arc::new(RwLock::new(shell)),
            functions: Arc::new(
                functions
                    .into_iter()
                    .map(|(k, b)| (k, Arc::new(b)))
                    .collect(),
            ),
            declarations: Arc::new(declarations),
            known: Arc::new(RwLock::new(known)),
        }
    }

    /// The shell, to read what passes need beside the bodies. Its bodies are the ones taken
    /// out (or last written), not this value's. Drop the guard before printing or writing a
    /// module of this shell on the same thread (writing takes the lock to put bodies back).
    pub fn shell(&self) -> RwLockReadGuard<'_, S> {
        self.shell.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The shell, to add to it (a new local, a type) from a module pass or a module edit:
    /// additions only, which every module value sharing the shell still holds.
    pub fn shell_mut(&mut self) -> RwLockWriteGuard<'_, S> {
        self.shell.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Where the function `key` is in this value's list (kept in key order), or would go.
    fn position(&self, key: &S::Key) -> Result<usize, usize> {
        self.functions.binary_search_by(|(k, _)| k.cmp(key))
    }

    /// The body of the function `key`, if this value holds it.
    pub fn function(&self, key: &S::Key) -> Option<&Arc<S::Body>> {
        let i = self.position(key).ok()?;
        Some(&self.functions[i].1)
    }

    /// Keeps the functions for which `keep` is true (the caller makes sure none left uses a
    /// dropped one; [`Shell::write`] says if one does).
    pub fn retain(&mut self, keep: impl Fn(&S::Key, &S::Body) -> bool) {
        if self.functions.iter().any(|(k, b)| !keep(k, b)) {
            Arc::make_mut(&mut self.functions).retain(|(k, b)| keep(k, b));
        }
    }

    /// Adds the function `key` (made in the shell with [`Shelled::shell_mut`]) with `body`, or
    /// replaces its body. Other values of the shell, which do not hold it, leave it out when
    /// they are written.
    pub fn insert(&mut self, key: S::Key, body: S::Body) {
        let body = Arc::new(body);
        match self.position(&key) {
            Ok(i) => Arc::make_mut(&mut self.functions)[i].1 = body,
            Err(i) => {
                let mut known = self.known.write().unwrap_or_else(|e| e.into_inner());
                if !known.contains(&key) {
                    known.push(key.clone());
                }
                drop(known);
                Arc::make_mut(&mut self.functions).insert(i, (key, body));
            }
        }
    }

    /// Writes this module value ([`Shell::write`]).
    ///
    /// # Errors
    /// What the shell's write says.
    pub fn write(&self) -> crate::Result<S::Written> {
        let bodies: Vec<(&S::Key, &S::Body)> =
            self.functions.iter().map(|(k, b)| (k, &**b)).collect();
        let dropped: Vec<S::Key> = (self.known.read().unwrap_or_else(|e| e.into_inner()))
            .iter()
            .filter(|k| self.function(k).is_none())
            .cloned()
            .collect();
        let mut shell = self.shell.write().unwrap_or_else(|e| e.into_inner());
        shell.write(&bodies, &dropped)
    }
}

impl<S: Shell> fmt::Display for Shelled<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.write() {
            Ok(written) => S::print(&written, f),
            Err(e) => write!(f, "(the module cannot be written: {e})"),
        }
    }
}

impl<S: Shell> fmt::Debug for Shelled<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = |keys: &mut dyn Iterator<Item = &S::Key>| -> Vec<String> {
            keys.map(ToString::to_string).collect()
        };
        f.debug_struct("Shelled")
            .field("ir", &S::ir_name())
            .field(
                "functions",
                &names(&mut self.functions.iter().map(|(k, _)| k)),
            )
            .field("declarations", &names(&mut self.declarations.iter()))
            .finish()
    }
}

impl<S: Shell> IrModule for Shelled<S> {
    type Key = S::Key;
    type Function = Arc<S::Body>;
    fn ir_name() -> &'static str {
        S::ir_name()
    }
    fn functions(&self) -> impl Iterator<Item = (&S::Key, &Arc<S::Body>)> {
        self.functions.iter().map(|(k, b)| (k, b))
    }
    fn function_count(&self) -> usize {
        self.functions.len()
    }
    fn declarations(&self) -> impl Iterator<Item = &S::Key> {
        self.declarations.iter()
    }
    fn replace_function(&mut self, key: &S::Key, func: Arc<S::Body>) {
        if let Ok(i) = self.position(key) {
            Arc::make_mut(&mut self.functions)[i].1 = func;
        }
    }
    fn same_function(a: &Arc<S::Body>, b: &Arc<S::Body>) -> bool {
        Arc::ptr_eq(a, b)
    }
    fn function_identity(func: &Arc<S::Body>) -> Option<usize> {
        Some(Arc::as_ptr(func).cast::<u8>() as usize)
    }
    fn same_as(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.functions, &other.functions)
    }
    fn skip_optimization(func: &Arc<S::Body>) -> bool {
        S::skip_optimization(func)
    }
    /// Writes the module and checks what was written ([`Shell::verify`]).
    fn verify(&self) -> Result<(), Diagnostics> {
        let written = self.write().map_err(|e| Diagnostic::error(e.to_string()))?;
        S::verify(&written)
    }
}
