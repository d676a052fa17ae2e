//! The error types: [`PassError`] for a failed run, and the errors of building pipelines
//! ([`BuildError`]), entering and leaving contexts ([`ContextError`]), the registry
//! ([`RegistryError`]) and config values ([`ConfigError`]).

use std::fmt;

use crate::location::Location;
use crate::suggest::did_you_mean;

/// The boxed error a pass or a hook returns. Any `std::error::Error + Send + Sync`, a `String`
/// or a `&str` converts into it with `?` or `.into()`.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// `Result` with [`BoxError`] as the default error: what passes and hooks return.
pub type Result<T, E = BoxError> = std::result::Result<T, E>;

/// Said by an "unknown name" error when no registered name is close: registrations exist only
/// for linked crates, so the name may belong to a library the program never named.
pub const LINK_HINT: &str = "a pass library registers its passes only when the final program \
names it in code: add `use irpass_passes as _;` (or the library's crate name) to it";

/// An instrument hook, as named in errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hook {
    /// `enter_pass_ctx`
    EnterPassCtx,
    /// `exit_pass_ctx`
    ExitPassCtx,
    /// `should_run`
    ShouldRun,
    /// `run_before_pass`
    RunBeforePass,
    /// `run_after_pass`
    RunAfterPass,
    /// `run_after_pass_failed`
    RunAfterPassFailed,
    /// `run_skipped_pass`
    RunSkippedPass,
}

impl Hook {
    /// The hook's method name.
    pub fn method_name(self) -> &'static str {
        match self {
            Hook::EnterPassCtx => "enter_pass_ctx",
            Hook::ExitPassCtx => "exit_pass_ctx",
            Hook::ShouldRun => "should_run",
            Hook::RunBeforePass => "run_before_pass",
            Hook::RunAfterPass => "run_after_pass",
            Hook::RunAfterPassFailed => "run_after_pass_failed",
            Hook::RunSkippedPass => "run_skipped_pass",
        }
    }
}

impl fmt::Display for Hook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.method_name())
    }
}

/// Why something failed: an error it returned, a panic, or a pipeline that could not be built.
#[derive(Debug, thiserror::Error)]
pub enum FailureCause {
    /// The pass or hook returned this error.
    #[error(transparent)]
    Error(BoxError),
    /// The pass or hook panicked with this message.
    #[error("panicked: {0}")]
    Panic(String),
    /// The pass's required passes could not be resolved.
    #[error(transparent)]
    Build(Box<BuildError>),
}

/// Who failed: a pass (possibly on one function) or an instrument in one of its hooks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Culprit {
    /// The pass itself.
    Pass {
        /// The pass's name.
        name: String,
        /// For a function pass, the function it failed on.
        function: Option<String>,
    },
    /// An instrument's hook.
    Instrument {
        /// The instrument's name.
        name: String,
        /// The hook that failed.
        hook: Hook,
    },
}

impl fmt::Display for Culprit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Culprit::Pass {
                name,
                function: None,
            } => write!(f, "pass `{name}`"),
            Culprit::Pass {
                name,
                function: Some(func),
            } => {
                write!(f, "pass `{name}` on function `{func}`")
            }
            Culprit::Instrument { name, hook } => write!(f, "instrument `{name}` in {hook}"),
        }
    }
}

/// A failure that happened while another was being handled; attached to the first one.
#[derive(Debug)]
pub struct SecondaryFailure {
    /// Who failed.
    pub culprit: Culprit,
    /// Why.
    pub cause: FailureCause,
}

impl fmt::Display for SecondaryFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} failed: {}", self.culprit, self.cause)
    }
}

fn write_secondary(f: &mut fmt::Formatter<'_>, also: &[SecondaryFailure]) -> fmt::Result {
    for s in also {
        write!(f, "; while handling it, {s}")?;
    }
    Ok(())
}

/// A pass run that failed: who failed, where in the pipeline, why, and the **last good module**
/// (the input of the failing pass), so nothing the caller had is lost.
///
/// ```
/// use irpass::doc_toy::{Toy, append, failing};
/// use irpass::{PassContext, Sequential};
///
/// let seq = Sequential::named("pipeline", [append("A", 0, 1), failing("Boom")]).unwrap();
/// let err = seq.run_in(Toy::with_main(), &PassContext::default()).unwrap_err();
/// assert_eq!(err.pass_name(), "Boom");
/// assert_eq!(err.path(), ["pipeline", "Boom"]);
/// assert_eq!(err.module().to_string(), "main = [1]\n"); // A's output survives
/// assert_eq!(err.to_string(), "pass `Boom` failed at `pipeline/Boom`: boom");
/// ```
///
/// The error is one pointer wide (its contents are boxed), so `Result<M, PassError<M>>` stays
/// small on the happy path.
pub struct PassError<M>(Box<Inner<M>>);

struct Inner<M> {
    culprit: Culprit,
    path: Vec<String>,
    cause: FailureCause,
    module: M,
    also: Vec<SecondaryFailure>,
}

