//! The semantics of failures (`core/src/guide/semantics.md`, "Failures"): every failure position, as error and as panic.

use irpass::{ContextError, Culprit, FailureCause, Hook, IrModule, PassContext, Sequential};
use irpass_tests::trace::{events, new_log};
use irpass_tests::*;

const MODES: [FaultMode; 2] = [FaultMode::Error, FaultMode::Panic];

fn is_mode(cause: &FailureCause, mode: FaultMode) -> bool {
    matches!(
        (cause, mode),
        (FailureCause::Error(_), FaultMode::Error) | (FailureCause::Panic(_), FaultMode::Panic)
    )
}

#[test]
fn failing_pass_stops_the_sequential_and_its_error_names_the_path_and_carries_the_last_good_module()
{
    let log = new_log();
    let ctx = PassContext::builder()
        .instrument(Trace::new("t", &log))
        .build()
        .unwrap();
    let inner =
        Sequential::named("inner", [push("A", 0, 1), fail("Bad"), push("Never", 0, 3)]).unwrap();
    let outer = Sequential::named(
        "outer",
        [push("First", 0, 9), inner.into(), push("Later", 0, 4)],
    )
    .unwrap();
    let input = Tiny::main();
    let err = outer.run_in(input.clone(), &ctx).unwrap_err();
    assert_eq!(err.path(), ["outer", "inner", "Bad"]);
    assert_eq!(err.pass_name(), "Bad");
    assert_eq!(
        err.culprit(),
        &Culprit::Pass {
            name: "Bad".into(),
            function: None
        }
    );
    assert_eq!(
        err.to_string(),
        "pass `Bad` failed at `outer/inner/Bad`: deliberate failure"
    );
    assert_eq!(err.module().body("main").unwrap(), [9, 1]);
    // The caller's module is untouched.
    assert_eq!(input.body("main").unwrap(), Vec::<i64>::new().as_slice());
    let ev = events(&log);
    assert!(
        !ev.iter()
            .any(|e| e.contains("Never") || e.contains("Later")),
        "{ev:?}"
    );
    // Every before is matched by an after or a failed, innermost first.
    let tail: Vec<&String> = ev.iter().rev().take(3).collect();
    assert_eq!(tail, ["t.failed outer", "t.failed inner", "t.failed Bad"]);
}

#[test]
fn panic_in_a_pass_becomes_an_error_naming_the_pass() {
    let seq = Sequential::named("s", [push("A", 0, 1), panicking("Kaboom")]).unwrap();
    let err = seq
        .run_in(Tiny::main(), &PassContext::default())
        .unwrap_err();
    assert!(err.is_panic());
    assert_eq!(
        err.to_string(),
        "pass `Kaboom` panicked at `s/Kaboom`: deliberate panic"
    );
    assert_eq!(err.into_module().body("main").unwrap(), [1]);
}

#[test]
fn failure_in_a_function_pass_names_the_function_and_is_the_first_in_module_order_at_any_thread_count()
 {
    let pass = || {
        function_pass("Picky", 0, |f, _, _| {
            if f.body[0] % 3 == 2 {
                if f.body[0] == 5 {
                    panic!("five")
                } else {
                    Err(format!("bad {}", f.body[0]).into())
                }
            } else {
                Ok(f)
            }
        })
        .pass()
    };
    for threads in [1, 2, 4] {
        let ctx = PassContext::builder().threads(threads).build().unwrap();
        let err = pass().run_in(Tiny::with_functions(64), &ctx).unwrap_err();
        assert_eq!(
            err.culprit(),
            &Culprit::Pass {
                name: "Picky".into(),
                function: Some("f2".into())
            }
        );
        assert_eq!(
            err.to_string(),
            "pass `Picky` on function `f2` failed at `Picky`: bad 2"
        );
    }
    let only_panics = Tiny::new([("a", vec![0]), ("b", vec![5])]);
    let err = pass()
        .run_in(only_panics, &PassContext::default())
        .unwrap_err();
    assert!(err.is_panic());
    assert_eq!(
        err.to_string(),
        "pass `Picky` on function `b` panicked at `Picky`: five"
    );
}

