//! `irpass-opt`: reads the reference IR's text, runs `-O0..-O3` or a textual pipeline, writes
//! the result. With no input file it optimises a built-in model (the MLP of
//! `examples/models/mlp.relay`) and says so. `irpass-opt --help` lists the flags.

use std::process::ExitCode;

use irpass::driver::Driver;
use irpass_ir::Module;
use irpass_passes as _;

fn main() -> ExitCode {
    Driver::<Module> {
        name: "irpass-opt",
        parse: |source, text| Module::parse_named(source, text).map_err(Into::into),
        print: |m| m.to_string(),
        default_input: Some((
            "mlp.relay",
            // A copy of `examples/models/mlp.relay` inside the crate, so the published package has it
            // (`passes/tests/cli.rs` checks that the two stay the same).
            include_str!("mlp.relay"),
        )),
        dot: Some(irpass_ir::module_dot),
        version: Some(env!("CARGO_PKG_VERSION")),
    }
    .main()
}