impl<M> PassError<M> {
    pub(crate) fn new(culprit: Culprit, path: Vec<String>, cause: FailureCause, module: M) -> Self {
        PassError(Box::new(Inner {
            culprit,
            path,
            cause,
            module,
            also: Vec::new(),
        }))
    }

    pub(crate) fn build(info: &crate::PassInfo, err: BuildError, module: M) -> Self {
        let name = info.name.to_string();
        Self::new(
            Culprit::Pass {
                name: name.clone(),
                function: None,
            },
            vec![name],
            FailureCause::Build(Box::new(err)),
            module,
        )
    }

    pub(crate) fn attach(&mut self, secondary: SecondaryFailure) {
        self.0.also.push(secondary);
    }

    /// Who failed.
    pub fn culprit(&self) -> &Culprit {
        &self.0.culprit
    }

    /// The name of the pass that was running (for an instrument failure, the pass whose hook failed).
    pub fn pass_name(&self) -> &str {
        self.0.path.last().map(String::as_str).unwrap_or("")
    }

    /// The path of the failing pass in the pipeline, outermost first, ending with the pass.
    pub fn path(&self) -> &[String] {
        &self.0.path
    }

    /// Why it failed.
    pub fn cause(&self) -> &FailureCause {
        &self.0.cause
    }

    /// Whether the failure was a panic (caught and turned into this error).
    pub fn is_panic(&self) -> bool {
        matches!(self.0.cause, FailureCause::Panic(_))
    }

    /// Failures that happened while this one was being handled.
    pub fn secondary(&self) -> &[SecondaryFailure] {
        &self.0.also
    }

    /// The last good module: the input of the failing pass.
    pub fn module(&self) -> &M {
        &self.0.module
    }

    /// Takes the last good module out of the error.
    pub fn into_module(self) -> M {
        self.0.module
    }
}

impl<M> fmt::Display for PassError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.0.path.join("/");
        match (&self.0.culprit, &self.0.cause) {
            (Culprit::Pass { .. }, FailureCause::Build(err)) => {
                write!(f, "{} could not be built: {err}", self.0.culprit)?
            }
            (Culprit::Pass { .. }, FailureCause::Panic(msg)) => {
                write!(f, "{} panicked at `{path}`: {msg}", self.0.culprit)?
            }
            (Culprit::Pass { .. }, cause) => {
                write!(f, "{} failed at `{path}`: {cause}", self.0.culprit)?
            }
            (Culprit::Instrument { name, hook }, cause) => write!(
                f,
                "instrument `{name}` failed in {hook} for pass `{}` at `{path}`: {cause}",
                self.pass_name()
            )?,
        }
        write_secondary(f, &self.0.also)
    }
}

impl<M> std::error::Error for PassError<M> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0.cause)
    }
}

impl<M> fmt::Debug for PassError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PassError")
            .field("culprit", &self.0.culprit)
            .field("path", &self.0.path)
            .field("cause", &self.0.cause)
            .field("also", &self.0.also)
            .finish_non_exhaustive()
    }
}

/// A pipeline that cannot be built: a required pass that cannot be found, or a cycle.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A required pass is not registered for this IR.
    #[error("pass `{required_by}` requires a pass that is not available: {error}")]
    UnknownRequired {
        /// The pass whose requirement failed.
        required_by: String,
        /// The lookup failure (with the closest names and the link hint).
        error: RegistryError,
    },
    /// Required passes form a cycle.
    #[error("required passes form a cycle: {}", cycle.join(" -> "))]
    Cycle {
        /// The cycle, its first name repeated at the end (`A -> B -> A`).
        cycle: Vec<String>,
    },
    /// A pass named in a pipeline could not be found or built.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// A fixpoint ([`Sequential::fixpoint`](crate::Sequential::fixpoint)) with no round to run.
    #[error("a fixpoint needs at least one round (`fixpoint<N>` with N ≥ 1)")]
    NoRounds,
}

/// A registry problem: an unknown name, two definitions of one name, or bad pass options.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// No pass of this name is registered for the IR.
    #[error(
        "no pass named `{name}` is registered for IR `{ir}`{}{}",
        did_you_mean(suggestions),
        link_hint_text(*link_hint)
    )]
    UnknownPass {
        /// The name asked for.
        name: String,
        /// The IR's name.
        ir: &'static str,
        /// The closest registered names.
        suggestions: Vec<String>,
        /// Whether the message ends with [`LINK_HINT`]: set when no registered name is close
        /// (a near miss is a typo, not a missing library); a program that knows its libraries
        /// are linked (a driver) clears it with [`RegistryError::without_link_hint`].
        link_hint: bool,
    },
    /// No instrument of this name is registered.
    #[error(
        "no instrument named `{name}` is registered{}{}",
        did_you_mean(suggestions),
        link_hint_text(*link_hint)
    )]
    UnknownInstrument {
        /// The name asked for.
        name: String,
        /// The closest registered names.
        suggestions: Vec<String>,
        /// Whether the message ends with [`LINK_HINT`] (as for an unknown pass).
        link_hint: bool,
    },
    /// One name defined twice.
    #[error(transparent)]
    Duplicate(Box<Duplicate>),
    /// A registered pass could not be built (no default, or bad options).
    #[error("pass `{name}` cannot be built: {message}")]
    Construct {
        /// The pass's name.
        name: String,
        /// Why.
        message: String,
    },
}

