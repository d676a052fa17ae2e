//! The example's `wasm-opt`: irpass's driver on WebAssembly, from the command line.

use std::process::{Command, Output};

fn wasm_opt(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wasm-opt"))
        .args(args)
        .output()
        .expect("runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/corpus.wat");

#[test]
fn it_reads_text_and_writes_valid_binary_wasm_by_extension() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.wasm");
    let run = wasm_opt(&["-O3", CORPUS, "-o", out.to_str().unwrap()]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let bytes = std::fs::read(&out).unwrap();
    wasmparser::Validator::new().validate_all(&bytes).unwrap();
    // And the binary reads back (recognised by its magic number), through the same driver.
    let again = wasm_opt(&["-O0", "--emit", "text", out.to_str().unwrap()]);
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert!(text(&again.stdout).starts_with("(module"));
    assert!(irpass_wasm_opt::read(&bytes).is_ok());
}

#[test]
fn check_runs_both_modules_and_says_they_agree() {
    let run = wasm_opt(&["-O3", "--check", "16", CORPUS]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        text(&run.stderr).contains("calls of 11 exports agree"),
        "{}",
        text(&run.stderr)
    );
}

#[test]
fn flags_no_format_of_it_declares_are_refused() {
    for flag in ["--opset=13", "--external-data=1024"] {
        let run = wasm_opt(&[flag, CORPUS]);
        assert_eq!(run.status.code(), Some(2), "{}", text(&run.stderr));
        let name = flag.split('=').next().unwrap();
        let said = format!(
            "`{name}` is a flag of a format this driver does not have (it reads and writes text, wasm)"
        );
        assert!(text(&run.stderr).contains(&said), "{}", text(&run.stderr));
    }
}

#[test]
fn bad_text_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.wat");
    std::fs::write(&bad, "(module (func (result i32) i32.const))").unwrap();
    let run = wasm_opt(&[bad.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(1));
    let err = text(&run.stderr);
    assert!(
        err.contains("expected") && !err.contains("panicked"),
        "{err}"
    );
}

#[test]
fn the_listing_shows_every_pass_with_its_description_options_and_the_config_key() {
    let run = wasm_opt(&["--list-passes"]);
    let out = text(&run.stdout);
    for name in [
        "FoldConstants",
        "Vacuum",
        "StrengthReduce",
        "DeadFunctions",
        "LocalCse",
        "O3",
    ] {
        assert!(out.contains(name), "{name} in {out}");
    }
    assert!(out.contains("keep_mul"), "options listed: {out}");
    let configs = text(&wasm_opt(&["--list-configs"]).stdout);
    assert!(configs.contains("wasm.DeadFunctions.keep"), "{configs}");
}

#[test]
fn a_config_key_from_the_command_line_reaches_the_pass() {
    let keep = wasm_opt(&[
        "-O1",
        "--config",
        r#"wasm.DeadFunctions.keep=["kept_by_config"]"#,
        CORPUS,
    ]);
    assert!(keep.status.success(), "{}", text(&keep.stderr));
    assert!(text(&keep.stdout).contains("$kept_by_config"));
    let drop = wasm_opt(&["-O1", CORPUS]);
    assert!(!text(&drop.stdout).contains("$kept_by_config"));
}
