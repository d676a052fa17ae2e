//! Why a pass did not run: what [`PassInstrument::run_skipped_pass`](super::PassInstrument::run_skipped_pass) is told.

use std::fmt;

/// Why a pass of a Sequential did not run (LLVM's `BeforeSkippedPass`, with the reason).
///
/// ```
/// use irpass::instrument::SkipReason;
/// let r = SkipReason::OptLevel { pass: 3, context: 2 };
/// assert_eq!(r.to_string(), "its opt level 3 is above the context's 2");
/// assert_eq!(SkipReason::Disabled.to_string(), "the context disables it");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkipReason {
    /// The pass's opt level is above the context's (and the context does not require it).
    OptLevel {
        /// The pass's opt level.
        pass: u32,
        /// The context's opt level.
        context: u32,
    },
    /// The context's `disabled_pass` names it.
    Disabled,
    /// An instrument's `should_run` said no.
    Vetoed {
        /// The first instrument that said no.
        by: String,
    },
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::OptLevel { pass, context } => {
                write!(f, "its opt level {pass} is above the context's {context}")
            }
            SkipReason::Disabled => f.write_str("the context disables it"),
            SkipReason::Vetoed { by } => write!(f, "instrument `{by}` said it should not run"),
        }
    }
}