#[test]
fn failure_in_should_run_before_or_after_hook_is_an_error_naming_the_instrument_and_hook() {
    for hook in [Hook::ShouldRun, Hook::RunBeforePass, Hook::RunAfterPass] {
        for mode in MODES {
            let log = new_log();
            let ctx = PassContext::builder()
                .instrument(Trace::new("first", &log))
                .instrument(Trace::new("bad", &log).fault(hook, Some("P"), mode))
                .instrument(Trace::new("last", &log))
                .build()
                .unwrap();
            let seq = Sequential::named("s", [push("A", 0, 1), push("P", 0, 2), push("Z", 0, 3)])
                .unwrap();
            let err = seq.run_in(Tiny::main(), &ctx).unwrap_err();
            assert_eq!(
                err.culprit(),
                &Culprit::Instrument {
                    name: "bad".into(),
                    hook
                },
                "{hook} {mode:?}"
            );
            assert!(is_mode(err.cause(), mode), "{hook} {mode:?}: {err}");
            assert_eq!(err.path(), ["s", "P"]);
            assert!(err.to_string().starts_with(&format!(
                "instrument `bad` failed in {hook} for pass `P` at `s/P`"
            )));
            // The last good module is P's input.
            assert_eq!(err.module().body("main").unwrap(), [1], "{hook} {mode:?}");
            let ev = events(&log);
            assert!(
                !ev.iter().any(|e| e.ends_with(" Z")),
                "the Sequential stopped: {ev:?}"
            );
            match hook {
                // Only instruments whose before hook succeeded learn that P failed.
                Hook::RunBeforePass => {
                    assert!(ev.contains(&"first.failed P".to_string()), "{ev:?}");
                    assert!(
                        !ev.contains(&"bad.failed P".to_string())
                            && !ev.contains(&"last.before P".to_string())
                    );
                }
                Hook::ShouldRun => assert!(!ev.iter().any(|e| e.contains("before P")), "{ev:?}"),
                // Instruments after the failing one get `failed` instead of `after`.
                _ => {
                    assert!(ev.contains(&"first.after P".to_string()), "{ev:?}");
                    assert!(ev.contains(&"last.failed P".to_string()), "{ev:?}");
                    assert!(!ev.contains(&"last.after P".to_string()), "{ev:?}");
                }
            }
        }
    }
}

#[test]
fn failure_in_run_after_pass_failed_is_attached_to_the_first_error_not_replacing_it() {
    let log = new_log();
    let ctx = PassContext::builder()
        .instrument(Trace::new("t", &log).fault(
            Hook::RunAfterPassFailed,
            Some("Bad"),
            FaultMode::Panic,
        ))
        .build()
        .unwrap();
    let err = fail("Bad").run_in(Tiny::main(), &ctx).unwrap_err();
    assert_eq!(
        err.culprit(),
        &Culprit::Pass {
            name: "Bad".into(),
            function: None
        }
    );
    assert_eq!(err.secondary().len(), 1);
    assert_eq!(
        err.secondary()[0].culprit,
        Culprit::Instrument {
            name: "t".into(),
            hook: Hook::RunAfterPassFailed
        }
    );
    assert!(
        err.to_string().contains(
            "; while handling it, instrument `t` in run_after_pass_failed failed: panicked"
        ),
        "{err}"
    );
}

#[test]
fn enter_failure_exits_earlier_instruments_in_reverse_clears_instruments_and_does_not_enter() {
    for mode in MODES {
        let log = new_log();
        let ctx = PassContext::builder()
            .opt_level(1)
            .instrument(Trace::new("a", &log))
            .instrument(Trace::new("b", &log))
            .instrument(Trace::new("c", &log).fault(Hook::EnterPassCtx, None, mode))
            .instrument(Trace::new("d", &log))
            .build()
            .unwrap();
        let err = ctx.enter().err().expect("enter fails");
        let ContextError::Hook { first, also } = &err else {
            panic!("{err}")
        };
        assert_eq!(
            (first.instrument.as_str(), first.hook),
            ("c", Hook::EnterPassCtx)
        );
        assert!(is_mode(&first.cause, mode));
        assert!(also.is_empty());
        assert_eq!(
            events(&log),
            ["a.enter", "b.enter", "c.enter", "b.exit", "a.exit"]
        );
        assert!(ctx.instruments().is_empty());
        assert_eq!(
            PassContext::current().opt_level(),
            2,
            "the context was not entered"
        );
    }
}

