//! Analyses: computed once per function value and module state, kept for functions a pass
//! did not change, dropped otherwise unless preserved, shared by parallel function passes,
//! and never served stale.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use irpass::analysis::{Analysis, AnalysisEvent, FunctionAnalysis, ModuleAnalysis};
use irpass::{IrModule, ModuleView, PassContext, PassInfo, PassInstrument, Sequential};
use irpass_tests::trace::{Log, events, new_log};
use irpass_tests::*;
use proptest::prelude::*;

/// The sum of a function's body; counts its computations.
#[derive(Default)]
struct Sum(AtomicUsize);

impl Analysis for Sum {
    const NAME: &'static str = "Sum";
}

impl FunctionAnalysis<Tiny> for Sum {
    type Output = i64;
    fn compute(&self, f: &Arc<Func>, _: &Tiny, _: &PassContext) -> i64 {
        self.0.fetch_add(1, Ordering::SeqCst);
        f.body.iter().sum()
    }
}

/// The number of functions of a module; counts its computations.
#[derive(Default)]
struct Count(AtomicUsize);

impl Analysis for Count {
    const NAME: &'static str = "Count";
}

impl ModuleAnalysis<Tiny> for Count {
    type Output = usize;
    fn compute(&self, m: &Tiny, _: &PassContext) -> usize {
        self.0.fetch_add(1, Ordering::SeqCst);
        m.function_count()
    }
}

/// How many times an analysis's counter says it was computed.
fn computed(counter: &AtomicUsize) -> usize {
    counter.load(Ordering::SeqCst)
}

/// A function pass that reads `Sum` of every function it sees and checks it.
fn read_sums(name: &str, sum: Arc<Sum>) -> irpass::Pass<Tiny> {
    function_pass(name, 0, move |f, m, ctx| {
        let s = ctx.function_analysis(sum.as_ref(), &f, m);
        assert_eq!(*s, f.body.iter().sum::<i64>(), "a stale result");
        Ok(f)
    })
    .pass()
}

/// A module pass that reads `Count` and checks it.
fn read_count(name: &str, count: Arc<Count>) -> irpass::Pass<Tiny> {
    module_pass(name, 0, move |m, ctx| {
        let c = ctx.module_analysis(count.as_ref(), &m);
        assert_eq!(*c, m.function_count(), "a stale result");
        Ok(m)
    })
    .pass()
}

/// A module pass that appends `value` to the function `func` only.
fn push_to(name: &str, func: &'static str, value: i64) -> irpass_tests::ModPass {
    module_pass(name, 0, move |mut m, _| {
        let mut body = m.body(func).unwrap().to_vec();
        body.push(value);
        m.add(func, body, false);
        Ok(m)
    })
}

#[test]
fn a_function_a_pass_did_not_change_keeps_its_results_and_a_changed_one_is_recomputed() {
    let sum = Arc::new(Sum::default());
    let ctx = PassContext::default();
    let seq = Sequential::new([
        read_sums("Read1", sum.clone()),
        push_to("ChangeF1", "f1", 10).pass(),
        read_sums("Read2", sum.clone()),
        read_sums("Read3", sum.clone()),
    ])
    .unwrap();
    seq.run_in(Tiny::with_functions(4), &ctx).unwrap();
    // Four functions once, then only the changed `f1` again; `Read3` hits the cache.
    assert_eq!(computed(&sum.0), 5);
    // The old `f1`'s result was dropped with it: one result per live function.
    assert_eq!(ctx.cached_analyses(), 4);
}

#[test]
fn a_module_analysis_is_dropped_after_a_change_unless_the_pass_preserves_it() {
    let count = Arc::new(Count::default());
    let ctx = PassContext::default();
    let seq = Sequential::new([
        read_count("Read1", count.clone()),
        keep("Unchanged", 0),
        read_count("Read2", count.clone()),
        push_to("Preserving", "f0", 1).preserves(&["Count"]).pass(),
        read_count("Read3", count.clone()),
        push_to("Changing", "f0", 2).pass(),
        read_count("Read4", count.clone()),
    ])
    .unwrap();
    seq.run_in(Tiny::with_functions(3), &ctx).unwrap();
    // Computed by Read1 and again only after `Changing`.
    assert_eq!(computed(&count.0), 2);
}

