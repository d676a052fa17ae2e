//! What the `irpass-opt` tests share: the binary, where the models are, and output as text.
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
