//! What `irpass-opt` reports about a run: a pass the context skips, with the reason, in
//! `--print-changed` and `--time-passes` (the instruments' `run_skipped_pass` hook);
//! `--debug-pass-manager`'s one line per decision; `--stats`' counters; and `--help`'s
//! explanation of the timing tree.

mod cli_support;

use cli_support::{model, opt, text};

fn stderr_of(args: &[&str]) -> String {
    let out = opt(args);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{args:?}: {err}");
    err
}

#[test]
fn print_changed_says_which_passes_were_skipped_and_why() {
    let err = stderr_of(&[
        "-O2",
        "--disable-pass=FoldConstant",
        "--print-changed",
        &model("mlp"),
    ]);
    let skips: Vec<&str> = err.lines().filter(|l| l.contains("skipped")).collect();
    // O2 holds FoldConstant twice.
    assert_eq!(
        skips, ["*** IR Pass FoldConstant skipped: the context disables it ***"; 2],
        "{err}"
    );
    // A veto: `--opt-bisect-limit` stops the passes after the first N.
    let err = stderr_of(&[
        "-p",
        "SimplifyExpr,DeadCodeElimination",
        "--opt-bisect-limit=0",
        "--print-changed",
        &model("mlp"),
    ]);
    assert!(
        err.contains(
            "*** IR Pass DeadCodeElimination skipped: instrument `OptBisect` said it should not \
             run ***"
        ),
        "{err}"
    );
}

#[test]
fn the_timing_tree_keeps_tvms_rows_and_its_json_shows_a_skipped_pass_with_the_reason() {
    let mlp = model("mlp");
    let err = stderr_of(&["-O2", "--disable-pass=FoldConstant", "--time-passes", &mlp]);
    assert!(
        err.lines().any(|l| l.starts_with("\t\tSimplifyExpr: ")),
        "{err}"
    );
    assert!(!err.contains("FoldConstant"), "{err}");
    assert!(!err.contains("skipped"), "{err}");
    let err = stderr_of(&[
        "-O2",
        "--disable-pass=FoldConstant",
        "--time-passes=json",
        &mlp,
    ]);
    let json: serde_json::Value = serde_json::from_str(&err).unwrap();
    let o2 = &json[0]["children"][0];
    assert_eq!(o2["name"], "O2");
    let skipped: Vec<&serde_json::Value> = o2["children"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !c["skipped"].is_null())
        .collect();
    assert_eq!(skipped.len(), 2);
    assert_eq!(skipped[0]["name"], "FoldConstant");
    assert_eq!(skipped[0]["skipped"], "the context disables it");
    assert_eq!(skipped[0]["total_ns"], 0);
}

#[test]
fn help_explains_the_timing_tree_columns_and_its_root() {
    let out = opt(&["--help"]);
    let help = text(&out.stdout);
    assert!(out.status.success());
    for phrase in [
        "NAME: TOTALus [SELFus] (% of the whole run; % of its parent)",
        "the root `sequential` is the whole pipeline",
        "Passes that did not run have no row",
    ] {
        assert!(
            help.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .contains(phrase),
            "{phrase}: {help}"
        );
    }
}

#[test]
fn debug_pass_manager_prints_one_line_per_pass_decision() {
    let err = stderr_of(&[
        "-O1",
        "--disable-pass=Inline",
        "--debug-pass-manager",
        &model("mlp"),
    ]);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines[0], "Running pass: sequential");
    assert_eq!(lines[1], "Running pass: O1");
    assert!(
        lines.contains(&"Skipping pass: Inline (the context disables it)"),
        "{err}"
    );
    assert!(lines.contains(&"Running pass: FuseOps"), "{err}");
    let kinds = [
        "Running pass: ",
        "Skipping pass: ",
        "Running analysis: ",
        "Cached analysis: ",
        "Invalidating analysis: ",
    ];
    assert!(
        lines.iter().all(|l| kinds.iter().any(|k| l.starts_with(k))),
        "{err}"
    );
    // The passes that read types ask for the analysis: computed once for `@main`, then
    // served from the cache until FuseOps changes the function.
    let computed = |what: &str| lines.iter().filter(|l| **l == what).count();
    assert_eq!(
        computed("Running analysis: Types (on a function)"),
        1,
        "{err}"
    );
    assert!(
        computed("Cached analysis: Types (on a function)") >= 2,
        "{err}"
    );
    assert!(
        lines.contains(&"Invalidating analysis: Types (1 results, after FuseOps)"),
        "{err}"
    );
}

#[test]
fn stats_prints_the_counters_the_passes_moved_and_nothing_when_none_moved() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.relay");
    std::fs::write(
        &input,
        "def @main(%x: Tensor[(2), float32]) {
           let %unused = exp(%x);
           let %a = add(1f, 2f);
           let %b = multiply(%x, %a);
           let %c = multiply(%x, %a);
           add(%b, %c)
         }",
    )
    .unwrap();
    let err = stderr_of(&["-O3", "--stats", input.to_str().unwrap()]);
    let counters: Vec<&str> = err
        .lines()
        .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .collect();
    assert_eq!(
        counters,
        [
            "1 DeadCodeElimination - unused bindings removed",
            "1 EliminateCommonSubexpr - expressions merged with an equal earlier one",
            "1 FoldConstant - operator calls folded into constants",
        ],
        "{err}"
    );
    assert!(err.contains("... Statistics Collected ..."), "{err}");
    // Nothing to count (`-O0` on a model with nothing to fold): no banner either.
    let err = stderr_of(&["-p", "FoldConstant", "--stats", &model("mlp")]);
    assert_eq!(err, "", "{err}");
}
