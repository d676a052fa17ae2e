//! The pass context (the guide's "Concepts", `core/src/guide/concepts.md`, "PassContext"): defaults, the thread-local stack, scopes, threads.

use std::sync::{Arc, Mutex};
use std::thread;

use irpass::{
    ContextError, Hook, IrModule, ModuleView, PassContext, PassInfo, PassInstrument, Sequential,
};
use irpass_tests::trace::{events, new_log};
use irpass_tests::*;

#[test]
fn context_defaults_are_opt_level_2_empty_lists_no_config_no_instruments() {
    for ctx in [
        PassContext::default(),
        PassContext::builder().build().unwrap(),
    ] {
        assert_eq!(ctx.opt_level(), 2);
        assert_eq!(ctx.required_passes().count(), 0);
        assert_eq!(ctx.disabled_passes().count(), 0);
        assert!(ctx.config().is_empty());
        assert!(ctx.instruments().is_empty());
        assert_eq!(ctx.threads(), None);
    }
}

#[test]
fn current_outside_any_scope_is_the_threads_own_default_context() {
    let a = PassContext::current();
    let b = PassContext::current();
    assert!(a.same_as(&b), "one default per thread");
    let other = thread::spawn(PassContext::current).join().unwrap();
    assert!(!other.same_as(&a), "another thread has its own default");
}

#[test]
fn a_new_thread_starts_with_its_own_default_not_its_parents_context() {
    let ctx = PassContext::builder().opt_level(3).build().unwrap();
    let _guard = ctx.enter().unwrap();
    assert_eq!(PassContext::current().opt_level(), 3);
    let seen = thread::spawn(|| PassContext::current().opt_level())
        .join()
        .unwrap();
    assert_eq!(seen, 2);
}

#[test]
fn nested_context_inherits_nothing_from_the_outer_one() {
    let outer = PassContext::builder()
        .opt_level(3)
        .disabled_pass("X")
        .build()
        .unwrap();
    let inner = PassContext::builder().opt_level(1).build().unwrap();
    outer
        .scope(|| {
            inner
                .scope(|| {
                    let cur = PassContext::current();
                    assert_eq!(cur.opt_level(), 1);
                    assert!(!cur.is_disabled("X"));
                })
                .unwrap();
            assert!(PassContext::current().same_as(&outer));
        })
        .unwrap();
}

/// Records, in each context hook, whether its own context (opt_level 7) is current.
struct SeesCurrent(Arc<Mutex<Vec<(String, bool)>>>);
impl PassInstrument for SeesCurrent {
    fn name(&self) -> &str {
        "SeesCurrent"
    }
    fn enter_pass_ctx(&self) -> irpass::Result<()> {
        self.0
            .lock()
            .unwrap()
            .push(("enter".into(), PassContext::current().opt_level() == 4));
        Ok(())
    }
    fn exit_pass_ctx(&self) -> irpass::Result<()> {
        self.0
            .lock()
            .unwrap()
            .push(("exit".into(), PassContext::current().opt_level() == 4));
        Ok(())
    }
    fn run_before_pass(&self, _: &dyn ModuleView, _: &PassInfo) -> irpass::Result<()> {
        self.0
            .lock()
            .unwrap()
            .push(("before".into(), PassContext::current().opt_level() == 4));
        Ok(())
    }
}

#[test]
fn enter_hooks_run_before_the_context_is_current_and_exit_hooks_after_it_stops_being_current() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let ctx = PassContext::builder()
        .opt_level(4)
        .instrument(SeesCurrent(seen.clone()))
        .build()
        .unwrap();
    ctx.scope(|| push("P", 0, 1).run(Tiny::main()).unwrap())
        .unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            ("enter".to_string(), false),
            ("before".to_string(), true),
            ("exit".to_string(), false)
        ]
    );
}

#[test]
fn the_same_context_entered_twice_runs_its_hooks_twice() {
    let log = new_log();
    let ctx = PassContext::builder()
        .instrument(Trace::new("t", &log))
        .build()
        .unwrap();
    let g1 = ctx.enter().unwrap();
    let g2 = ctx.enter().unwrap();
    g2.exit().unwrap();
    assert!(PassContext::current().same_as(&ctx));
    g1.exit().unwrap();
    assert_eq!(events(&log), ["t.enter", "t.enter", "t.exit", "t.exit"]);
}