#[test]
fn a_preserved_function_analysis_moves_to_the_changed_function() {
    let sum = Arc::new(Sum::default());
    let ctx = PassContext::default();
    // Appending 0 keeps the sum: the pass may say so.
    let seq = Sequential::new([
        read_sums("Read1", sum.clone()),
        push_to("AppendZero", "f0", 0).preserves(&["Sum"]).pass(),
        read_sums("Read2", sum.clone()),
    ])
    .unwrap();
    seq.run_in(Tiny::with_functions(2), &ctx).unwrap();
    assert_eq!(computed(&sum.0), 2);
}

#[test]
fn parallel_function_passes_share_the_cache_and_get_correct_results() {
    let sum = Arc::new(Sum::default());
    let ctx = PassContext::builder().threads(2).build().unwrap();
    let module = Tiny::with_functions(64);
    let seq = Sequential::new([
        read_sums("Read1", sum.clone()),
        read_sums("Read2", sum.clone()),
        push("AppendAll", 0, 1),
        read_sums("Read3", sum.clone()),
    ])
    .unwrap();
    seq.run_in(module, &ctx).unwrap();
    // Each function state's result is computed once (64 before AppendAll, 64 after), and the
    // second pass over unchanged functions only hits the cache.
    let n = computed(&sum.0);
    assert_eq!(n, 128);
    let before = n;
    let unchanged = Tiny::with_functions(3);
    let seq = Sequential::new([read_sums("A", sum.clone()), read_sums("B", sum.clone())]).unwrap();
    seq.run_in(unchanged, &ctx).unwrap();
    assert_eq!(computed(&sum.0) - before, 3);
}

/// Logs analysis events.
struct Events(Log);

impl PassInstrument for Events {
    fn name(&self) -> &str {
        "Events"
    }
    fn on_analysis(&self, event: &AnalysisEvent<'_>) -> irpass::Result<()> {
        let line = match event {
            AnalysisEvent::Computing { analysis, .. } => format!("computing {analysis}"),
            AnalysisEvent::Computed { analysis, .. } => format!("computed {analysis}"),
            AnalysisEvent::CacheHit { analysis, .. } => format!("hit {analysis}"),
            AnalysisEvent::Invalidated {
                analysis,
                pass,
                entries,
            } => format!("invalidated {entries} {analysis} after {pass}"),
            _ => "other".to_string(),
        };
        self.0.lock().unwrap().push(line);
        Ok(())
    }
    fn run_before_pass(&self, _: &dyn ModuleView, info: &PassInfo) -> irpass::Result<()> {
        self.0.lock().unwrap().push(format!("pass {}", info.name));
        Ok(())
    }
}

#[test]
fn instruments_hear_computations_hits_and_invalidations_in_order() {
    let log = new_log();
    let sum = Arc::new(Sum::default());
    let count = Arc::new(Count::default());
    // One thread: a function pass on two functions otherwise interleaves their events.
    let ctx = PassContext::builder()
        .instrument(Events(log.clone()))
        .threads(1)
        .build()
        .unwrap();
    let seq = Sequential::named(
        "s",
        [
            read_sums("ReadSums", sum.clone()),
            read_count("ReadCount", count.clone()),
            push_to("ChangeF0", "f0", 5).pass(),
            read_sums("ReadAgain", sum.clone()),
        ],
    )
    .unwrap();
    seq.run_in(Tiny::with_functions(2), &ctx).unwrap();
    assert_eq!(
        events(&log),
        [
            "pass s",
            "pass ReadSums",
            "computing Sum",
            "computed Sum",
            "computing Sum",
            "computed Sum",
            "pass ReadCount",
            "computing Count",
            "computed Count",
            "pass ChangeF0",
            "invalidated 1 Count after ChangeF0",
            "invalidated 1 Sum after ChangeF0",
            "pass ReadAgain",
            "computing Sum",
            "computed Sum",
            "hit Sum",
        ]
    );
}

