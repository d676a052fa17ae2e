//! The pass library's data-driven tests, as LLVM's lit/FileCheck and rustc's mir-opt tests:
//! each file under `tests/cases/<Pass>/` holds a case — a header, the input and the expected
//! output — and this runner checks every one.
//!
//! ```text
//! // pipeline: FoldConstant                       (required: a textual pipeline)
//! // config: relay.FoldConstant.max_elements=8    (any number: KEY=VALUE, JSON or plain text)
//! // opt-level: 3                                 (default 3)
//! // source: TVM v0.16 test_pass_fold_constant.py::test_fold_const   (where the case is from)
//! // Any other comment line says what the case shows.
//! def @main(...) { ... }                          (the input)
//! // expected:
//! def @main(...) { ... }                          (the output)
//! ```
//!
//! Instead of `// expected:`, `// expected error: TEXT` expects the pipeline to fail with a
//! message containing TEXT. The output is compared with the expected module structurally,
//! sharing included (a DAG compared as a tree would hide a missing CSE): both are printed and
//! read back first, so that a node shared across `if` branches — which text cannot share —
//! compares as written. When `@main` takes tensors, the input and the output also compute the
//! same values on three random inputs.
//!
//! `IRPASS_BLESS=1 cargo test -p irpass-passes --test cases` rewrites every expected output
//! with what the pipeline produced, for review with `git diff`.

mod support;

use std::path::{Path, PathBuf};

use irpass::PassContext;
use irpass_passes as _;
use irpass_passes::ir::{Module, Type, eval_function};
use support::{close, inputs, parse};

/// One case file, parsed.
struct Case {
    path: PathBuf,
    pipeline: String,
    config: Vec<(String, String)>,
    opt_level: u32,
    /// The header and the input, as written (the input parses with the header's comments;
    /// kept as is when blessing).
    head: String,
    expected: Expected,
}

enum Expected {
    Output(String),
    Error(String),
}

const EXPECTED: &str = "// expected:";
const EXPECTED_ERROR: &str = "// expected error:";

fn read_case(path: &Path) -> Result<Case, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let (mut pipeline, mut config, mut opt_level) = (None, Vec::new(), 3);
    for line in text.lines().take_while(|l| l.starts_with("//")) {
        let line = line.trim_start_matches('/').trim();
        if let Some(p) = line.strip_prefix("pipeline:") {
            pipeline = Some(p.trim().to_string());
        } else if let Some(c) = line.strip_prefix("config:") {
            let (k, v) = c
                .split_once('=')
                .ok_or(format!("`config: {c}` is not KEY=VALUE"))?;
            config.push((k.trim().to_string(), v.trim().to_string()));
        } else if let Some(o) = line.strip_prefix("opt-level:") {
            opt_level = o.trim().parse().map_err(|e| format!("opt-level: {e}"))?;
        }
    }
    let pipeline = pipeline.ok_or("no `// pipeline:` line in the header")?;
    let split = text
        .find(EXPECTED_ERROR)
        .or_else(|| text.find(EXPECTED))
        .ok_or("no `// expected:` or `// expected error:` line")?;
    let (head, rest) = text.split_at(split);
    let expected = if let Some(msg) = rest.strip_prefix(EXPECTED_ERROR) {
        Expected::Error(msg.lines().next().unwrap_or("").trim().to_string())
    } else {
        Expected::Output(rest[EXPECTED.len()..].trim_start_matches('\n').to_string())
    };
    Ok(Case {
        path: path.to_path_buf(),
        pipeline,
        config,
        opt_level,
        head: head.to_string(),
        expected,
    })
}

/// Runs the case's pipeline on its input.
fn run(case: &Case, input: Module) -> irpass::Result<Module> {
    let mut ctx = PassContext::builder().opt_level(case.opt_level);
    for (k, v) in &case.config {
        ctx = ctx.config_text(k, v);
    }
    let ctx = ctx.build()?;
    let pass = irpass::pipeline::parse(&case.pipeline)?.build::<Module>()?;
    Ok(pass.run_in(input, &ctx)?)
}

/// Whether every parameter of `@main` is a tensor of static shape (so random inputs exist).
fn runnable(m: &Module) -> bool {
    m.get("main").is_some_and(|f| {
        f.param_types()
            .iter()
            .all(|t| matches!(t, Some(Type::Tensor(t)) if t.static_shape().is_some()))
    })
}

