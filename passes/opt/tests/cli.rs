//! `irpass-opt` end to end: the binary on files, stdin and its default input, flags, and every
//! error path (one message, exit 2 for usage and 1 for input or pass errors, no panic).

mod cli_support;

// The binary links the ONNX crate (its default feature), whose `onnx.node` operator
// `--list-ops` lists: so does the count below.
#[cfg(feature = "onnx")]
use irpass_onnx as _;

use cli_support::{irpass_opt, model, text};

use std::io::Write;
use std::process::{Output, Stdio};

fn opt(args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = irpass_opt();
    // No text for stdin: no stdin at all (an empty pipe would be read as the input).
    let input = if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    };
    cmd.args(args)
        .stdin(input)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

fn assert_clean_error(out: &Output, code: i32, wanted: &str) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{err}");
    assert!(err.contains(wanted), "wanted `{wanted}` in:\n{err}");
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
}

#[test]
fn without_input_it_optimises_the_built_in_model_and_says_so() {
    let out = opt(&["-O3"], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        "irpass-opt: note: no input file given: optimising the built-in default input `mlp.relay`\n"
    );
    let printed = text(&out.stdout);
    assert!(
        printed.contains("Primitive=1") && !printed.contains("nn.bias_add"),
        "{printed}"
    );
    irpass_passes::ir::Module::parse(&printed)
        .unwrap()
        .infer_types()
        .unwrap();
}