#[test]
fn exit_failure_skips_later_exits_and_clears_instruments() {
    for mode in MODES {
        let log = new_log();
        let ctx = PassContext::builder()
            .instrument(Trace::new("a", &log))
            .instrument(Trace::new("b", &log).fault(Hook::ExitPassCtx, None, mode))
            .instrument(Trace::new("c", &log))
            .build()
            .unwrap();
        let guard = ctx.enter().unwrap();
        let err = guard.exit().unwrap_err();
        let ContextError::Hook { first, .. } = &err else {
            panic!("{err}")
        };
        assert_eq!(
            (first.instrument.as_str(), first.hook),
            ("b", Hook::ExitPassCtx)
        );
        assert!(is_mode(&first.cause, mode));
        assert_eq!(
            events(&log),
            ["a.enter", "b.enter", "c.enter", "a.exit", "b.exit"]
        );
        assert!(ctx.instruments().is_empty());
        assert!(
            !PassContext::current().same_as(&ctx),
            "the context is no longer current"
        );
    }
}

#[test]
fn second_failure_during_enter_clean_up_is_attached_and_never_aborts() {
    let log = new_log();
    let ctx = PassContext::builder()
        .instrument(Trace::new("a", &log).fault(Hook::ExitPassCtx, None, FaultMode::Panic))
        .instrument(Trace::new("b", &log).fault(Hook::ExitPassCtx, None, FaultMode::Error))
        .instrument(Trace::new("c", &log).fault(Hook::EnterPassCtx, None, FaultMode::Error))
        .build()
        .unwrap();
    let err = ctx.enter().err().expect("enter fails");
    let ContextError::Hook { first, also } = &err else {
        panic!("{err}")
    };
    assert_eq!(first.instrument, "c");
    let cleanup: Vec<(&str, Hook)> = also
        .iter()
        .map(|h| (h.instrument.as_str(), h.hook))
        .collect();
    assert_eq!(
        cleanup,
        [("b", Hook::ExitPassCtx), ("a", Hook::ExitPassCtx)]
    );
    assert_eq!(
        events(&log),
        ["a.enter", "b.enter", "c.enter", "b.exit", "a.exit"]
    );
    let msg = err.to_string();
    assert!(
        msg.starts_with("instrument `c` failed in enter_pass_ctx: c injected fault"),
        "{msg}"
    );
    assert!(
        msg.contains("while handling it, instrument `a` failed in exit_pass_ctx: panicked"),
        "{msg}"
    );
}

#[test]
fn exit_failure_in_a_dropped_guard_is_kept_on_the_context() {
    let log = new_log();
    let ctx = PassContext::builder()
        .instrument(Trace::new("a", &log).fault(Hook::ExitPassCtx, None, FaultMode::Error))
        .build()
        .unwrap();
    {
        let _guard = ctx.enter().unwrap();
    }
    let errors = ctx.take_exit_errors();
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0]
            .to_string()
            .contains("instrument `a` failed in exit_pass_ctx")
    );
}

#[test]
fn the_callers_module_is_never_mutated_by_a_run() {
    let input = Tiny::new([("main", vec![1]), ("g", vec![2])]);
    let before = input.to_string();
    let seq =
        Sequential::new([push("A", 0, 1), add_function("Add", "h"), push("B", 0, 2)]).unwrap();
    let out = seq.run_in(input.clone(), &PassContext::default()).unwrap();
    assert_eq!(input.to_string(), before);
    assert!(!out.same_as(&input));
    assert_eq!(out.body("h").unwrap(), [2]);
}
