//! `irpass-opt` follows `opt`'s conventions: optional flag values only with `=`, `--version`,
//! a note naming the default pipeline, a pointer to `--flag` for LLVM's one-dash spelling, and
//! to `-O3` for `-03`.

mod cli_support;

use cli_support::{irpass_opt, model, opt, text};

use std::process::Stdio;

#[test]
fn an_optional_flag_value_is_taken_only_with_equals_so_the_input_is_never_swallowed() {
    let mlp = model("mlp");
    let resnet = model("resnet_block");
    for args in [
        vec!["-O0", "--time-passes", &mlp],
        vec!["--print-changed", "-O2", &resnet],
        vec!["--time-passes=json", "-O1", &mlp],
    ] {
        let out = opt(&args);
        let err = text(&out.stderr);
        assert!(out.status.success(), "{args:?}: {err}");
        assert!(
            !err.contains("no input file given"),
            "{args:?}: the file was read: {err}"
        );
        assert!(text(&out.stdout).starts_with("#[version"), "{args:?}");
    }
    // `--print-changed=diff` still takes its value.
    let out = opt(&["--print-changed=diff", "-O3", &mlp]);
    assert!(out.status.success());
    assert!(text(&out.stderr).contains("@@"), "a unified diff");
}

#[test]
fn version_prints_the_name_and_the_crate_version() {
    let out = opt(&["--version"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).trim(),
        format!("irpass-opt {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn without_a_level_or_pipeline_a_note_says_which_pipeline_runs() {
    let out = opt(&[&model("mlp")]);
    assert!(out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("note: no `-O<level>` or `-p <pipeline>` given: running `-O2`"),
        "{err}"
    );
    let o2 = opt(&[&model("mlp"), "-O2"]);
    assert_eq!(text(&out.stdout), text(&o2.stdout));
    assert!(!text(&o2.stderr).contains("note:"));
}

#[test]
fn llvm_style_one_dash_long_flags_point_to_the_two_dash_spelling() {
    for (arg, wanted) in [
        ("-time-passes", "did you mean `--time-passes`?"),
        (
            "-passes=FoldConstant",
            "did you mean `--passes=FoldConstant`?",
        ),
        ("-print-after-all", "did you mean `--print-after-all`?"),
    ] {
        let out = opt(&[&model("mlp"), arg]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{arg}: {err}");
        assert!(
            err.starts_with("irpass-opt: error: unknown flag"),
            "{arg}: {err}"
        );
        assert!(err.contains(wanted), "{arg}: {err}");
    }
    // Short flags with attached values are not mistaken for them.
    let out = opt(&[&model("mlp"), "-O2", "-pFoldConstant"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "-O and -p conflict: clap's own error"
    );
    assert!(!text(&out.stderr).contains("did you mean `--"));
    let out = opt(&[&model("mlp"), "-pFoldConstant"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn a_zero_typed_for_the_letter_o_gets_the_level_flag_it_meant() {
    for level in ["0", "1", "2", "3"] {
        let arg = format!("-0{level}");
        let out = opt(&[&model("mlp"), &arg]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{arg}: {err}");
        assert!(
            err.contains(&format!("unknown flag `{arg}`; did you mean `-O{level}`?")),
            "{arg}: {err}"
        );
    }
    let out = opt(&[&model("mlp"), "-O3"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn piped_or_redirected_input_is_read_when_no_file_is_named() {
    let source = "def @main(%x: float32) { add(%x, multiply(2f, 3f)) }";
    // Piped.
    let mut child = irpass_opt()
        .args(["-p", "FoldConstant"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(source.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("add(%x, 6f)"),
        "{}",
        text(&out.stdout)
    );
    assert!(!text(&out.stderr).contains("built-in default input"));
    // Redirected from a file.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in.relay");
    std::fs::write(&path, source).unwrap();
    let out = irpass_opt()
        .args(["-p", "FoldConstant"])
        .stdin(std::fs::File::open(&path).unwrap())
        .output()
        .unwrap();
    assert!(text(&out.stdout).contains("add(%x, 6f)"));
    // `/dev/null` on stdin: the built-in model, as with no stdin.
    let out = opt(&["-O0"]);
    assert!(text(&out.stderr).contains("built-in default input"));
    // An empty pipe is no input too, as `/dev/null` is: the same output, the same note.
    let child = irpass_opt()
        .args(["-O0"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let empty = child.wait_with_output().unwrap();
    assert!(empty.status.success(), "{}", text(&empty.stderr));
    assert!(text(&empty.stderr).contains("built-in default input"));
    assert_eq!(text(&empty.stdout), text(&out.stdout));
}

#[test]
fn an_ill_typed_input_is_the_inputs_error_before_any_pass_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.relay");
    std::fs::write(
        &path,
        "def @main(%x: float32) -> int32 {\n  nn.relu(%x)\n}\n",
    )
    .unwrap();
    let path = path.to_str().unwrap();
    for pipeline in [
        &["-O3"][..],
        &["-p", "DeadCodeElimination"],
        &["-O3", "--verify-each"],
    ] {
        let mut args = vec![path];
        args.extend_from_slice(pipeline);
        let out = opt(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{pipeline:?}: {err}");
        assert!(
            err.starts_with(&format!(
                "irpass-opt: error: `{path}` is not a valid input: type error"
            )),
            "{pipeline:?}: {err}"
        );
        // Where: the file, the line and a caret under the expression.
        assert!(
            err.contains("bad.relay:2:3") && err.contains("^^^^"),
            "{err}"
        );
        assert!(!err.contains("pass `"), "no pass is blamed: {err}");
        assert_eq!(
            err.matches("irpass-opt: error").count(),
            1,
            "one error: {err}"
        );
        assert_eq!(err.matches("type error").count(), 1, "reported once: {err}");
        assert!(out.stdout.is_empty());
    }
    // `--disable-verify` hands it to the passes, as `opt -disable-verify` does.
    let out = opt(&[path, "-p", "DeadCodeElimination", "--disable-verify"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}
