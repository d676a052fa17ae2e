//! Textual pipelines: `FoldConstant,opt(SimplifyExpr,EliminateCommonSubexpr),ReplaceFunc{target=main}`.
//!
//! - A name is a pass from the registry (for the IR the pipeline is built for), including
//!   named pipelines such as `O2`.
//! - `name(a,b,...)` is a nested Sequential called `name`.
//! - `Name{key=value,...}` gives options, decoded with serde into a parameterised pass; values
//!   are numbers, `true`/`false`, quoted strings, bare words (strings) or lists `[a,b]`.
//! - `fixpoint<N>(a,b,...)` runs its passes in rounds until one leaves the module as it was,
//!   at most `N` rounds (an error names the bound); `fixpoint(a,b)` at most
//!   [`DEFAULT_MAX_ROUNDS`](crate::DEFAULT_MAX_ROUNDS) ([`Sequential::fixpoint`](crate::Sequential::fixpoint)).
//!
//! [`parse`] gives a [`PipelineSpec`], which prints back to text that parses to the same spec,
//! and [`PipelineSpec::build`] looks the passes up. Errors give the column and what was
//! expected; unknown names suggest the closest registered names and the link idiom.
//!
//! ```
//! use irpass::doc_toy::Toy;
//! let spec = irpass::pipeline::parse("outer(A, B{n=2, mode=fast}), C").unwrap();
//! assert_eq!(spec.to_string(), "outer(A,B{n=2,mode=fast}),C");
//! let err = irpass::pipeline::parse("A,,B").unwrap_err();
//! assert_eq!(err.column, 3);
//! ```

mod parse;
mod spec;

pub use parse::{PipelineError, parse};
pub use spec::{BuildPipelineError, OptionValue, PipelineSpec, Step};
