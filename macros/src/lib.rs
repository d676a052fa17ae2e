//! Procedural macros for irpass. Not yet written: the macros are the subject of their own issue
//! (`#[module_pass]`, `#[function_pass]`, `#[pass_instrument]`, `pass_config_option!`). Until
//! then, passes implement `irpass::ModulePass` / `irpass::FunctionPass` by hand and register
//! with `inventory::submit!` through `irpass::__private`.
