//! The semantics of enabling and required passes (`core/src/guide/semantics.md`, "Which passes run", "Required passes"): one test per rule.

use irpass::{Pass, PassContext, PassInfo, PassKind, Sequential};
use irpass_tests::trace::{count, events, events_with, new_log, traced_context};
use irpass_tests::*;

fn ctx_at(level: u32) -> PassContext {
    PassContext::builder().opt_level(level).build().unwrap()
}

fn main_body(m: &Tiny) -> Vec<i64> {
    m.body("main").unwrap().to_vec()
}

#[test]
fn enabled_iff_not_disabled_and_required_or_opt_level_at_least_pass_level() {
    let seq = Sequential::new([push("L1", 1, 1), push("L2", 2, 2), push("L3", 3, 3)]).unwrap();
    for (level, expected) in [
        (0, vec![]),
        (1, vec![1]),
        (2, vec![1, 2]),
        (3, vec![1, 2, 3]),
    ] {
        let out = seq.run_in(Tiny::main(), &ctx_at(level)).unwrap();
        assert_eq!(main_body(&out), expected, "at opt_level {level}");
    }
}

#[test]
fn disabled_beats_required() {
    let seq = Sequential::new([push("A", 0, 1), push("B", 0, 2)]).unwrap();
    let ctx = PassContext::builder()
        .required_pass("B")
        .disabled_pass("B")
        .build()
        .unwrap();
    assert_eq!(main_body(&seq.run_in(Tiny::main(), &ctx).unwrap()), [1]);
}

#[test]
fn required_beats_opt_level() {
    let seq = Sequential::new([push("Low", 0, 1), push("High", 3, 2)]).unwrap();
    let ctx = PassContext::builder()
        .opt_level(0)
        .required_pass("High")
        .build()
        .unwrap();
    assert_eq!(main_body(&seq.run_in(Tiny::main(), &ctx).unwrap()), [1, 2]);
}

#[test]
fn a_skipped_pass_fires_none_of_tvms_hooks_only_run_skipped_pass_with_the_reason() {
    let log = new_log();
    let ctx = PassContext::builder()
        .opt_level(1)
        .disabled_pass("Off")
        .instrument(Trace::new("t", &log))
        .build()
        .unwrap();
    let seq = Sequential::named(
        "s",
        [push("Off", 0, 1), push("TooHigh", 2, 2), push("On", 1, 3)],
    )
    .unwrap();
    let out = seq.run_in(Tiny::main(), &ctx).unwrap();
    assert_eq!(out.body("main").unwrap(), [3]);
    // TVM's hooks (should_run, before, after) never see a pass the context skips; the
    // skip hook (LLVM's BeforeSkippedPass) hears it, with why, in pipeline order.
    assert_eq!(
        events(&log),
        [
            "t.should_run s",
            "t.before s",
            "t.skipped[the context disables it] Off",
            "t.skipped[its opt level 2 is above the context's 1] TooHigh",
            "t.should_run On",
            "t.before On",
            "t.after On",
            "t.after s",
        ]
    );
}

#[test]
fn direct_call_always_runs_even_when_disabled_or_above_opt_level() {
    let ctx = PassContext::builder()
        .opt_level(0)
        .disabled_pass("P")
        .build()
        .unwrap();
    let out = push("P", 3, 9).run_in(Tiny::main(), &ctx).unwrap();
    assert_eq!(main_body(&out), [9]);
}

#[test]
fn outermost_sequential_always_runs_even_when_disabled_or_above_opt_level() {
    let info = PassInfo::new("outer", 3, PassKind::Sequential);
    let seq = Sequential::with_info(info, [push("A", 0, 1)]).unwrap();
    let ctx = PassContext::builder()
        .opt_level(0)
        .disabled_pass("outer")
        .build()
        .unwrap();
    assert_eq!(main_body(&seq.run_in(Tiny::main(), &ctx).unwrap()), [1]);
}

#[test]
fn nested_sequential_is_enabled_like_any_pass() {
    let inner_high = Sequential::with_info(
        PassInfo::new("inner", 3, PassKind::Sequential),
        [push("A", 0, 1)],
    )
    .unwrap();
    let inner_off = Sequential::named("off", [push("B", 0, 2)]).unwrap();
    let outer = Sequential::new([inner_high.into(), inner_off.into(), push("C", 0, 3)]).unwrap();
    let ctx = PassContext::builder()
        .opt_level(2)
        .disabled_pass("off")
        .build()
        .unwrap();
    assert_eq!(main_body(&outer.run_in(Tiny::main(), &ctx).unwrap()), [3]);
    let ctx = PassContext::builder().opt_level(3).build().unwrap();
    assert_eq!(
        main_body(&outer.run_in(Tiny::main(), &ctx).unwrap()),
        [1, 2, 3]
    );
}

