//! A small IR of the tests' own ("tiny"), hand-written passes and a tracing instrument, shared
//! by the integration tests of the framework.
//!
//! The passes here are written against the traits, without the macros, so the framework's
//! rules are tested on their own; the registrations use `irpass::__private::inventory` exactly
//! as the macros will.

pub mod passes;
pub mod tiny;
pub mod trace;

pub use passes::*;
pub use tiny::{Func, Tiny};
pub use trace::{Fault, FaultMode, Trace};