#[test]
fn a_file_with_a_textual_pipeline_writes_the_output_file() {
    let dir = std::env::temp_dir().join(format!("irpass-opt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out_path = dir.join("out.relay");
    let out = opt(
        &[
            &model("resnet_block"),
            "-p",
            "SimplifyInference,ConvertLayout{layout=NHWC}",
            "-o",
            out_path.to_str().unwrap(),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(&out_path).unwrap();
    assert!(
        written.contains("data_layout=\"NHWC\"") && !written.contains("nn.batch_norm"),
        "{written}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn stdin_input_and_the_printing_and_timing_flags() {
    let src = "def @main(%x: float32) { add(%x, multiply(2f, 3f)) }";
    let out = opt(
        &[
            "-",
            "-p",
            "FoldConstant",
            "--print-before-all",
            "--print-after-all",
            "--time-passes",
        ],
        Some(src),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("add(%x, 6f)"));
    let err = text(&out.stderr);
    assert!(
        err.contains("*** IR Dump Before FoldConstant ***")
            && err.contains("*** IR Dump After FoldConstant ***"),
        "{err}"
    );
    assert!(err.contains("FoldConstant: "), "timing tree: {err}");
}

#[test]
fn context_flags_reach_the_context() {
    let src = "def @main(%x: float32) { add(%x, multiply(2f, 3f)) }";
    // Disabled: the fold does not happen.
    let out = opt(
        &[
            "-",
            "-O3",
            "--disable-pass",
            "FoldConstant",
            "--threads",
            "1",
        ],
        Some(src),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("multiply(2f, 3f)"),
        "{}",
        text(&out.stdout)
    );
    let out = opt(&["-", "-O3", "--threads", "1"], Some(src));
    assert!(
        !text(&out.stdout).contains("multiply(2f, 3f)"),
        "{}",
        text(&out.stdout)
    );
    // A config key with a value the pass reads: an outer sum (9 elements from 3 and 3) folds
    // with the default limit and not past a limit of 5.
    let outer =
        "def @main() { add(Tensor[(3, 1), float32]{1, 2, 3}, Tensor[(3), float32]{3, 4, 5}) }";
    for (limit, folds) in [("1000", true), ("5", false)] {
        let key = format!("relay.FoldConstant.max_elements={limit}");
        let out = opt(&["-", "-p", "FoldConstant", "--config", &key], Some(outer));
        assert!(out.status.success());
        assert_eq!(
            !text(&out.stdout).contains("add("),
            folds,
            "{}",
            text(&out.stdout)
        );
    }
}

#[test]
fn listings() {
    let out = opt(&["--list-passes"], None);
    let s = text(&out.stdout);
    assert!(s.contains("FoldConstant") && s.contains("opt 2"), "{s}");
    // Types are an analysis now: no library pass requires `InferType`.
    assert!(!s.contains("requires InferType"), "{s}");
    let out = opt(&["--list-analyses"], None);
    let s = text(&out.stdout);
    for name in [
        "Types ",
        "ModuleTypes ",
        "UseCounts ",
        "CallGraph ",
        "PostDominators ",
    ] {
        assert!(s.contains(name), "{name}: {s}");
    }
    assert!(s.contains("function") && s.contains("module"), "{s}");
    let out = opt(&["--list-configs"], None);
    assert!(text(&out.stdout).contains("relay.FoldConstant.max_elements"));
    let out = opt(&["--list-instruments"], None);
    assert!(text(&out.stdout).contains("PassTiming"));
    // Every operator of the IR, one line each, with arity and fusion pattern.
    let out = opt(&["--list-ops"], None);
    let s = text(&out.stdout);
    assert_eq!(s.lines().count(), irpass_passes::ir::Op::all().len(), "{s}");
    assert!(
        s.lines().any(|l| l.starts_with("nn.conv2d ")
            && l.contains("2 args")
            && l.contains("OutEWiseFusable")),
        "{s}"
    );
}

#[test]
fn help_says_first_what_irpass_opt_is() {
    let out = opt(&["--help"], None);
    assert!(out.status.success());
    let first = text(&out.stdout).lines().next().unwrap_or("").to_string();
    assert!(
        first.starts_with("irpass-opt: optimises tensor programs"),
        "{first}"
    );
}

#[test]
fn list_passes_shows_each_option_with_its_type_and_default_and_wraps_the_text() {
    let out = opt(&["--list-passes"], None);
    let s = text(&out.stdout);
    for wanted in [
        "FoldConstant{max_elements=...}: u64, default relay.FoldConstant.max_elements, else 1048576",
        "DeadCodeElimination{inline_once=...}: bool, default",
        "EliminateCommonSubexpr{skip_ops=...}: [operator names], default",
        "FuseOps{fuse_opt_level=...}: i64, default",
        "FuseOps{max_depth=...}: usize, default relay.FuseOps.max_depth, else 256",
        "ConvertLayout{layout=...}",
    ] {
        let joined = s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(joined.contains(wanted), "{wanted}: {s}");
    }
    assert!(
        s.lines()
            .all(|l| l.chars().count() <= 100 || !l.contains(' ')),
        "{s}"
    );
}

#[test]
fn pass_options_in_pipeline_text_apply_and_their_misuse_names_the_pass_and_the_option() {
    let input = "def @main(%x: Tensor[(2), float32]) { multiply(add(%x, 1f), add(%x, 1f)) }";
    let merged = opt(&["-", "-p", "EliminateCommonSubexpr"], Some(input));
    assert_eq!(text(&merged.stdout).matches("add(").count(), 1);
    let kept = opt(
        &["-", "-p", "EliminateCommonSubexpr{skip_ops=[add]}"],
        Some(input),
    );
    assert_eq!(text(&kept.stdout).matches("add(").count(), 2);
    // The option wins over the config key.
    let kept = opt(
        &[
            "-",
            "-p",
            "EliminateCommonSubexpr{skip_ops=[]}",
            "--config",
            "relay.EliminateCommonSubexpr.skip_ops=[\"add\"]",
        ],
        Some(input),
    );
    assert_eq!(text(&kept.stdout).matches("add(").count(), 1);
    assert_clean_error(
        &opt(
            &["-", "-p", "EliminateCommonSubexpr{skip_op=[add]}"],
            Some(input),
        ),
        2,
        "pass `EliminateCommonSubexpr` cannot be built: unknown field `skip_op` (did you mean `skip_ops`?)",
    );
    assert_clean_error(
        &opt(&["-", "-p", "FuseOps{max_depth=-1}"], Some(input)),
        2,
        "pass `FuseOps` cannot be built: `max_depth`: invalid value: integer `-1`, expected usize",
    );
}

#[test]
fn every_error_is_one_clear_message_and_the_right_exit_code() {
    assert_clean_error(&opt(&["--no-such-flag"], None), 2, "unexpected argument");
    assert_clean_error(&opt(&["-O7"], None), 2, "7 is not in 0..=4");
    assert_clean_error(
        &opt(&["-O2", "-p", "FoldConstant"], None),
        2,
        "cannot be used with",
    );
    assert_clean_error(
        &opt(&["/no/such/file.relay"], None),
        1,
        "cannot read `/no/such/file.relay`",
    );
    assert_clean_error(
        &opt(&["-"], Some("def @main() { add(1f }")),
        1,
        "parse error",
    );
    assert_clean_error(
        &opt(
            &["-", "-p", "FoldConstant,,DCE"],
            Some("def @main() { 1f }"),
        ),
        2,
        "column 14",
    );
    assert_clean_error(
        &opt(&["-", "-p", "FoldConstants"], Some("def @main() { 1f }")),
        2,
        "did you mean `FoldConstant`",
    );
    assert_clean_error(
        &opt(
            &["-", "--config", "relay.FoldConstant.max_elements=lots"],
            Some("def @main() { 1f }"),
        ),
        2,
        "relay.FoldConstant.max_elements",
    );
    assert_clean_error(
        &opt(&["-", "--config", "novalue"], Some("def @main() { 1f }")),
        2,
        "expected KEY=VALUE",
    );
    // A pass that fails: an ill-typed program under InferType.
    assert_clean_error(
        &opt(
            &["-", "-p", "InferType"],
            Some("def @main(%x: float32) -> int32 { %x }"),
        ),
        1,
        "type error",
    );
}

#[test]
fn debugging_flags() {
    let src = "def @main(%x: float32) { add(%x, multiply(2f, 3f)) }";
    let out = opt(
        &[
            "-",
            "-p",
            "SimplifyExpr,FoldConstant",
            "--print-changed=diff",
        ],
        Some(src),
    );
    let err = text(&out.stderr);
    assert!(
        err.contains("*** IR Diff After FoldConstant ***") && err.contains("+  add(%x, 6f)"),
        "{err}"
    );
    assert!(
        !err.contains("After SimplifyExpr"),
        "SimplifyExpr changed nothing: {err}"
    );
    let out = opt(
        &[
            "-",
            "-p",
            "FoldConstant,SimplifyExpr",
            "--opt-bisect-limit",
            "1",
        ],
        Some(src),
    );
    let err = text(&out.stderr);
    assert!(
        err.contains("BISECT: running pass (1) FoldConstant")
            && err.contains("BISECT: NOT running pass (2)"),
        "{err}"
    );
    let out = opt(&["-", "-O3", "--verify-each"], Some(src));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = opt(
        &[
            "-",
            "-p",
            "FoldConstant",
            "--print-before",
            "FoldConstant",
            "--print-after",
            "FoldConstant",
        ],
        Some(src),
    );
    let err = text(&out.stderr);
    assert!(
        err.contains("*** IR Dump Before FoldConstant ***")
            && err.contains("*** IR Dump After FoldConstant ***"),
        "{err}"
    );
    let out = opt(
        &["-", "-p", "FoldConstant", "--time-passes=json"],
        Some(src),
    );
    let json: serde_json::Value = serde_json::from_str(text(&out.stderr).trim()).unwrap();
    assert!(json.to_string().contains("FoldConstant"), "{json}");
    let out = opt(&["-", "-O0", "--emit", "dot"], Some(src));
    let dot = text(&out.stdout);
    assert!(
        dot.starts_with("digraph module {") && dot.contains("label=\"add\""),
        "{dot}"
    );
}

#[test]
fn trace_dump_and_crash_reproducer_files() {
    let dir = std::env::temp_dir().join(format!("irpass-opt-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = "def @main(%x: float32) { add(%x, multiply(2f, 3f)) }";
    let trace = dir.join("trace.json");
    let dump = dir.join("dump");
    let out = opt(
        &[
            "-",
            "-O3",
            &format!("--time-passes=chrome:{}", trace.display()),
            "--dump-ir",
            dump.to_str().unwrap(),
        ],
        Some(src),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    assert!(
        json["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["name"] == "FoldConstant")
    );
    assert!(std::fs::read_dir(&dump).unwrap().count() > 3);

    // A failing pass writes a reproducer; replaying it fails the same way. (The ill-typed input
    // reaches the pass with the input check off; with it on, it is the input's error.)
    let repro = dir.join("crash.relay");
    let bad = "def @main(%x: float32) -> int32 { exp(%x) }";
    let checked = opt(&["-", "-p", "SimplifyExpr,InferType"], Some(bad));
    assert_clean_error(&checked, 1, "is not a valid input: type error");
    let first = opt(
        &[
            "-",
            "--disable-verify",
            "-p",
            "SimplifyExpr,InferType",
            "--config",
            "relay.FoldConstant.max_elements=5",
            "--crash-reproducer",
            repro.to_str().unwrap(),
        ],
        Some(bad),
    );
    assert_clean_error(&first, 1, "type error");
    let written = std::fs::read_to_string(&repro).unwrap();
    assert!(
        written.contains("// pipeline: SimplifyExpr,InferType") && written.contains("max_elements"),
        "{written}"
    );
    let replay = opt(&["--run-reproducer", repro.to_str().unwrap()], None);
    assert_clean_error(&replay, 1, "type error");
    let first_msg = text(&first.stderr);
    let replay_msg = text(&replay.stderr);
    let core = |m: &str| {
        m.lines()
            .find(|l| l.contains("expected"))
            .map(str::to_string)
    };
    assert!(core(&first_msg).is_some(), "{first_msg}");
    assert_eq!(
        core(&first_msg),
        core(&replay_msg),
        "same failure:\n{first_msg}\n{replay_msg}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_built_in_model_is_the_mlp_of_the_examples() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let built_in = std::fs::read_to_string(root.join("src/mlp.relay")).unwrap();
    let example = std::fs::read_to_string(root.join("../../examples/models/mlp.relay")).unwrap();
    assert_eq!(
        built_in, example,
        "copy examples/models/mlp.relay to passes/opt/src/"
    );
}
