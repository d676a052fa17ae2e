//! A small IR of the tests' own ("tiny"), hand-written passes and a tracing instrument, shared
//! by the integration tests of the framework.
//!
//! The pass builders of [`passes`] are written against the traits, without the macros, so the
//! framework's rules are tested on their own; the passes the tests find by name
//! ([`registered`]) and the mirrors of [`macro_passes`] are defined with the macros.

pub mod macro_passes;
pub mod passes;
pub mod registered;
pub mod tiny;
pub mod trace;

pub use passes::*;
pub use registered::{LEVEL, LIMIT, LimitConfig, UNREGISTERED};
pub use tiny::{Func, Tiny};
pub use trace::{Fault, FaultMode, Trace};