/// Checks one case; `Err` says what is wrong. With `bless`, a wrong expected output is
/// rewritten instead.
fn check(case: &Case, bless: bool) -> Result<(), String> {
    let input = Module::parse(&case.head).map_err(|e| format!("the input: {e}"))?;
    let result = run(case, input.clone());
    match (&case.expected, result) {
        (Expected::Error(want), Err(e)) => {
            let got = e.to_string();
            if got.contains(want.as_str()) {
                Ok(())
            } else {
                Err(format!("expected an error with `{want}`, got: {got}"))
            }
        }
        (Expected::Error(want), Ok(out)) => Err(format!(
            "expected an error with `{want}`, the pipeline gave:\n{out}"
        )),
        (Expected::Output(_), Err(e)) => Err(format!("the pipeline failed: {e}")),
        (Expected::Output(want), Ok(out)) => {
            irpass::IrModule::verify(&out)
                .map_err(|e| format!("the output is not a valid module: {e}\n{out}"))?;
            let same = Module::parse(want).is_ok_and(|expected| {
                parse(&out.to_string()).structurally_equal(&parse(&expected.to_string()))
            });
            if !same {
                // The module's text without the version line every printed module starts with.
                let printed = out.to_string();
                let got = printed
                    .strip_prefix("#[version = \"0.0.5\"]\n")
                    .unwrap_or(&printed);
                if bless {
                    let text = format!("{}{EXPECTED}\n{got}", case.head);
                    std::fs::write(&case.path, text).map_err(|e| e.to_string())?;
                    return Ok(());
                }
                let diff = similar::TextDiff::from_lines(want.as_str(), got)
                    .unified_diff()
                    .header("expected", "got")
                    .to_string();
                return Err(format!(
                    "the output differs (IRPASS_BLESS=1 rewrites it):\n{diff}"
                ));
            }
            if runnable(&input) {
                same_values(&input, &out)?;
            }
            Ok(())
        }
    }
}

/// Whether `input` and `out` compute the same `@main` on three random inputs: equal values up
/// to float rounding, or both an evaluation error (a division by zero the pass kept).
fn same_values(input: &Module, out: &Module) -> Result<(), String> {
    for seed in 1..=3 {
        let args = inputs(input, seed);
        let before = eval_function(input, "main", args.clone());
        let after = eval_function(out, "main", args);
        match (before, after) {
            (Ok(a), Ok(b)) if close(&b, &a) => {}
            (Err(_), Err(_)) => {}
            (a, b) => {
                return Err(format!(
                    "the output computes other values than the input: before {}, after {}",
                    a.map_or_else(|e| e.to_string(), |v| v.to_string()),
                    b.map_or_else(|e| e.to_string(), |v| v.to_string())
                ));
            }
        }
    }
    Ok(())
}

/// Every case file, sorted.
fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut out = Vec::new();
    for dir in std::fs::read_dir(&root).expect("tests/cases") {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "relay") {
                out.push(f);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_case_gives_its_expected_output() {
    let bless = std::env::var_os("IRPASS_BLESS").is_some();
    let all = cases();
    assert!(!all.is_empty(), "no cases found");
    let mut failures = Vec::new();
    for path in &all {
        let name = path
            .strip_prefix(env!("CARGO_MANIFEST_DIR"))
            .unwrap_or(path);
        match read_case(path).and_then(|case| check(&case, bless)) {
            Ok(()) => {}
            Err(e) => failures.push(format!("{}: {e}", name.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n\n{}",
        failures.len(),
        all.len(),
        failures.join("\n\n")
    );
}

#[test]
fn the_runner_reports_a_wrong_expectation() {
    // A case whose expected output is wrong must fail (the runner is not vacuous).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wrong.relay");
    std::fs::write(
        &path,
        "// pipeline: FoldConstant\ndef @main() { add(1f, 2f) }\n// expected:\ndef @main() { 4f }\n",
    )
    .unwrap();
    let case = read_case(&path).unwrap();
    let err = check(&case, false).unwrap_err();
    assert!(err.contains("differs") && err.contains("3f"), "{err}");
}