impl RegistryError {
    /// The same error without the link hint, for a program whose libraries are known to be
    /// linked (a driver built with its pass library), where the hint would only mislead.
    pub fn without_link_hint(mut self) -> Self {
        match &mut self {
            RegistryError::UnknownPass { link_hint, .. }
            | RegistryError::UnknownInstrument { link_hint, .. } => *link_hint = false,
            _ => {}
        }
        self
    }
}

impl BuildError {
    /// The same error without the link hint (see [`RegistryError::without_link_hint`]).
    pub fn without_link_hint(self) -> Self {
        match self {
            BuildError::UnknownRequired { required_by, error } => BuildError::UnknownRequired {
                required_by,
                error: error.without_link_hint(),
            },
            BuildError::Registry(error) => BuildError::Registry(error.without_link_hint()),
            other => other,
        }
    }
}

fn link_hint_text(shown: bool) -> String {
    if shown {
        format!("; {LINK_HINT}")
    } else {
        String::new()
    }
}

/// One name with two definitions in the registry.
#[derive(Debug, thiserror::Error)]
#[error("{what} `{name}` is defined twice: at {first} and at {second}")]
pub struct Duplicate {
    /// What is defined twice (`pass for IR toy`, `instrument`, `config option`).
    pub what: String,
    /// The name.
    pub name: String,
    /// The first definition.
    pub first: Location,
    /// The second definition.
    pub second: Location,
}

impl Duplicate {
    pub(crate) fn error(
        what: impl Into<String>,
        name: &str,
        first: Location,
        second: Location,
    ) -> RegistryError {
        RegistryError::Duplicate(Box::new(Duplicate {
            what: what.into(),
            name: name.to_string(),
            first,
            second,
        }))
    }
}

/// A hook that failed while a context was entered, exited or had its instruments replaced.
#[derive(Debug)]
pub struct HookFailure {
    /// The instrument's name.
    pub instrument: String,
    /// The hook.
    pub hook: Hook,
    /// Why it failed.
    pub cause: FailureCause,
}

impl fmt::Display for HookFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "instrument `{}` failed in {}: {}",
            self.instrument, self.hook, self.cause
        )
    }
}

/// Entering or leaving a [`PassContext`](crate::PassContext) went wrong.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    /// An `enter_pass_ctx` or `exit_pass_ctx` hook failed. The context's instruments were cleared.
    #[error("{first}{}", secondary_hooks(also))]
    Hook {
        /// The first failure.
        first: HookFailure,
        /// Failures during the clean-up that followed.
        also: Vec<HookFailure>,
    },
    /// A scope was left while a scope entered after it was still active.
    #[error(
        "pass context scopes left out of order: a scope was exited while {inner} scope(s) entered \
         after it were still active; the stack was repaired{}",
        secondary_hooks(also)
    )]
    OutOfOrder {
        /// How many scopes were entered after it and still active.
        inner: usize,
        /// Exit hooks that failed too.
        also: Vec<HookFailure>,
    },
}

fn secondary_hooks(also: &[HookFailure]) -> String {
    also.iter()
        .map(|h| format!("; while handling it, {h}"))
        .collect()
}

/// A config value or key that is not valid.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The key is not registered.
    #[error(
        "unknown config key `{key}`{}; keys are declared with `pass_config_option!` (and a \
             library's keys exist only when the program names the library)",
        did_you_mean(suggestions)
    )]
    UnknownKey {
        /// The key.
        key: String,
        /// The closest registered keys.
        suggestions: Vec<String>,
    },
    /// The value does not decode as the key's type.
    #[error(
        "config `{key}` expects a value of type `{expected}`, but was given `{given}`: {reason}"
    )]
    InvalidValue {
        /// The key.
        key: String,
        /// The registered value type.
        expected: &'static str,
        /// The value as given.
        given: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A typed key used with another Rust type than the registered one.
    #[error("config `{key}` is registered with type `{registered}`, but was used as `{used}`")]
    TypeMismatch {
        /// The key.
        key: String,
        /// The registered type.
        registered: &'static str,
        /// The type used.
        used: &'static str,
    },
    /// The key is registered twice.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// An optimisation level above the highest.
    #[error(
        "opt level {level} is out of range: levels go from 0 to {max} (a pass runs when its own \
         level, 0 to {max}, is at most the context's)",
        max = crate::context::MAX_OPT_LEVEL
    )]
    OptLevel {
        /// The level given.
        level: u32,
    },
}
