//! The IR abstraction: what an IR gives the framework ([`IrModule`]) and the object-safe view
//! that instruments see ([`ModuleView`]).

use std::any::Any;
use std::fmt;
use std::hash::{Hash, Hasher};

use crate::diagnostics::Diagnostics;

/// The one trait an IR implements to use irpass.
///
/// A module is a set of functions, each identified by a [key](IrModule::Key) the IR chooses
/// (a name, an id, an index), plus whatever else the IR keeps beside them. It must be cheap to
/// clone (copy-on-write: functions behind `Arc`), so that the framework can keep the last good
/// module of a pipeline without copying the IR, and it must say in O(1) per function whether a
/// function is still the very same value ([`IrModule::same_function`], usually `Arc::ptr_eq`),
/// so that the runner knows whether a pass changed the module without printing or hashing it.
///
/// # Example
///
/// ```
/// use std::{collections::BTreeMap, fmt, sync::Arc};
/// use irpass::IrModule;
///
/// /// A toy IR: each function is a list of integers.
/// #[derive(Clone, Default)]
/// struct Toy(Arc<BTreeMap<String, Arc<Vec<i64>>>>);
///
/// impl fmt::Display for Toy {
///     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
///         for (name, body) in self.0.iter() {
///             writeln!(f, "{name} = {body:?}")?;
///         }
///         Ok(())
///     }
/// }
///
/// impl IrModule for Toy {
///     type Key = str;
///     type Function = Arc<Vec<i64>>;
///     fn ir_name() -> &'static str { "toy" }
///     fn functions(&self) -> impl Iterator<Item = (&str, &Self::Function)> {
///         self.0.iter().map(|(name, body)| (name.as_str(), body))
///     }
///     fn replace_function(&mut self, name: &str, func: Self::Function) {
///         Arc::make_mut(&mut self.0).insert(name.to_string(), func);
///     }
///     fn same_function(a: &Self::Function, b: &Self::Function) -> bool {
///         Arc::ptr_eq(a, b)
///     }
///     fn same_as(&self, other: &Self) -> bool {
///         Arc::ptr_eq(&self.0, &other.0)
///     }
/// }
///
/// let mut m = Toy::default();
/// m.replace_function("main", Arc::new(vec![1, 2]));
/// assert_eq!(m.function_count(), 1);
/// assert!(m.same_as(&m.clone()));
/// ```
pub trait IrModule: Clone + Send + Sync + fmt::Display + 'static {
    /// How the IR identifies a function: `str` for an IR whose functions are named (the
    /// reference IR), or an id of the IR's own (walrus's `FunctionId`, wrapped to print a name).
    /// Function passes receive it, the runner puts changed functions back by it, and its
    /// `Display` is the function's name in messages (a failing pass's error, listings).
    /// Unsized keys are borrowed (`&str`) and owned through [`ToOwned`] (`String`).
    type Key: ?Sized
        + PartialEq
        + fmt::Display
        + ToOwned<Owned: Send + Sync + 'static>
        + Send
        + Sync
        + 'static;

    /// The type of one function of the module (a function with a body).
    type Function: Clone + Send + Sync + 'static;

    /// A short name for the IR (`"relay"`, `"toy"`), shown in listings and errors.
    fn ir_name() -> &'static str;

    /// The functions of the module that have a body, with their keys, in a deterministic
    /// order (the same order every time for the same module). Function passes run on these.
    fn functions(&self) -> impl Iterator<Item = (&Self::Key, &Self::Function)>;

    /// The functions the module declares without a body (imports, external declarations), by
    /// key. Function passes never see them; module passes and listings do. The default is none.
    fn declarations(&self) -> impl Iterator<Item = &Self::Key> {
        std::iter::empty()
    }

    /// Replaces the function `key` (which exists) by `func`.
    fn replace_function(&mut self, key: &Self::Key, func: Self::Function);

    /// Whether `a` and `b` are the very same function value (pointer identity). Must be O(1).
    fn same_function(a: &Self::Function, b: &Self::Function) -> bool;

    /// A number that identifies `func` while it is alive: two live functions with the same key
    /// are [`same_function`](IrModule::same_function) (for an `Arc`, its address). The
    /// [analysis cache](crate::analysis) keys function analyses by it and keeps a clone of the
    /// function beside each entry, so a key is never reused while its entry exists. `None`
    /// (the default) means "no identity": function analyses are then computed on every request.
    fn function_identity(_func: &Self::Function) -> Option<usize> {
        None
    }

    /// The number of functions. The default counts [`IrModule::functions`].
    fn function_count(&self) -> usize {
        self.functions().count()
    }

    /// Whether `self` and `other` are the same module value, i.e. no pass changed anything
    /// between them. The default compares the functions pairwise with
    /// [`IrModule::same_function`], which is O(1) per function; an IR that keeps its function
    /// table behind an `Arc` can answer in O(1).
    fn same_as(&self, other: &Self) -> bool {
        let mut a = self.functions();
        let mut b = other.functions();
        loop {
            match (a.next(), b.next()) {
                (None, None) => return true,
                (Some((na, fa)), Some((nb, fb))) => {
                    if na != nb || !Self::same_function(fa, fb) {
                        return false;
                    }
                }
                _ => return false,
            }
        }
    }

    /// Whether function passes must leave `func` alone (the `SkipOptimization` attribute).
    fn skip_optimization(_func: &Self::Function) -> bool {
        false
    }

    /// Checks that the module is well formed (what `VerifyEach` runs after every pass).
    fn verify(&self) -> Result<(), Diagnostics> {
        Ok(())
    }

    /// A hash of the module's structure. The default hashes the printed text, which is correct
    /// for an IR whose text form is canonical; an IR with a real structural hash overrides it.
    fn structural_hash(&self) -> u64 {
        let mut hasher = rustc_hash::FxHasher::default();
        self.to_string().hash(&mut hasher);
        hasher.finish()
    }
}