#[test]
fn leaving_scopes_out_of_order_is_an_error_and_never_corrupts_the_stack() {
    let a = PassContext::builder().opt_level(0).build().unwrap();
    let b = PassContext::builder().opt_level(1).build().unwrap();
    let c = PassContext::builder().opt_level(3).build().unwrap();
    let ga = a.enter().unwrap();
    let gb = b.enter().unwrap();
    let gc = c.enter().unwrap();
    let err = gb.exit().unwrap_err();
    assert!(
        matches!(err, ContextError::OutOfOrder { inner: 1, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("left out of order"));
    // c is still current; when it goes, a (not the removed b) is current again.
    assert_eq!(PassContext::current().opt_level(), 3);
    gc.exit().unwrap();
    assert_eq!(PassContext::current().opt_level(), 0);
    ga.exit().unwrap();
    assert_eq!(PassContext::current().opt_level(), 2);
}

#[test]
fn override_instruments_exits_the_old_instruments_and_enters_the_new_ones() {
    let log = new_log();
    let ctx = PassContext::builder()
        .instrument(Trace::new("old", &log))
        .build()
        .unwrap();
    let guard = ctx.enter().unwrap();
    ctx.override_instruments(vec![Arc::new(Trace::new("new", &log))])
        .unwrap();
    push("P", 0, 1).run(Tiny::main()).unwrap();
    guard.exit().unwrap();
    assert_eq!(
        events(&log),
        [
            "old.enter",
            "old.exit",
            "new.enter",
            "new.should_run P",
            "new.before P",
            "new.after P",
            "new.exit"
        ]
    );
}

#[test]
fn override_instruments_applies_the_enter_failure_protocol_to_the_new_instruments() {
    let log = new_log();
    let ctx = PassContext::builder()
        .instrument(Trace::new("old", &log))
        .build()
        .unwrap();
    let err = ctx
        .override_instruments(vec![
            Arc::new(Trace::new("n1", &log)),
            Arc::new(Trace::new("n2", &log).fault(Hook::EnterPassCtx, None, FaultMode::Error)),
        ])
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("instrument `n2` failed in enter_pass_ctx")
    );
    assert_eq!(
        events(&log),
        ["old.exit", "n1.enter", "n2.enter", "n1.exit"]
    );
    assert!(ctx.instruments().is_empty());
}

#[test]
fn a_parallel_function_pass_sees_the_running_context_as_current_on_its_worker_threads() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let pass = function_pass("Look", 0, move |f, _, _| {
        s.lock()
            .unwrap()
            .push((PassContext::current().opt_level(), thread::current().id()));
        Ok(f)
    })
    .pass();
    let ctx = PassContext::builder()
        .opt_level(3)
        .threads(2)
        .build()
        .unwrap();
    // Run without entering ctx: the runner makes it current wherever the pass runs.
    pass.run_in(Tiny::with_functions(200), &ctx).unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 200);
    assert!(seen.iter().all(|(level, _)| *level == 3));
    assert!(
        seen.iter().any(|(_, id)| *id != thread::current().id()),
        "ran on worker threads"
    );
}

#[test]
fn function_pass_skips_functions_marked_skip_optimization() {
    let mut m = Tiny::new([("a", vec![1])]);
    m.add("skipped", vec![2], true);
    let out = push("P", 0, 9).run_in(m, &PassContext::default()).unwrap();
    assert_eq!(out.body("a").unwrap(), [1, 9]);
    assert_eq!(out.body("skipped").unwrap(), [2]);
}

#[test]
fn function_pass_output_is_identical_at_one_and_many_threads() {
    let square = || {
        function_pass("Square", 0, |f, m, _| {
            // Uses the module too: the result depends on every function's first value.
            let total: i64 = m.functions().map(|(_, g)| g.body[0]).sum();
            let body = f.body.iter().map(|v| v * v + total).collect();
            Ok(Arc::new(Func { body, skip: false }))
        })
        .pass()
    };
    let seq = Sequential::new([square(), push("P", 0, 1), square()]).unwrap();
    let run = |threads| {
        let ctx = PassContext::builder().threads(threads).build().unwrap();
        seq.run_in(Tiny::with_functions(500), &ctx)
            .unwrap()
            .to_string()
    };
    let one = run(1);
    assert_eq!(run(2), one);
    assert_eq!(run(8), one);
    let serial = function_pass("SerialSquare", 0, |f, _, _| Ok(f))
        .serial()
        .pass();
    assert!(
        serial
            .run_in(Tiny::with_functions(3), &PassContext::default())
            .is_ok()
    );
}

#[test]
fn function_pass_that_changes_nothing_returns_the_same_module_value() {
    let m = Tiny::with_functions(100);
    let out = function_pass("Id", 0, |f, _, _| Ok(f))
        .pass()
        .run_in(m.clone(), &PassContext::default())
        .unwrap();
    assert!(out.same_as(&m));
}

#[test]
fn eight_threads_run_pipelines_in_their_own_nested_contexts_without_cross_talk() {
    let handles: Vec<_> = (0..8)
        .map(|t: i64| {
            thread::spawn(move || {
                let log = new_log();
                for round in 0..20 {
                    let outer = PassContext::builder()
                        .opt_level(1)
                        .instrument(Trace::new(&format!("o{t}"), &log))
                        .build()
                        .unwrap();
                    let inner = PassContext::builder()
                        .opt_level(3)
                        .threads(2)
                        .instrument(Trace::new(&format!("i{t}"), &log))
                        .build()
                        .unwrap();
                    let seq = Sequential::new([push("Lo", 1, t), push("Hi", 3, round)]).unwrap();
                    let (a, b) = outer
                        .scope(|| {
                            let a = seq.run(Tiny::with_functions(4)).unwrap();
                            let b = inner
                                .scope(|| seq.run(Tiny::with_functions(4)).unwrap())
                                .unwrap();
                            (a, b)
                        })
                        .unwrap();
                    assert_eq!(a.body("f1").unwrap(), [1, t]);
                    assert_eq!(b.body("f1").unwrap(), [1, t, round]);
                }
                let ev = events(&log);
                let mine = |e: &String| {
                    e.starts_with(&format!("o{t}.")) || e.starts_with(&format!("i{t}."))
                };
                assert!(
                    ev.iter().all(mine),
                    "thread {t} saw another thread's events"
                );
                let inner_hi = ev
                    .iter()
                    .filter(|e| *e == &format!("i{t}.before Hi"))
                    .count();
                let outer_hi = ev
                    .iter()
                    .filter(|e| *e == &format!("o{t}.before Hi"))
                    .count();
                (inner_hi, outer_hi)
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), (20, 0));
    }
}