#[test]
fn sequential_defaults_to_name_sequential_and_opt_level_zero() {
    let seq = Sequential::<Tiny>::new([]).unwrap();
    assert_eq!(seq.info().name, "sequential");
    assert_eq!(seq.info().opt_level, 0);
    assert_eq!(seq.info().kind, PassKind::Sequential);
}

#[test]
fn required_pass_runs_before_the_pass_that_requires_it() {
    let (ctx, log) = traced_context("t");
    let canon = irpass::registry::lookup::<Tiny>("Canon").unwrap();
    Sequential::named("s", [canon])
        .unwrap()
        .run_in(Tiny::main(), &ctx)
        .unwrap();
    let befores = events_with(&log, "t.before");
    assert_eq!(
        befores,
        ["t.before s", "t.before Analyze", "t.before Canon"]
    );
}

#[test]
fn required_names_are_resolved_when_the_pipeline_is_built_with_closest_names_and_link_hint() {
    let pass = irpass::registry::lookup::<Tiny>("RequiresMissing").unwrap();
    let err = Sequential::new([pass]).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("pass `RequiresMissing` requires a pass that is not available"),
        "{msg}"
    );
    assert!(
        msg.contains("no pass named `Analyse` is registered for IR `tiny`"),
        "{msg}"
    );
    assert!(msg.contains("did you mean `Analyze`"), "{msg}");
    assert!(
        !msg.contains("use irpass_passes as _;"),
        "a typo is not a link problem: {msg}"
    );
}

#[test]
fn required_resolution_is_transitive() {
    let (ctx, log) = traced_context("t");
    let needs = irpass::registry::lookup::<Tiny>("NeedsCanon").unwrap();
    let out = Sequential::named("s", [needs])
        .unwrap()
        .run_in(Tiny::main(), &ctx)
        .unwrap();
    let befores = events_with(&log, "t.before");
    assert_eq!(
        befores,
        [
            "t.before s",
            "t.before Analyze",
            "t.before Canon",
            "t.before NeedsCanon"
        ]
    );
    assert_eq!(main_body(&out), [100]);
}

#[test]
fn required_cycle_is_an_error_naming_the_cycle() {
    let a = irpass::registry::lookup::<Tiny>("CycleA").unwrap();
    let err = Sequential::new([a.clone()]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "required passes form a cycle: CycleA -> CycleB -> CycleA"
    );
    // A direct call reports the same problem as an error (with the module kept), not a hang.
    let err = a.run_in(Tiny::main(), &PassContext::default()).unwrap_err();
    assert!(
        err.to_string().contains("CycleA -> CycleB -> CycleA"),
        "{err}"
    );
    assert_eq!(err.module().to_string(), Tiny::main().to_string());
}

#[test]
fn required_pass_is_not_rerun_while_the_module_is_unchanged_since_it_last_ran() {
    let (ctx, log) = traced_context("t");
    let user = |name: &str| {
        module_pass(name, 0, |m, _| Ok(m))
            .requires(&["Analyze"])
            .pass()
    };
    // Analyze runs for U1; U2 and U3 find the module unchanged and do not re-run it.
    let seq = Sequential::new([user("U1"), user("U2"), user("U3")]).unwrap();
    seq.run_in(Tiny::main(), &ctx).unwrap();
    let runs = count(&log, "t.before Analyze");
    assert_eq!(runs, 1);

    // A pass that changes the module in between makes it run again.
    log.lock().unwrap().clear();
    let seq = Sequential::new([user("U1"), push("Change", 0, 5), user("U2"), user("U3")]).unwrap();
    seq.run_in(Tiny::main(), &ctx).unwrap();
    let runs = count(&log, "t.before Analyze");
    assert_eq!(runs, 2);

    // An explicit run of the required pass counts too.
    log.lock().unwrap().clear();
    let analyze = irpass::registry::lookup::<Tiny>("Analyze").unwrap();
    let seq = Sequential::new([analyze, user("U1")]).unwrap();
    seq.run_in(Tiny::main(), &ctx).unwrap();
    let runs = count(&log, "t.before Analyze");
    assert_eq!(runs, 1);
}

