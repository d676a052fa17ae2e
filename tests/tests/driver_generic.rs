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
    // The header is the driver's, the module the IR's own text: Tiny's parser, which knows
    // no comments, reads the module after the header, and the replay fails as the run did.
    let replay = tiny_opt(&["--run-reproducer", repro.to_str().unwrap()]);
    assert_eq!(replay.status.code(), Some(1), "{}", text(&replay.stderr));
    assert!(
        text(&replay.stderr).contains("Explode always panics"),
        "{}",
        text(&replay.stderr)
    );
}

#[test]
fn a_reproducer_records_and_replays_the_whole_context() {
    // `Canon` disabled and `Scaled` required: without them the replay would run another
    // pipeline than the one that failed.
    let dir = tempfile::tempdir().unwrap();
    let repro = dir.path().join("crash.tiny");
    let out = tiny_opt(&[
        "-p",
        "Scaled{value=7},Canon,Explode",
        "--disable-pass",
        "Canon",
        "--required-pass",
        "Scaled",
        "--crash-reproducer",
        repro.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(&repro).unwrap();
    let header = irpass::instrument::Reproducer::read(&written).unwrap();
    assert_eq!(header.disabled, ["Canon"]);
    assert_eq!(header.required, ["Scaled"]);
    assert_eq!(header.pipeline, "Scaled{value=7},Canon,Explode");
    // The module before Explode: Scaled ran, Canon did not.
    assert_eq!(header.module, "def @main: [1, 2, 7]\ndef @other: [3, 7]\n");
    let replay = tiny_opt(&["--run-reproducer", repro.to_str().unwrap()]);
    assert_eq!(replay.status.code(), Some(1));
    assert!(text(&replay.stderr).contains("Explode always panics"));
    // Replayed without `Explode` in the way (disabled on the command line), the recorded
    // context still holds: Canon stays disabled.
    let replay = tiny_opt(&[
        "--run-reproducer",
        repro.to_str().unwrap(),
        "--disable-pass",
        "Explode",
    ]);
    assert!(replay.status.success(), "{}", text(&replay.stderr));
    assert_eq!(
        text(&replay.stdout),
        "def @main: [1, 2, 7, 7]\ndef @other: [3, 7, 7]\n"
    );
}

#[test]
fn the_result_is_verified_before_it_is_written() {
    // `Corrupt` appends -1, which `Tiny::verify` refuses: nothing is written, exit 1, and the
    // message says how to find the pass and how to write it anyway.
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("out.tiny");
    let out_arg = out_path.to_str().unwrap();
    let out = tiny_opt(&["-p", "Canon,Corrupt", "-o", out_arg]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("the pipeline's result is not valid"), "{err}");
    assert!(
        err.contains("negative value") && err.contains("--verify-each"),
        "{err}"
    );
    assert!(!out_path.exists(), "nothing is written");
    // `--verify-each` names the pass.
    let out = tiny_opt(&["-p", "Canon,Corrupt", "--verify-each"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("Corrupt"),
        "{}",
        text(&out.stderr)
    );
    // `--disable-verify` writes it anyway.
    let out = tiny_opt(&["-p", "Corrupt", "--disable-verify", "-o", out_arg]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(&out_path).unwrap(),
        "def @main: [1, 2, -1]\ndef @other: [3, -1]\n"
    );
}

#[test]
fn o_takes_the_opt_level_range_of_the_passes_and_names_a_missing_pipeline() {
    // 4 is a pass's highest opt level, so `-O4` is a level; this IR registers no `O4`.
    let out = tiny_opt(&["-O4"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("`-O4` runs the pipeline `O4`, and none is registered for IR `tiny`"),
        "{err}"
    );
    let out = tiny_opt(&["-O5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("5 is not in 0..=4"));
}

#[test]
fn a_fixpoint_runs_from_the_command_line() {
    let out = tiny_opt(&["-p", "Canon,Canon,fixpoint<5>(Shrink)"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "def @main: [1]\ndef @other: [3]\n");
    let out = tiny_opt(&["-p", "Canon,Canon,fixpoint<1>(Shrink)"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no fixpoint within 1 round:"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_format_flag_is_listed_and_accepted_only_when_a_format_of_the_driver_takes_it() {
    // tiny-opt has no binary format: `--opset` and the rest mean nothing to it.
    let help = text(&tiny_opt(&["--help"]).stdout);
    for flag in ["--opset", "--external-data", "--input-shape", "--strict"] {
        assert!(!help.contains(flag), "{flag} is listed:\n{help}");
        let out = tiny_opt(&[flag, "1"]);
        assert_eq!(out.status.code(), Some(2), "{flag}");
        assert!(
            text(&out.stderr).contains(&format!(
                "`{flag}` is a flag of a format this driver does not have (it reads and writes text)"
            )),
            "{flag}: {}",
            text(&out.stderr)
        );
    }
}