#[test]
fn a_failing_analysis_hook_is_a_warning_and_the_result_is_unchanged() {
    struct Broken;
    impl PassInstrument for Broken {
        fn name(&self) -> &str {
            "Broken"
        }
        fn on_analysis(&self, _: &AnalysisEvent<'_>) -> irpass::Result<()> {
            Err("broken observer".into())
        }
    }
    let ctx = PassContext::builder().instrument(Broken).build().unwrap();
    let sum = Arc::new(Sum::default());
    let out = read_sums("Read", sum).run_in(Tiny::with_functions(1), &ctx);
    assert!(out.is_ok());
    let warnings = ctx.take_diagnostics();
    assert!(
        warnings[0]
            .to_string()
            .contains("instrument `Broken` failed in on_analysis: broken observer"),
        "{warnings:?}"
    );
}

#[test]
fn clearing_drops_every_result_and_what_it_pins() {
    let ctx = PassContext::default();
    let module = Tiny::with_functions(3);
    for (_, f) in module.functions() {
        ctx.function_analysis(&Sum::default(), f, &module);
    }
    assert_eq!(ctx.cached_analyses(), 3);
    ctx.clear_analyses();
    assert_eq!(ctx.cached_analyses(), 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random pipelines of passes that change random functions (or none), with reads in
    /// between: every read checks its result against the function it was given, so a stale
    /// cached result fails the run; unchanged functions are never recomputed.
    #[test]
    fn a_cached_result_is_never_served_for_a_changed_function(
        steps in prop::collection::vec((0usize..6, 0i64..3, any::<bool>()), 1..12),
    ) {
        let sum = Arc::new(Sum::default());
        let count = Arc::new(Count::default());
        let ctx = PassContext::default();
        let names = ["f0", "f1", "f2", "f3", "f4", "f5"];
        let mut passes = vec![read_sums("Read", sum.clone()), read_count("ReadCount", count.clone())];
        let mut changes = 0usize;
        for (k, (func, value, preserve)) in steps.iter().enumerate() {
            let name = format!("Change{k}");
            let pass = if *func < 4 {
                changes += 1;
                let p = push_to(&name, names[*func], *value);
                // Appending 0 keeps the sum, so preserving `Sum` is then honest.
                if *preserve && *value == 0 { p.preserves(&["Sum", "Count"]) } else { p }
            } else {
                module_pass(&name, 0, |m, _| Ok(m))
            };
            passes.push(pass.pass());
            passes.push(read_sums("Read", sum.clone()));
            passes.push(read_count("ReadCount", count.clone()));
        }
        let seq = Sequential::new(passes).unwrap();
        seq.run_in(Tiny::with_functions(4), &ctx).unwrap();
        // Each change recomputes at most the one function it changed.
        prop_assert!(computed(&sum.0) <= 4 + changes);
        prop_assert!(computed(&count.0) <= 1 + changes);
    }
}

#[test]
fn debug_pass_manager_prints_passes_skips_and_analysis_decisions_in_order() {
    use irpass::instrument::{DebugPassManager, Sink};
    let (sink, buffer) = Sink::buffer();
    let ctx = PassContext::builder()
        .opt_level(1)
        .instrument(DebugPassManager::new().to(sink))
        .build()
        .unwrap();
    let sum = Arc::new(Sum::default());
    let seq = Sequential::named(
        "s",
        [
            read_sums("Read", sum.clone()),
            push("TooHigh", 2, 1),
            push_to("ChangeF0", "f0", 5).pass(),
            read_sums("ReadAgain", sum.clone()),
        ],
    )
    .unwrap();
    seq.run_in(Tiny::with_functions(1), &ctx).unwrap();
    assert_eq!(
        buffer.contents(),
        "Running pass: s\n\
         Running pass: Read\n\
         Running analysis: Sum (on a function)\n\
         Skipping pass: TooHigh (its opt level 2 is above the context's 1)\n\
         Running pass: ChangeF0\n\
         Invalidating analysis: Sum (1 results, after ChangeF0)\n\
         Running pass: ReadAgain\n\
         Running analysis: Sum (on a function)\n"
    );
    // Unchanged since: a cache hit.
    let out = read_sums("ReadThird", sum.clone());
    buffer.clear();
    let module = Tiny::with_functions(1);
    out.run_in(module.clone(), &ctx).unwrap();
    out.run_in(module, &ctx).unwrap();
    assert!(
        buffer
            .contents()
            .contains("Cached analysis: Sum (on a function)"),
        "{}",
        buffer.contents()
    );
}

/// Appends 0 to `f0`: the sums and the function count stay what they were.
#[irpass::module_pass(opt_level = 0, preserves = [Count, "Sum"])]
fn append_zero(mut module: Tiny) -> Tiny {
    let mut body = module.body("f0").unwrap().to_vec();
    body.push(0);
    module.add("f0", body, false);
    module
}

#[test]
fn the_pass_macros_declare_preserved_analyses_by_type_or_name() {
    let pass = irpass::Pass::from(AppendZero);
    assert_eq!(pass.info().preserves.as_ref(), ["Count", "Sum"]);
    let sum = Arc::new(Sum::default());
    let count = Arc::new(Count::default());
    let seq = Sequential::new([
        read_sums("Read", sum.clone()),
        read_count("ReadCount", count.clone()),
        pass,
        read_sums("Read", sum.clone()),
        read_count("ReadCount", count.clone()),
    ])
    .unwrap();
    seq.run_in(Tiny::with_functions(2), &PassContext::default())
        .unwrap();
    assert_eq!(computed(&sum.0), 2);
    assert_eq!(computed(&count.0), 1);
}

#[test]
fn the_timing_tree_shows_analysis_time_under_the_pass_that_asked() {
    use irpass::instrument::PassTiming;
    let timing = Arc::new(PassTiming::new());
    let ctx = PassContext::builder()
        .instrument_arc(timing.clone())
        .threads(1)
        .build()
        .unwrap();
    let sum = Arc::new(Sum::default());
    let seq = Sequential::named(
        "s",
        [read_sums("Read", sum.clone()), read_sums("ReadAgain", sum)],
    )
    .unwrap();
    seq.run_in(Tiny::with_functions(2), &ctx).unwrap();
    let roots = timing.roots();
    let read = &roots[0].children[0];
    assert_eq!(read.name, "Read");
    let names: Vec<&str> = read.children.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["Sum (analysis)", "Sum (analysis)"]);
    // The second pass only hit the cache: nothing under it.
    assert!(roots[0].children[1].children.is_empty());
    // In the text, one row for both computations.
    assert!(
        timing.render().contains("\t\tSum (analysis) ×2: "),
        "{}",
        timing.render()
    );
}