#[test]
fn required_pass_is_rerun_when_a_pass_body_changed_the_module_before_calling_a_pass() {
    // A pass body that changes the module and then calls a requiring pass directly starts a
    // new run: its requirement is not skipped on the strength of the outer run's record.
    let (ctx, log) = traced_context("t");
    let user = module_pass("User", 0, |m, _| Ok(m))
        .requires(&["Analyze"])
        .pass();
    let inner_user = user.clone();
    let body = module_pass("Body", 0, move |mut m, ctx| {
        m.add("extra", vec![1], false);
        inner_user.run_in(m, ctx).map_err(|e| e.to_string().into())
    })
    .pass();
    Sequential::new([user, body])
        .unwrap()
        .run_in(Tiny::main(), &ctx)
        .unwrap();
    let runs = count(&log, "t.before Analyze");
    assert_eq!(runs, 2);
}

#[test]
fn required_pass_given_as_a_value_runs_first() {
    let pass = module_pass("User", 0, |m, _| Ok(m))
        .requires_pass(push("Dep", 0, 4))
        .pass();
    assert_eq!(pass.info().required_names().collect::<Vec<_>>(), ["Dep"]);
    let out = Sequential::new([pass])
        .unwrap()
        .run_in(Tiny::main(), &ctx_at(2))
        .unwrap();
    assert_eq!(main_body(&out), [4]);
}

#[test]
fn required_passes_run_even_when_disabled_or_above_opt_level() {
    let pass = module_pass("User", 0, |m, _| Ok(m))
        .requires_pass(push("Dep", 3, 4))
        .pass();
    let ctx = PassContext::builder()
        .opt_level(0)
        .disabled_pass("Dep")
        .build()
        .unwrap();
    let out = Sequential::new([pass])
        .unwrap()
        .run_in(Tiny::main(), &ctx)
        .unwrap();
    assert_eq!(main_body(&out), [4]);
}

#[test]
fn should_run_may_veto_a_required_pass_unless_it_is_in_ctx_required_pass() {
    let pass = || {
        module_pass("User", 0, |m, _| Ok(m))
            .requires_pass(push("Dep", 0, 4))
            .pass()
    };
    let log = new_log();
    let ctx = PassContext::builder()
        .instrument(Trace::new("t", &log).veto("Dep"))
        .build()
        .unwrap();
    let out = Sequential::new([pass()])
        .unwrap()
        .run_in(Tiny::main(), &ctx)
        .unwrap();
    assert_eq!(main_body(&out), Vec::<i64>::new());

    let log = new_log();
    let ctx = PassContext::builder()
        .required_pass("Dep")
        .instrument(Trace::new("t", &log).veto("Dep"))
        .build()
        .unwrap();
    let out = Sequential::new([pass()])
        .unwrap()
        .run_in(Tiny::main(), &ctx)
        .unwrap();
    assert_eq!(main_body(&out), [4]);
    let ev = events(&log);
    assert!(
        !ev.contains(&"t.should_run Dep".to_string()),
        "should_run not consulted: {ev:?}"
    );
    assert!(ev.contains(&"t.before Dep".to_string()));
}

#[test]
fn direct_call_runs_the_passes_it_requires() {
    let canon = irpass::registry::lookup::<Tiny>("NeedsCanon").unwrap();
    let (ctx, log) = traced_context("t");
    canon.run_in(Tiny::main(), &ctx).unwrap();
    let befores = events_with(&log, "t.before");
    assert_eq!(
        befores,
        ["t.before Analyze", "t.before Canon", "t.before NeedsCanon"]
    );
}

#[test]
fn a_pass_called_directly_runs_under_the_current_context() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(None));
    let s = seen.clone();
    let pass: Pass<Tiny> = module_pass("Look", 0, move |m, ctx| {
        *s.lock().unwrap() = Some((ctx.opt_level(), PassContext::current().opt_level()));
        Ok(m)
    })
    .pass();
    let ctx = ctx_at(3);
    ctx.scope(|| pass.run(Tiny::main()).unwrap()).unwrap();
    assert_eq!(*seen.lock().unwrap(), Some((3, 3)));
}

#[test]
fn a_sequential_may_have_required_passes_of_its_own() {
    let (ctx, log) = traced_context("t");
    let info = PassInfo::new("s", 0, PassKind::Sequential).with_required(["Analyze"]);
    let seq = Sequential::with_info(info, [push("A", 0, 1)]).unwrap();
    seq.run_in(Tiny::main(), &ctx).unwrap();
    assert_eq!(
        events_with(&log, "t.before"),
        ["t.before Analyze", "t.before s", "t.before A"]
    );
    let bad = PassInfo::new("s", 0, PassKind::Sequential).with_required(["Analyse"]);
    let err = Sequential::<Tiny>::with_info(bad, []).unwrap_err();
    assert!(err.to_string().contains("did you mean `Analyze`"), "{err}");
}
