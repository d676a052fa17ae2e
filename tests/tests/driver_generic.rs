//! The driver is generic: `tiny-opt` is it for the tests' own IR. A pass that panics is one
//! error message and exit code 1, and a crash reproducer replays the panic.

use std::process::{Command, Output};

fn tiny_opt(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tiny-opt"))
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn the_driver_runs_a_pipeline_on_another_ir() {
    let out = tiny_opt(&["-p", "Canon,Scaled{value=5}"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "def @main: [1, 2, 100, 5]\ndef @other: [3, 100, 5]\n"
    );
    assert!(text(&out.stderr).contains("built-in default input `two functions`"));
    // Context flags reach the context: a disabled pass does not run.
    let out = tiny_opt(&[
        "-p",
        "Scaled{value=5}",
        "--disable-pass",
        "Scaled",
        "--required-pass",
        "Canon",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "def @main: [1, 2]\ndef @other: [3]\n");
    // --emit=dot is refused for an IR without a Graphviz printer.
    let out = tiny_opt(&["--emit", "dot"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot emit Graphviz"));
}

#[test]
fn a_pipeline_given_as_text_runs_every_pass_it_lists_whatever_its_opt_level() {
    // `Experimental` is at opt level 4, above every `-O`: listed, it runs.
    let out = tiny_opt(&["-p", "Experimental"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "def @main: [1, 2, 4]\ndef @other: [3, 4]\n"
    );
}

#[test]
fn a_panicking_pass_is_one_message_exit_1_and_a_replayable_reproducer() {
    let dir = tempfile::tempdir().unwrap();
    let repro = dir.path().join("crash.tiny");
    let out = tiny_opt(&[
        "-p",
        "Canon,Explode",
        "--crash-reproducer",
        repro.to_str().unwrap(),
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("Explode always panics"), "{err}");
    assert!(
        !err.contains("thread '") && !err.contains(".rs:") && !err.contains("RUST_BACKTRACE"),
        "no panic output: {err}"
    );
    assert_eq!(
        err.lines()
            .filter(|l| l.starts_with("tiny-opt: error: pass"))
            .count(),
        1,
        "one error message: {err}"
    );
    let written = std::fs::read_to_string(&repro).unwrap();
    assert!(
        written.contains("// failing pass: Explode") && written.contains("def @main: [1, 2, 100]"),
        "{written}"
    );
    // Tiny's parser does not skip comments; the reproducer is read by the driver, which gives
    // the whole text to the IR's parser: a Tiny reproducer is therefore not replayable, and
    // the driver says why.
    let replay = tiny_opt(&["--run-reproducer", repro.to_str().unwrap()]);
    assert_eq!(replay.status.code(), Some(1));
    assert!(
        text(&replay.stderr).contains("expected `def @name: [1, 2]`"),
        "{}",
        text(&replay.stderr)
    );
}
