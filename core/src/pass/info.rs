//! [`PassInfo`]: the metadata every pass carries.

use std::borrow::Cow;
use std::fmt;

/// What kind of pass a [`PassInfo`] describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum PassKind {
    /// Sees and returns the whole module; may add and delete functions.
    Module,
    /// Rewrites one function at a time; the framework maps it over the module.
    Function,
    /// An ordered list of passes.
    Sequential,
}

impl fmt::Display for PassKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PassKind::Module => "module",
            PassKind::Function => "function",
            PassKind::Sequential => "sequential",
        })
    }
}

/// The metadata of a pass: name, optimisation level, required passes, description and kind.
///
/// All fields are `Cow<'static, ..>` so that the macros can build a `PassInfo` in a `static`
/// (see [`PassInfo::new_static`]) while code can still build one at run time.
///
/// ```
/// use irpass::{PassInfo, PassKind};
/// let info = PassInfo::new("FoldConstant", 2, PassKind::Function)
///     .with_required(["InferType"])
///     .with_description("Folds expressions whose inputs are all constants.");
/// assert_eq!(info.required_names().collect::<Vec<_>>(), ["InferType"]);
/// assert_eq!(info.to_string(), "FoldConstant (function pass, opt_level 2, requires InferType)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PassInfo {
    /// The pass's name, unique per IR in the registry.
    pub name: Cow<'static, str>,
    /// The lowest context `opt_level` at which a Sequential runs the pass.
    pub opt_level: u32,
    /// Names of the passes that must run before this one.
    pub required: Cow<'static, [Cow<'static, str>]>,
    /// What the pass does (its doc comment when defined with the macros).
    pub description: Cow<'static, str>,
    /// Names of the [analyses](crate::analysis) whose cached results stay valid after the
    /// pass even where it changed the IR (besides those of functions it left alone, which
    /// always stay).
    pub preserves: Cow<'static, [Cow<'static, str>]>,
    /// Module, function or sequential.
    pub kind: PassKind,
}

impl PassInfo {
    /// A `PassInfo` with no requirements and no description.
    pub fn new(name: impl Into<Cow<'static, str>>, opt_level: u32, kind: PassKind) -> Self {
        PassInfo {
            name: name.into(),
            opt_level,
            required: Cow::Borrowed(&[]),
            description: Cow::Borrowed(""),
            preserves: Cow::Borrowed(&[]),
            kind,
        }
    }

    /// A `PassInfo` from static data, usable in a `static` item (what the macros generate).
    pub const fn new_static(
        name: &'static str,
        opt_level: u32,
        kind: PassKind,
        required: &'static [Cow<'static, str>],
        description: &'static str,
    ) -> Self {
        Self::new_static_preserving(name, opt_level, kind, required, &[], description)
    }

    /// [`PassInfo::new_static`] with the [analyses](crate::analysis) the pass preserves (what
    /// the macros' `preserves = [...]` generates).
    pub const fn new_static_preserving(
        name: &'static str,
        opt_level: u32,
        kind: PassKind,
        required: &'static [Cow<'static, str>],
        preserves: &'static [Cow<'static, str>],
        description: &'static str,
    ) -> Self {
        PassInfo {
            name: Cow::Borrowed(name),
            opt_level,
            required: Cow::Borrowed(required),
            description: Cow::Borrowed(description),
            preserves: Cow::Borrowed(preserves),
            kind,
        }
    }

    /// The same info preserving these analyses (see [`PassInfo::preserves`]).
    pub fn with_preserves<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<Cow<'static, str>>,
    {
        self.preserves = Cow::Owned(names.into_iter().map(Into::into).collect());
        self
    }

    /// Whether the pass preserves the analysis called `name`.
    pub fn preserves(&self, name: &str) -> bool {
        self.preserves.iter().any(|p| p == name)
    }

    /// The same info with these required pass names.
    pub fn with_required<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<Cow<'static, str>>,
    {
        self.required = Cow::Owned(names.into_iter().map(Into::into).collect());
        self
    }

    /// The same info with this description.
    pub fn with_description(mut self, description: impl Into<Cow<'static, str>>) -> Self {
        self.description = description.into();
        self
    }

    /// The names of the required passes.
    pub fn required_names(&self) -> impl Iterator<Item = &str> {
        self.required.iter().map(|name| name.as_ref())
    }

    /// The first line of the description (what listings show).
    pub fn summary(&self) -> &str {
        self.description
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("")
    }
}

impl fmt::Display for PassInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({} pass, opt_level {}",
            self.name, self.kind, self.opt_level
        )?;
        if !self.required.is_empty() {
            let names: Vec<&str> = self.required_names().collect();
            write!(f, ", requires {}", names.join(", "))?;
        }
        f.write_str(")")
    }
}
