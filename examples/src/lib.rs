//! Runnable examples of irpass, one idea each (`cargo run -p irpass-examples --example NAME`;
//! each asserts its own result). This library is empty; the examples are in `examples/`:
//!
//! - `timed_pipeline`: bring your own IR (a stack machine) with hand-written passes, a nested
//!   Sequential, `PassTiming` and `PrintAfterAll`;
//! - `custom_function_pass`: a `#[function_pass]` on the reference IR, checked by the
//!   interpreter;
//! - `module_pass_add_function`: a `#[module_pass]` that adds a function (TVM's `abs` example);
//! - `parameterised_pass`: an impl-block pass built from options by the registry;
//! - `custom_instrument`: a `#[pass_instrument]` with `&mut self` hooks around `O3`;
//! - `config_option`: `pass_config_option!` read by a pass;
//! - `downstream_registry`: naming `irpass_passes` to link it, and listing its passes;
//! - `pipeline_from_text`: a textual pipeline (nested Sequential, options) run on a model;
//! - `bring_your_own_ir`: an IR of the example's own with macro-defined passes registered for it.
//!
//! The models (`models/*.relay`) are the reference IR's test and benchmark programs.
