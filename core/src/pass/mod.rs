//! Passes: [`PassInfo`], the [`ModulePass`] and [`FunctionPass`] traits, the [`Pass`] value,
//! [`Sequential`], and the runner that executes them all.

mod function_map;
mod handle;
mod info;
mod print_ir;
mod resolve;
mod runner;
mod sequential;
mod traits;
mod typed;

pub use handle::Pass;
pub use info::{PassInfo, PassKind};
pub use print_ir::PrintIr;
pub use sequential::{DEFAULT_MAX_ROUNDS, DEFAULT_SEQUENTIAL_NAME, FIXPOINT_NAME, Sequential};
pub use traits::{FunctionPass, ModuleEdit, ModuleEdits, ModulePass, Requirement};
pub use typed::DefaultPass;