/// The largest value of a function (zero for an empty one).
#[irpass::function_analysis(ir = Tiny)]
fn max_value(func: &Arc<Func>) -> i64 {
    func.body.iter().copied().max().unwrap_or(0)
}

/// The total length of all functions.
#[irpass::module_analysis(name = "TotalLength")]
fn total_len(module: &Tiny) -> usize {
    module.functions().map(|(_, f)| f.body.len()).sum()
}

#[test]
fn the_analysis_macros_make_a_registered_analysis_from_a_function() {
    let ctx = PassContext::default();
    let module = Tiny::new([("a", vec![3, 7, 1]), ("b", vec![2])]);
    let (_, a) = module.functions().next().unwrap();
    assert_eq!(*ctx.function_analysis(&MaxValue, a, &module), 7);
    assert_eq!(*ctx.module_analysis(&TotalLen, &module), 4);
    assert_eq!(<MaxValue as Analysis>::NAME, "MaxValue");
    assert_eq!(<TotalLen as Analysis>::NAME, "TotalLength");
    let registered = irpass::analysis::registered();
    let max = registered.iter().find(|r| r.name == "MaxValue").unwrap();
    assert_eq!(max.kind, irpass::analysis::AnalysisKind::Function);
    assert_eq!(
        max.description,
        "The largest value of a function (zero for an empty one)."
    );
    assert_eq!((max.ir_name)(), "tiny");
    let total = registered.iter().find(|r| r.name == "TotalLength").unwrap();
    assert_eq!(total.kind, irpass::analysis::AnalysisKind::Module);
}

