//! Macro-defined passes behave exactly like hand-written ones: the same pipelines, built both
//! ways, give the same modules, the same instrument events and the same errors under every
//! enabling rule, requirement, veto, failure and panic.

use irpass::{Pass, PassContext, Sequential};
use irpass_tests::macro_passes::{AddExtra, Fails, Keep, NeedsOne, One, Panics, Three};
use irpass_tests::trace::{Trace, events, new_log};
use irpass_tests::*;

/// The hand-written pipeline and its macro-defined mirror.
fn pipelines() -> (Sequential<Tiny>, Sequential<Tiny>) {
    let hand = Sequential::named(
        "pipeline",
        [
            push("One", 1, 1),
            keep("Keep", 0),
            push("Three", 3, 3),
            module_pass("NeedsOne", 2, |m, _| Ok(m))
                .requires_pass(push("One", 1, 1))
                .pass(),
            add_function("AddExtra", "extra"),
        ],
    )
    .unwrap();
    let macros = Sequential::named(
        "pipeline",
        [
            Pass::from(One),
            Keep.into(),
            Three.into(),
            NeedsOne.into(),
            AddExtra.into(),
        ],
    )
    .unwrap();
    (hand, macros)
}

/// Runs `seq` under a context from `build` with a [`Trace`], returning the outcome as text
/// and the trace's events.
fn run(
    seq: &Sequential<Tiny>,
    build: impl Fn(irpass::PassContextBuilder) -> irpass::PassContextBuilder,
    veto: Option<&str>,
) -> (String, Vec<String>) {
    let log = new_log();
    let mut trace = Trace::new("t", &log).show_modules();
    if let Some(name) = veto {
        trace = trace.veto(name);
    }
    let ctx = build(PassContext::builder().instrument(trace))
        .build()
        .unwrap();
    let outcome = match seq.run_in(Tiny::new([("main", vec![])]), &ctx) {
        Ok(m) => format!("ok: {m}"),
        Err(e) => format!("error: {e}; last good: {}", e.module()),
    };
    (outcome, events(&log))
}

fn assert_same(
    build: impl Fn(irpass::PassContextBuilder) -> irpass::PassContextBuilder + Copy,
    veto: Option<&str>,
    what: &str,
) {
    let (hand, macros) = pipelines();
    let expected = run(&hand, build, veto);
    let actual = run(&macros, build, veto);
    assert!(!expected.1.is_empty(), "{what}: the trace saw nothing");
    assert_eq!(actual, expected, "{what}");
}

#[test]
fn same_results_and_events_at_every_opt_level() {
    for level in 0..=4 {
        assert_same(
            move |b| b.opt_level(level),
            None,
            &format!("opt_level {level}"),
        );
    }
}

#[test]
fn same_results_and_events_with_disabled_and_required_passes() {
    assert_same(
        |b| b.opt_level(3).disabled_pass("One"),
        None,
        "One disabled",
    );
    assert_same(
        |b| b.opt_level(0).required_pass("Three"),
        None,
        "Three required",
    );
    assert_same(
        |b| b.opt_level(2).disabled_pass("NeedsOne"),
        None,
        "NeedsOne disabled",
    );
}

#[test]
fn same_results_and_events_when_an_instrument_vetoes() {
    assert_same(|b| b.opt_level(3), Some("One"), "One vetoed");
    assert_same(|b| b.opt_level(3), Some("NeedsOne"), "NeedsOne vetoed");
}

#[test]
fn a_required_pass_named_by_type_runs_first_like_one_given_as_a_value() {
    let (hand, macros) = pipelines();
    let (out, events) = run(&macros, |b| b.opt_level(2).disabled_pass("Keep"), None);
    assert_eq!(
        run(&hand, |b| b.opt_level(2).disabled_pass("Keep"), None).0,
        out
    );
    // One runs at level 1 as a member, then NeedsOne's requirement is satisfied by that run
    // (the module did not change in between: Keep is disabled, Three is above the level).
    assert_eq!(out, "ok: def @main: [1]\ndef @extra: []\n");
    assert_eq!(
        events.iter().filter(|e| e.contains("before One")).count(),
        1,
        "{events:?}"
    );
}

#[test]
fn failures_and_panics_are_reported_the_same_way() {
    for (hand, mac, what) in [
        (fail("Fails"), Pass::from(Fails), "error"),
        (panicking("Panics"), Pass::from(Panics), "panic"),
    ] {
        let hand = Sequential::named("outer", [push("One", 1, 1), hand]).unwrap();
        let mac = Sequential::named("outer", [Pass::from(One), mac]).unwrap();
        let expected = run(&hand, |b| b.opt_level(2), None);
        let actual = run(&mac, |b| b.opt_level(2), None);
        assert!(
            expected.0.starts_with("error: pass `"),
            "{what}: {}",
            expected.0
        );
        assert!(
            expected.0.contains("last good: def @main: [1]"),
            "{what}: {}",
            expected.0
        );
        assert_eq!(actual, expected, "{what}");
    }
}

#[test]
fn function_passes_give_the_same_output_at_any_thread_count() {
    let module = Tiny::with_functions(64);
    let hand = Sequential::new([push("One", 1, 1)]).unwrap();
    let mac = Sequential::new([Pass::from(One)]).unwrap();
    for threads in [1, 2] {
        let ctx = PassContext::builder()
            .opt_level(1)
            .threads(threads)
            .build()
            .unwrap();
        let a = hand.run_in(module.clone(), &ctx).unwrap();
        let b = mac.run_in(module.clone(), &ctx).unwrap();
        assert_eq!(a.to_string(), b.to_string(), "threads {threads}");
        assert_eq!(b.body("f0").unwrap().last(), Some(&1), "threads {threads}");
    }
}
