//! `wasm-opt`: irpass's driver on WebAssembly (text in and out; `.wasm` with `-o x.wasm` or
//! `--emit wasm`).

use std::process::ExitCode;

use irpass::driver::{Driver, Format, Written};
use irpass_wasm_opt::{Wasm, check::check};

/// The binary format: `.wasm`, recognised by its magic number.
static FORMATS: &[Format<Wasm>] = &[Format {
    name: "wasm",
    extension: "wasm",
    detect: |_, bytes| bytes.starts_with(b"\0asm"),
    read: |_, _, bytes, _| irpass_wasm_opt::read(&bytes),
    write: |m, _| Ok(Written::from(m.write()?)),
    flags: &[],
}];

/// The input when none is given: one function of each thing the passes do.
const DEFAULT_INPUT: &str = r#"(module
  (func $unused (result i32) i32.const 1)
  (func (export "scaled") (param $x i32) (result i32)
    local.get $x i32.const 2 i32.const 3 i32.add i32.mul
    local.get $x i32.const 8 i32.div_u i32.add)
  (func (export "square") (param $x i32) (result i32)
    nop
    local.get $x i32.const 1 i32.add local.get $x i32.const 1 i32.add i32.mul))
"#;

fn main() -> ExitCode {
    Driver::<Wasm> {
        name: "wasm-opt",
        about: "wasm-opt: irpass's driver on WebAssembly (walrus)",
        parse: |_, text| irpass_wasm_opt::parse(text),
        print: |m| m.to_string(),
        default_input: Some(("a small module", DEFAULT_INPUT)),
        dot: None,
        version: Some(env!("CARGO_PKG_VERSION")),
        operators: None,
        formats: FORMATS,
        check: Some(check),
    }
    .main()
}