#[test]
fn analyses_computed_by_parallel_workers_are_timed_under_the_pass_too() {
    use irpass::instrument::PassTiming;
    let timing = Arc::new(PassTiming::new());
    let ctx = PassContext::builder()
        .instrument_arc(timing.clone())
        .threads(2)
        .build()
        .unwrap();
    let sum = Arc::new(Sum::default());
    let seq = Sequential::named("s", [read_sums("Read", sum)]).unwrap();
    seq.run_in(Tiny::with_functions(64), &ctx).unwrap();
    let roots = timing.roots();
    // One root, the Sequential: no analysis left at the top, whichever thread computed it.
    let names: Vec<&str> = roots.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["s"]);
    let read = &roots[0].children[0];
    assert_eq!(read.children.len(), 64, "one node per function's analysis");
    assert!(read.children.iter().all(|c| c.name == "Sum (analysis)"));
}

/// The number of functions, computed slowly: threads asking at once overlap.
#[derive(Default)]
struct SlowCount(AtomicUsize);

impl Analysis for SlowCount {
    const NAME: &'static str = "SlowCount";
}

impl ModuleAnalysis<Tiny> for SlowCount {
    type Output = usize;
    fn compute(&self, m: &Tiny, _: &PassContext) -> usize {
        self.0.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(30));
        m.function_count()
    }
}

#[test]
fn threads_asking_for_the_same_missing_result_wait_for_one_computation() {
    let count = Arc::new(SlowCount::default());
    let ctx = PassContext::builder().threads(2).build().unwrap();
    let asker = count.clone();
    let pass = function_pass("AskCount", 0, move |f, m, ctx| {
        assert_eq!(*ctx.module_analysis(asker.as_ref(), m), 16);
        Ok(f)
    })
    .pass();
    pass.run_in(Tiny::with_functions(16), &ctx).unwrap();
    assert_eq!(
        computed(&count.0),
        1,
        "computed once, every other ask waited for it"
    );
}

#[test]
fn a_long_lived_context_asked_outside_the_runner_keeps_a_bounded_cache() {
    // A loop that makes new functions and asks for their analysis with one context, never
    // through the runner (which would drop what each pass invalidates): the cache stays within
    // its bound, the oldest results going first, and what it still holds is served.
    let ctx = PassContext::default();
    let sum = Sum::default();
    let rounds = irpass::analysis::MAX_CACHED_ANALYSES + 1000;
    let mut last = None;
    for i in 0..rounds {
        let module = Tiny::new([("main", vec![i as i64, 1])]);
        let (_, f) = module.functions().next().unwrap();
        assert_eq!(*ctx.function_analysis(&sum, f, &module), i as i64 + 1);
        assert!(ctx.cached_analyses() <= irpass::analysis::MAX_CACHED_ANALYSES);
        last = Some(module);
    }
    assert_eq!(sum.0.load(Ordering::SeqCst), rounds);
    let module = last.unwrap();
    let (_, f) = module.functions().next().unwrap();
    ctx.function_analysis(&sum, f, &module);
    assert_eq!(
        sum.0.load(Ordering::SeqCst),
        rounds,
        "the newest is still cached"
    );
}
