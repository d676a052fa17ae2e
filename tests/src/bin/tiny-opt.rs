//! The driver for the tests' own IR (`tiny`): proves the driver is generic, and gives the
//! tests a pass that panics (`Explode`) to check the driver's handling of it.

use std::process::ExitCode;

use irpass::driver::Driver;
use irpass_tests::Tiny;

fn main() -> ExitCode {
    Driver::<Tiny> {
        name: "tiny-opt",
        parse: |_, text| Tiny::parse(text),
        print: |m| m.to_string(),
        default_input: Some(("two functions", "def @main: [1, 2]\ndef @other: [3]\n")),
        dot: None,
        version: Some(env!("CARGO_PKG_VERSION")),
        formats: &[],
        about: "tiny-opt: the driver on a toy IR",
        operators: None,
        check: None,
    }
    .main()
}
