//! The text format: Relay's (v0.0.5) plus inline tensor literals (`Tensor[(2), float32]{1, 2}`).
//! Both halves live here: the printer ([`function_text`], what a module's `Display` writes) and
//! the parser ([`parse_functions`], what [`Module::parse`](crate::Module::parse) reads). Printing
//! then parsing gives a structurally equal module, floats bit-exact, sharing kept. Neither half
//! recurses as deep as the input nests.
//!
//! ```
//! use irpass_ir::text::{function_text, parse_functions};
//! let text = "def @main(%x: float32) -> float32 {\n  %0 = exp(%x);\n  add(%0, %0)\n}\n";
//! let parsed = parse_functions("<example>", text).unwrap();
//! let f = &parsed[0];
//! assert_eq!(function_text(&f.name, &f.function, f.ret_type.as_ref(), &f.attrs), text);
//! ```

mod names;
pub(crate) mod parse;
mod print;
#[cfg(test)]
mod tests;

pub use names::constant_text;
pub use parse::{ParsedFunction, parse_functions};
pub use print::function_text;
