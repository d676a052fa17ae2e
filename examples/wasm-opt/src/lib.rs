//! A small `wasm-opt` on [walrus]: irpass hosting an IR it was not written for.
//!
//! [`Wasm`] is the adapter (walrus's module as an [`irpass::IrModule`], functions identified
//! by walrus's ids); [`passes`] holds constant folding, a vacuum, strength reduction with
//! options, dead-function removal with a config key and a pass that adds locals through module
//! edits; [`pipelines`] registers `O0`–`O3`; the binary `wasm-opt` is irpass's driver on it.
//!
//! ```
//! use irpass::{IrModule, Pass};
//! use irpass_wasm_opt::passes::FoldConstants;
//!
//! let m = irpass_wasm_opt::parse(r#"(module (func (export "f") (result i32)
//!     i32.const 2 i32.const 3 i32.add))"#).unwrap();
//! let out = Pass::from(FoldConstants).run(m).unwrap();
//! assert!(out.to_string().contains("i32.const 5"));
//! assert!(out.verify().is_ok());
//! ```

pub mod check;
mod module;
pub mod passes;
pub mod pipelines;

pub use module::{Body, FuncKey, Seq, Wasm, WasmShell, parse, read};
