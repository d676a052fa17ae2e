//! Every name typed on `irpass-opt`'s command line is checked, with a suggestion; every
//! failure has the one prefix `irpass-opt: error:`; `--list-passes` reads what a pipeline
//! runs from the pipeline itself.

mod cli_support;

use cli_support::{model, opt, text};

use irpass_passes as _;

/// Runs `args`, expects failure with `code`, and returns stderr.
fn fails(args: &[&str], code: i32) -> String {
    let out = opt(args);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    err
}

#[test]
fn a_misspelt_pass_in_a_print_or_enable_flag_is_an_error_with_the_closest_name() {
    let mlp = model("mlp");
    for flag in [
        "--print-before",
        "--print-after",
        "--disable-pass",
        "--required-pass",
    ] {
        let arg = format!("{flag}=FoldConstnt");
        let err = fails(&["-O2", &arg, &mlp], 2);
        assert_eq!(
            err,
            format!(
                "irpass-opt: error: `{flag}`: no pass named `FoldConstnt` is in the pipeline \
                 or registered (did you mean `FoldConstant`?)\n"
            )
        );
    }
    // Names in a comma list are each checked.
    let err = fails(&["-O2", "--print-after=FoldConstant,DeadCodeElim", &mlp], 2);
    assert!(err.contains("did you mean `DeadCodeElimination`?"), "{err}");
}

#[test]
fn names_of_sequentials_and_the_passes_inside_them_are_known() {
    let mlp = model("mlp");
    // `O2` is the Sequential's name; `SimplifyInference` runs inside it.
    let out = opt(&["-O2", "--print-after=O2,SimplifyInference", &mlp]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("*** IR Dump After O2 ***"), "{err}");
    assert!(
        err.contains("*** IR Dump After SimplifyInference ***"),
        "{err}"
    );
    let out = opt(&["-p", "opt(FoldConstant)", "--print-before=opt", &mlp]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("*** IR Dump Before opt ***"));
}

#[test]
fn a_registered_pass_the_pipeline_does_not_run_gets_a_note_and_the_run_goes_on() {
    let out = opt(&["-O1", "--print-after=FoldScaleAxis", &model("mlp")]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(
        err,
        "irpass-opt: note: `--print-after`: pass `FoldScaleAxis` is not in the pipeline, so \
         this has no effect on it\n"
    );
    assert!(text(&out.stdout).starts_with("#[version"));
}

#[test]
fn an_unknown_pass_option_lists_the_fields_with_the_closest_one() {
    let err = fails(&["-p", "ConvertLayout{layot=NHWC}", &model("mlp")], 2);
    assert_eq!(
        err,
        "irpass-opt: error: pass `ConvertLayout` cannot be built: unknown field `layot` \
         (did you mean `layout`?); the fields are `layout`, `kernel_layout`\n"
    );
}

#[test]
fn the_driver_never_tells_its_user_to_link_the_library_it_links() {
    let mlp = model("mlp");
    let err = fails(&["-p", "FoldConstnt", &mlp], 2);
    assert_eq!(
        err,
        "irpass-opt: error: no pass named `FoldConstnt` is registered for IR `relay` (did you \
         mean `FoldConstant`?); `irpass-opt --list-passes` lists them\n"
    );
    let err = fails(&["-p", "VectorizeLoops", &mlp], 2);
    assert!(!err.contains("use irpass_passes"), "{err}");
    assert!(
        err.ends_with("`irpass-opt --list-passes` lists them\n"),
        "{err}"
    );
}

#[test]
fn every_failure_starts_with_the_one_prefix() {
    let mlp = model("mlp");
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.relay");
    std::fs::write(&bad, "def @main( {").unwrap();
    let bad = bad.to_str().unwrap();
    let missing = dir.path().join("missing.relay");
    let missing = missing.to_str().unwrap();
    for (args, code) in [
        (vec!["--bogus", &mlp], 2),                     // clap
        (vec!["-time-passes", &mlp], 2),                // LLVM's one dash
        (vec!["-O7", &mlp], 2),                         // a value out of range
        (vec!["-O2", missing], 1),                      // unreadable input
        (vec!["-O2", bad], 1),                          // a parse error
        (vec!["-p", "FoldConstant,", &mlp], 2),         // pipeline text
        (vec!["-O2", "--config", "nonsense", &mlp], 2), // KEY=VALUE
        (vec!["--time-passes=svg", "-O2", &mlp], 2),    // a flag value
    ] {
        let err = fails(&args, code);
        assert!(err.starts_with("irpass-opt: error: "), "{args:?}: {err}");
        assert!(
            !err.contains("error: error:") && !err.contains("\nerror:"),
            "{args:?}: one error, one prefix: {err}"
        );
    }
}

/// The `runs:` line of a listing entry, its wrapped continuation lines joined.
fn runs_of(entry: &str) -> String {
    let mut lines = entry.lines().skip_while(|l| !l.starts_with("    runs: "));
    let mut out = lines.next().unwrap_or("").trim().to_string();
    for more in lines.take_while(|l| l.starts_with("        ")) {
        out.push(' ');
        out.push_str(more.trim());
    }
    out
}

#[test]
fn list_passes_says_what_each_standard_pipeline_runs_as_the_pipeline_does() {
    let out = opt(&["--list-passes"]);
    assert!(out.status.success());
    let listing = text(&out.stdout);
    for n in 0..=3 {
        let pipeline = irpass_passes::pipeline(n);
        let names: Vec<String> = pipeline
            .passes()
            .map(|p| {
                let inner: Vec<&str> = p.passes().map(|q| q.info().name.as_ref()).collect();
                if inner.is_empty() {
                    p.info().name.to_string()
                } else {
                    format!("{}({})", p.info().name, inner.join(", "))
                }
            })
            .collect();
        // No library pass requires another (types are an analysis), so nothing is added.
        let expected = format!("runs: {}", names.join(", "));
        let entry = listing
            .split(&format!("\nO{n} "))
            .nth(1)
            .unwrap_or_else(|| panic!("no entry for O{n}: {listing}"));
        assert_eq!(runs_of(entry), expected, "O{n}");
    }
    // The passes the old hand-written descriptions left out are listed.
    let o3 = listing.split("\nO3 ").nth(1).unwrap();
    for name in ["FuseOps", "FoldScaleAxis("] {
        assert!(runs_of(o3).contains(name), "{name}");
    }
}
