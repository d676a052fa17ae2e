//! The semantics of instrument hooks (`core/src/guide/semantics.md`, "Instrument hooks"): order, should_run, veto, nesting.

use irpass::{Hook, PassContext, Sequential};
use irpass_tests::trace::{events, events_with, new_log};
use irpass_tests::*;

#[test]
fn hooks_are_called_on_every_instrument_in_the_order_given_and_sequentials_bracket_children() {
    let log = new_log();
    let ctx = PassContext::builder()
        .instrument(Trace::new("a", &log))
        .instrument(Trace::new("b", &log))
        .build()
        .unwrap();
    let inner = Sequential::named("inner", [push("P2", 0, 2)]).unwrap();
    let outer = Sequential::named("outer", [push("P1", 0, 1), inner.into()]).unwrap();
    let guard = ctx.enter().unwrap();
    outer.run(Tiny::main()).unwrap();
    guard.exit().unwrap();
    let expected = [
        "a.enter",
        "b.enter",
        "a.should_run outer",
        "b.should_run outer",
        "a.before outer",
        "b.before outer",
        "a.should_run P1",
        "b.should_run P1",
        "a.before P1",
        "b.before P1",
        "a.after P1",
        "b.after P1",
        "a.should_run inner",
        "b.should_run inner",
        "a.before inner",
        "b.before inner",
        "a.should_run P2",
        "b.should_run P2",
        "a.before P2",
        "b.before P2",
        "a.after P2",
        "b.after P2",
        "a.after inner",
        "b.after inner",
        "a.after outer",
        "b.after outer",
        "a.exit",
        "b.exit",
    ];
    assert_eq!(events(&log), expected);
}

#[test]
fn should_run_is_called_on_every_instrument_even_after_one_says_no() {
    let log = new_log();
    let ctx = PassContext::builder()
        .instrument(Trace::new("a", &log).veto("P"))
        .instrument(Trace::new("b", &log))
        .instrument(Trace::new("c", &log))
        .build()
        .unwrap();
    push("P", 0, 1).run_in(Tiny::main(), &ctx).unwrap();
    // Then, the veto made, each hears that the pass was skipped and who said no first.
    assert_eq!(
        events(&log),
        [
            "a.should_run P",
            "b.should_run P",
            "c.should_run P",
            "a.skipped[instrument `a` said it should not run] P",
            "b.skipped[instrument `a` said it should not run] P",
            "c.skipped[instrument `a` said it should not run] P",
        ]
    );
}

#[test]
fn the_skip_hook_names_the_first_instrument_that_said_no() {
    let log = new_log();
    let ctx = PassContext::builder()
        .instrument(Trace::new("a", &log))
        .instrument(Trace::new("b", &log).veto("P"))
        .instrument(Trace::new("c", &log).veto("P"))
        .build()
        .unwrap();
    push("P", 0, 1).run_in(Tiny::main(), &ctx).unwrap();
    let skipped = events_with(&log, "a.skipped");
    assert_eq!(
        skipped,
        ["a.skipped[instrument `b` said it should not run] P"]
    );
}

#[test]
fn a_failing_skip_hook_is_an_error_naming_the_instrument_and_keeps_the_module() {
    let log = new_log();
    let ctx = PassContext::builder()
        .disabled_pass("Off")
        .instrument(Trace::new("a", &log).fault(
            Hook::RunSkippedPass,
            Some("Off"),
            FaultMode::Error,
        ))
        .build()
        .unwrap();
    let seq =
        Sequential::named("s", [push("P", 0, 1), push("Off", 0, 2), push("Q", 0, 3)]).unwrap();
    let err = seq.run_in(Tiny::main(), &ctx).unwrap_err();
    assert_eq!(
        err.culprit(),
        &irpass::Culprit::Instrument {
            name: "a".into(),
            hook: Hook::RunSkippedPass
        }
    );
    assert_eq!(err.path(), ["s", "Off"]);
    // P's output survives; Q never ran.
    assert_eq!(err.module().body("main").unwrap(), [1]);
    assert!(err.to_string().contains("run_skipped_pass"), "{err}");
}

#[test]
fn veto_skips_the_pass_and_its_hooks_and_returns_the_input_module() {
    let log = new_log();
    let ctx = PassContext::builder()
        .instrument(Trace::new("a", &log).veto("P"))
        .build()
        .unwrap();
    let input = Tiny::new([("main", vec![7])]);
    let out = Sequential::named("s", [push("P", 0, 1), push("Q", 0, 2)])
        .unwrap()
        .run_in(input.clone(), &ctx)
        .unwrap();
    assert_eq!(out.body("main").unwrap(), [7, 2]);
    let ev = events(&log);
    assert!(
        !ev.iter().any(|e| e == "a.before P" || e == "a.after P"),
        "{ev:?}"
    );
    // Vetoed alone, the output is the very input value.
    let out = push("P", 0, 1).run_in(input.clone(), &ctx).unwrap();
    assert!(irpass::IrModule::same_as(&out, &input));
}

#[test]
fn run_after_pass_sees_the_output_and_run_before_pass_the_input() {
    let log = new_log();
    let ctx = PassContext::builder()
        .instrument(Trace::new("a", &log).show_modules())
        .build()
        .unwrap();
    push("P", 0, 5).run_in(Tiny::main(), &ctx).unwrap();
    let ev = events(&log);
    assert!(
        ev.contains(&"a.before P | def @main: []".to_string()),
        "{ev:?}"
    );
    assert!(
        ev.contains(&"a.after P | def @main: [5]".to_string()),
        "{ev:?}"
    );
}

#[test]
fn required_passes_and_passes_run_from_a_pass_body_go_through_the_same_funnel() {
    let log = new_log();
    let ctx = PassContext::builder()
        .instrument(Trace::new("a", &log))
        .build()
        .unwrap();
    let inner = push("Inner", 0, 1);
    let outer = module_pass("Outer", 0, move |m, ctx| {
        inner.run_in(m, ctx).map_err(|e| e.to_string().into())
    })
    .requires(&["Analyze"])
    .pass();
    outer.run_in(Tiny::main(), &ctx).unwrap();
    let expected = [
        "a.should_run Analyze",
        "a.before Analyze",
        "a.after Analyze",
        "a.should_run Outer",
        "a.before Outer",
        "a.should_run Inner",
        "a.before Inner",
        "a.after Inner",
        "a.after Outer",
    ];
    assert_eq!(events(&log), expected);
}

#[test]
fn passes_run_inside_a_context_scope_call_only_that_contexts_instruments() {
    let log = new_log();
    let outer = PassContext::builder()
        .instrument(Trace::new("outer", &log))
        .build()
        .unwrap();
    let inner = PassContext::builder()
        .instrument(Trace::new("inner", &log))
        .build()
        .unwrap();
    outer
        .scope(|| {
            inner
                .scope(|| push("P", 0, 1).run(Tiny::main()).unwrap())
                .unwrap();
        })
        .unwrap();
    let ev = events(&log);
    assert_eq!(
        ev,
        [
            "outer.enter",
            "inner.enter",
            "inner.should_run P",
            "inner.before P",
            "inner.after P",
            "inner.exit",
            "outer.exit"
        ]
    );
}
