//! What the `irpass-opt` tests share: the binary, where the models are, output as text, and
//! `O3` run in-process.
//! (Each test file compiles this module; not every one uses every helper.)

use std::process::{Command, Output, Stdio};

/// The `irpass-opt` binary built for these tests.
pub fn irpass_opt() -> Command {
    Command::new(env!("CARGO_BIN_EXE_irpass-opt"))
}

/// Runs `irpass-opt ARGS` with nothing on stdin (so the built-in input or the named file is
/// read) and collects its output.
#[allow(dead_code)]
pub fn opt(args: &[&str]) -> Output {
    irpass_opt()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The path of `examples/models/NAME.relay`.
#[allow(dead_code)]
pub fn model(name: &str) -> String {
    format!(
        "{}/../../examples/models/{name}.relay",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// Process output as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `m` through the registered `O3` pipeline at opt level 3.
#[allow(dead_code)]
pub fn o3(m: irpass_passes::ir::Module) -> irpass_passes::ir::Module {
    let ctx = irpass::PassContext::builder().opt_level(3).build().unwrap();
    irpass::registry::lookup::<irpass_passes::ir::Module>("O3")
        .unwrap()
        .run_in(m, &ctx)
        .unwrap_or_else(|e| panic!("{e}"))
}
