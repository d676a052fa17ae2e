//! [`Sequential`]: an ordered, nestable list of passes with its own [`PassInfo`].

use rustc_hash::FxHashSet;
use std::borrow::Cow;
use std::sync::Arc;

use super::handle::Repr;
use super::resolve::{Step, collect_watched, resolve};
use super::{Pass, PassInfo, PassKind};
use crate::error::{BuildError, PassError};
use crate::{IrModule, PassContext};

/// The default name of a [`Sequential`], as in TVM.
pub const DEFAULT_SEQUENTIAL_NAME: &str = "sequential";

/// The name of a [`Sequential::fixpoint`], and its word in pipeline text.
pub const FIXPOINT_NAME: &str = "fixpoint";

/// The bound of a `fixpoint(...)` in pipeline text that gives none.
pub const DEFAULT_MAX_ROUNDS: u32 = 16;

/// An ordered list of passes, itself a pass (default name `sequential`, opt_level 0).
///
/// Required passes are resolved when the Sequential is built, so a missing pass or a cycle is
/// an error here rather than half-way through a run. Inside a Sequential, a pass runs when it is
/// enabled by the context (see [`PassContext::is_enabled`]); the outermost Sequential always runs.
///
/// ```
/// use irpass::doc_toy::{Toy, append};
/// use irpass::{PassContext, Sequential};
///
/// let seq = Sequential::new([append("A", 1, 7), append("B", 3, 9)]).unwrap();
/// let ctx = PassContext::builder().opt_level(2).build().unwrap();
/// let out = seq.run_in(Toy::with_main(), &ctx).unwrap();
/// assert_eq!(out.to_string(), "main = [7]\n"); // B (opt_level 3) is skipped at -O2
/// ```
pub struct Sequential<M: IrModule> {
    inner: Arc<SequentialInner<M>>,
}

pub(crate) struct SequentialInner<M: IrModule> {
    pub info: PassInfo,
    pub steps: Vec<Step<M>>,
    /// For a fixpoint ([`Sequential::fixpoint`]): the most rounds it runs.
    pub max_rounds: Option<u32>,
    /// Names required somewhere below: the runner records when such passes run.
    pub watched: FxHashSet<Cow<'static, str>>,
}

impl<M: IrModule> Sequential<M> {
    /// A Sequential named `sequential` at opt_level 0.
    pub fn new(passes: impl IntoIterator<Item = Pass<M>>) -> Result<Self, BuildError> {
        Self::with_info(
            PassInfo::new(DEFAULT_SEQUENTIAL_NAME, 0, PassKind::Sequential),
            passes,
        )
    }

    /// A Sequential with a name, at opt_level 0.
    pub fn named(
        name: impl Into<Cow<'static, str>>,
        passes: impl IntoIterator<Item = Pass<M>>,
    ) -> Result<Self, BuildError> {
        Self::with_info(PassInfo::new(name, 0, PassKind::Sequential), passes)
    }

    /// A Sequential with full metadata (its `kind` is set to [`PassKind::Sequential`]).
    pub fn with_info(
        mut info: PassInfo,
        passes: impl IntoIterator<Item = Pass<M>>,
    ) -> Result<Self, BuildError> {
        info.kind = PassKind::Sequential;
        let mut steps = Vec::new();
        let mut watched = FxHashSet::default();
        for pass in passes {
            let step = resolve(&pass)?;
            collect_watched(&step, &mut watched);
            steps.push(step);
        }
        if !info.required.is_empty() {
            // The Sequential's own requirements (rare) must resolve too.
            let own = Pass::<M>(Repr::Sequential(Arc::new(SequentialInner {
                info: info.clone(),
                steps: Vec::new(),
                max_rounds: None,
                watched: FxHashSet::default(),
            })));
            collect_watched(&resolve(&own)?, &mut watched);
        }
        Ok(Sequential {
            inner: Arc::new(SequentialInner {
                info,
                steps,
                max_rounds: None,
                watched,
            }),
        })
    }

    /// A Sequential that runs its passes again and again until a round leaves the module as it
    /// was (`wasm-opt --converge`; LLVM's `repeat<N>` runs a fixed count), at most `max_rounds`
    /// rounds: a round that still changes the module after that is an error that names the
    /// bound and carries the module as the last round left it. Its name is `fixpoint`, as in
    /// pipeline text (`fixpoint<N>(A,B)`; [`DEFAULT_MAX_ROUNDS`] without `<N>`).
    ///
    /// "Unchanged" is [`IrModule::same_as`]: the passes must give the module back as it came
    /// when they change nothing, as the runner's change detection asks of every pass.
    ///
    /// ```
    /// use irpass::doc_toy::{Toy, append};
    /// use irpass::{PassContext, Sequential};
    ///
    /// // A pass that always changes the module never converges: the bound is the error.
    /// let seq = Sequential::fixpoint([append("A", 0, 1)], 3).unwrap();
    /// let err = seq.run_in(Toy::with_main(), &PassContext::default()).unwrap_err();
    /// assert!(err.to_string().contains("no fixpoint within 3 rounds"), "{err}");
    /// assert_eq!(err.module().to_string(), "main = [1, 1, 1]\n");
    /// ```
    ///
    /// # Errors
    /// A required pass that does not resolve, or `max_rounds` of 0.
    pub fn fixpoint(
        passes: impl IntoIterator<Item = Pass<M>>,
        max_rounds: u32,
    ) -> Result<Self, BuildError> {
        if max_rounds == 0 {
            return Err(BuildError::NoRounds);
        }
        let seq = Self::named(FIXPOINT_NAME, passes)?;
        let inner = Arc::into_inner(seq.inner).expect("just built");
        Ok(Sequential {
            inner: Arc::new(SequentialInner {
                max_rounds: Some(max_rounds),
                ..inner
            }),
        })
    }

    /// The most rounds a fixpoint runs (`None` for a plain Sequential).
    pub fn max_rounds(&self) -> Option<u32> {
        self.inner.max_rounds
    }

    /// The Sequential's metadata.
    pub fn info(&self) -> &PassInfo {
        &self.inner.info
    }

    /// The passes, in order.
    pub fn passes(&self) -> impl ExactSizeIterator<Item = &Pass<M>> {
        self.inner.steps.iter().map(|s| &s.pass)
    }

    /// This Sequential as a [`Pass`] (an `Arc` clone), to nest it or store it.
    pub fn to_pass(&self) -> Pass<M> {
        Pass(Repr::Sequential(self.inner.clone()))
    }

    /// Runs the Sequential under [`PassContext::current()`].
    pub fn run(&self, module: M) -> Result<M, PassError<M>> {
        self.to_pass().run(module)
    }

    /// Runs the Sequential under `ctx`.
    pub fn run_in(&self, module: M, ctx: &PassContext) -> Result<M, PassError<M>> {
        self.to_pass().run_in(module, ctx)
    }
}

impl<M: IrModule> Clone for Sequential<M> {
    fn clone(&self) -> Self {
        Sequential {
            inner: self.inner.clone(),
        }
    }
}

impl<M: IrModule> From<Sequential<M>> for Pass<M> {
    fn from(seq: Sequential<M>) -> Self {
        Pass(Repr::Sequential(seq.inner))
    }
}

impl<M: IrModule> std::fmt::Debug for Sequential<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.to_pass().fmt(f)
    }
}