/// The IR-agnostic, object-safe view of a module that instruments see.
///
/// Every [`IrModule`] is a `ModuleView`; an instrument that knows the IR can downcast with
/// [`downcast_ref`](trait.ModuleView.html#method.downcast_ref). The methods that mirror
/// [`IrModule`]'s carry a `dyn_` prefix, so that calls on a concrete module are never ambiguous.
pub trait ModuleView: fmt::Display + Send + Sync {
    /// The module as `Any`, for downcasting.
    fn as_any(&self) -> &dyn Any;
    /// The IR's name ([`IrModule::ir_name`]).
    fn ir_name(&self) -> &'static str;
    /// The number of functions.
    fn dyn_function_count(&self) -> usize;
    /// The names (keys, printed) of the functions with a body, in the module's order.
    fn function_names(&self) -> Vec<String>;
    /// The names of the functions declared without a body ([`IrModule::declarations`]).
    fn declaration_names(&self) -> Vec<String>;
    /// Runs [`IrModule::verify`].
    fn dyn_verify(&self) -> Result<(), Diagnostics>;
    /// Runs [`IrModule::structural_hash`].
    fn dyn_structural_hash(&self) -> u64;
    /// Whether `other` is the same module value (same IR and [`IrModule::same_as`]).
    fn dyn_same_as(&self, other: &dyn ModuleView) -> bool;
    /// A cheap copy of the module (copy-on-write), for instruments that keep a module around.
    fn clone_view(&self) -> Box<dyn ModuleView>;
}

impl<M: IrModule> ModuleView for M {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn ir_name(&self) -> &'static str {
        M::ir_name()
    }
    fn dyn_function_count(&self) -> usize {
        IrModule::function_count(self)
    }
    fn function_names(&self) -> Vec<String> {
        self.functions().map(|(key, _)| key.to_string()).collect()
    }
    fn declaration_names(&self) -> Vec<String> {
        self.declarations().map(ToString::to_string).collect()
    }
    fn dyn_verify(&self) -> Result<(), Diagnostics> {
        IrModule::verify(self)
    }
    fn dyn_structural_hash(&self) -> u64 {
        IrModule::structural_hash(self)
    }
    fn dyn_same_as(&self, other: &dyn ModuleView) -> bool {
        other
            .as_any()
            .downcast_ref::<M>()
            .is_some_and(|other| IrModule::same_as(self, other))
    }
    fn clone_view(&self) -> Box<dyn ModuleView> {
        Box::new(self.clone())
    }
}

impl dyn ModuleView + '_ {
    /// The module as the concrete IR type `M`, if it is one.
    pub fn downcast_ref<M: IrModule>(&self) -> Option<&M> {
        self.as_any().downcast_ref::<M>()
    }
}

impl fmt::Debug for dyn ModuleView + '_ {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModuleView")
            .field("ir", &self.ir_name())
            .field("functions", &self.dyn_function_count())
            .finish()
    }
}
