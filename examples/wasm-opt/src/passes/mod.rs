//! The passes: each in its own module, registered for [`Wasm`](crate::Wasm) by its macro (or
//! by `register_pass!` for the one written against the trait).

mod dead_functions;
mod fold_constants;
mod int;
mod local_cse;
mod strength_reduce;
mod vacuum;

pub use dead_functions::{DeadFunctions, KEEP_FUNCTIONS};
pub use fold_constants::FoldConstants;
pub use local_cse::LocalCse;
pub use strength_reduce::StrengthReduce;
pub use vacuum::Vacuum;
