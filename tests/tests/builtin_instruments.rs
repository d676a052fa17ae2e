//! The built-in instruments and passes (the guide's "Debugging a pipeline", `core/src/guide/debugging.md`): PassTiming, printing, DumpIr, PrintIR.

use std::sync::Arc;

use irpass::instrument::{DumpIr, PassPrinting, PassTiming, PrintAfterAll, PrintBeforeAll, Sink};
use irpass::{Pass, PassContext, PrintIr, Sequential};
use irpass_tests::*;

fn pipeline() -> Sequential<Tiny> {
    let inner = Sequential::named("inner", [push("B", 0, 2), push("C", 0, 3)]).unwrap();
    Sequential::named("outer", [push("A", 0, 1), inner.into()]).unwrap()
}

#[test]
fn pass_timing_renders_a_tree_in_tvms_format_readable_after_the_context_exits() {
    let timing = Arc::new(PassTiming::new());
    let ctx = PassContext::builder()
        .instrument_arc(timing.clone())
        .build()
        .unwrap();
    ctx.scope(|| pipeline().run(Tiny::with_functions(10)).unwrap())
        .unwrap();
    let text = timing.render();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    let shape = |line: &str| {
        let depth = line.chars().take_while(|c| *c == '\t').count();
        let rest = &line[depth..];
        let (name, numbers) = rest.split_once(": ").unwrap();
        // `123us [45us] (12.34%; 56.78%)`
        let (total, rest) = numbers.split_once("us [").unwrap();
        let (own, rest) = rest.split_once("us] (").unwrap();
        let (pct_all, rest) = rest.split_once("%; ").unwrap();
        let pct_parent = rest.strip_suffix("%)").unwrap();
        total.parse::<u64>().unwrap();
        own.parse::<u64>().unwrap();
        for pct in [pct_all, pct_parent] {
            assert_eq!(
                pct.split_once('.').unwrap().1.len(),
                2,
                "two decimals: {line}"
            );
        }
        (depth, name.to_string())
    };
    let tree: Vec<(usize, String)> = lines.iter().map(|l| shape(l)).collect();
    let expected = [(0, "outer"), (1, "A"), (1, "inner"), (2, "B"), (2, "C")];
    assert_eq!(tree, expected.map(|(d, n)| (d, n.to_string())));
    assert!(lines[0].ends_with("(100.00%; 100.00%)"), "{}", lines[0]);
    let root = &timing.roots()[0];
    assert!(root.total_ns >= root.children.iter().map(|c| c.total_ns).sum::<u64>());
}

#[test]
fn pass_timing_gives_json_with_the_same_tree() {
    let timing = Arc::new(PassTiming::new());
    let ctx = PassContext::builder()
        .instrument_arc(timing.clone())
        .build()
        .unwrap();
    pipeline().run_in(Tiny::main(), &ctx).unwrap();
    let json = timing.to_json();
    assert_eq!(json[0]["name"], "outer");
    assert_eq!(json[0]["children"][1]["children"][1]["name"], "C");
    assert_eq!(json[0]["failed"], false);
    assert!(json[0]["self_ns"].as_u64().unwrap() <= json[0]["total_ns"].as_u64().unwrap());
}

#[test]
fn pass_timing_stays_consistent_after_a_failure() {
    let timing = Arc::new(PassTiming::new());
    let ctx = PassContext::builder()
        .instrument_arc(timing.clone())
        .build()
        .unwrap();
    let inner = Sequential::named("inner", [push("B", 0, 2), fail("Bad")]).unwrap();
    let seq = Sequential::named(
        "outer",
        [push("A", 0, 1), inner.into(), push("Never", 0, 3)],
    )
    .unwrap();
    assert!(seq.run_in(Tiny::main(), &ctx).is_err());
    // The failed run is closed at every level; a later run starts a new root.
    pipeline().run_in(Tiny::main(), &ctx).unwrap();
    let roots = timing.roots();
    assert_eq!(roots.len(), 2);
    assert!(
        roots[0].failed && roots[0].children[1].failed && roots[0].children[1].children[1].failed
    );
    assert!(!roots[0].children[0].failed);
    assert_eq!(roots[0].children.len(), 2, "Never did not run");
    assert!(
        timing
            .render()
            .lines()
            .any(|l| l.starts_with("\t\tBad: ") && l.ends_with(" FAILED"))
    );
    assert!(!roots[1].failed);
}

#[test]
fn print_before_all_and_print_after_all_write_every_pass_to_the_chosen_sink() {
    let (before, before_out) = Sink::buffer();
    let (after, after_out) = Sink::buffer();
    let ctx = PassContext::builder()
        .instrument(PrintBeforeAll::to(before))
        .instrument(PrintAfterAll::to(after))
        .build()
        .unwrap();
    Sequential::named("s", [push("A", 0, 1)])
        .unwrap()
        .run_in(Tiny::main(), &ctx)
        .unwrap();
    assert_eq!(
        before_out.contents(),
        "*** IR Dump Before s ***\ndef @main: []\n*** IR Dump Before A ***\ndef @main: []\n"
    );
    assert_eq!(
        after_out.contents(),
        "*** IR Dump After A ***\ndef @main: [1]\n*** IR Dump After s ***\ndef @main: [1]\n"
    );
}

#[test]
fn pass_printing_prints_only_the_named_passes() {
    let (sink, out) = Sink::buffer();
    let ctx = PassContext::builder()
        .instrument(PassPrinting::new(["B"], ["A"]).to(sink))
        .build()
        .unwrap();
    Sequential::new([push("A", 0, 1), push("B", 0, 2)])
        .unwrap()
        .run_in(Tiny::main(), &ctx)
        .unwrap();
    assert_eq!(
        out.contents(),
        "*** IR Dump After A ***\ndef @main: [1]\n*** IR Dump Before B ***\ndef @main: [1]\n"
    );
}

#[test]
fn dump_ir_writes_one_numbered_file_per_pass_with_sanitised_names() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("dumps");
    let ctx = PassContext::builder()
        .instrument(DumpIr::new(&target))
        .build()
        .unwrap();
    let seq = Sequential::named("my seq", [push("A", 0, 1), push("B/x", 0, 2)]).unwrap();
    ctx.scope(|| seq.run(Tiny::main()).unwrap()).unwrap();
    let mut files: Vec<String> = std::fs::read_dir(&target)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    assert_eq!(files, ["000_A.ir", "001_B_x.ir", "002_my_seq.ir"]);
    assert_eq!(
        std::fs::read_to_string(target.join("001_B_x.ir")).unwrap(),
        "def @main: [1, 2]\n"
    );
}

#[test]
fn pass_timing_reports_when_dropped_only_when_asked_to() {
    let (sink, report) = Sink::buffer();
    {
        let ctx = PassContext::builder()
            .instrument(PassTiming::new().report_to(sink))
            .instrument(PassTiming::new())
            .build()
            .unwrap();
        ctx.scope(|| push("A", 0, 1).run(Tiny::main()).unwrap())
            .unwrap();
        assert_eq!(
            report.contents(),
            "",
            "nothing before the context is dropped"
        );
    }
    let text = report.contents();
    assert_eq!(
        text.lines().count(),
        1,
        "one tree, from the instrument asked to: {text}"
    );
    assert!(text.starts_with("A: ") && text.contains("us ["), "{text}");
}

#[test]
fn dump_ir_warns_counts_and_goes_on_when_one_file_cannot_be_written() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("dumps");
    // A directory where the first dump file would go.
    std::fs::create_dir_all(target.join("000_A.ir")).unwrap();
    let (sink, warnings) = Sink::buffer();
    let dump = Arc::new(DumpIr::new(&target).warnings_to(sink));
    let ctx = PassContext::builder()
        .instrument_arc(dump.clone())
        .build()
        .unwrap();
    let seq = Sequential::named("s", [push("A", 0, 1), push("B", 0, 2)]).unwrap();
    let out = ctx.scope(|| seq.run(Tiny::main())).unwrap();
    assert_eq!(
        out.unwrap().to_string(),
        "def @main: [1, 2]\n",
        "the run went on"
    );
    assert_eq!(dump.failed_writes(), 1);
    let warned = warnings.contents();
    assert!(
        warned.starts_with("warning: DumpIr: cannot write `") && warned.contains("000_A.ir"),
        "{warned}"
    );
    assert_eq!(
        std::fs::read_to_string(target.join("001_B.ir")).unwrap(),
        "def @main: [1, 2]\n"
    );
    assert!(target.join("002_s.ir").is_file());
}

#[test]
fn dump_ir_that_cannot_create_its_directory_fails_entering_the_context_with_a_clear_error() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let ctx = PassContext::builder()
        .instrument(DumpIr::new(file.path().join("sub")))
        .build()
        .unwrap();
    let err = ctx.enter().err().unwrap();
    assert!(
        err.to_string().starts_with(
            "instrument `DumpIr` failed in enter_pass_ctx: cannot create dump directory"
        ),
        "{err}"
    );
}

#[test]
fn print_ir_pass_prints_the_module_and_returns_it_unchanged() {
    let (sink, out) = Sink::buffer();
    let pass: Pass<Tiny> = Pass::module(PrintIr::to(sink));
    assert_eq!(
        (pass.info().name.as_ref(), pass.info().opt_level),
        ("PrintIR", 0)
    );
    let m = Tiny::main();
    let result = pass.run(m.clone()).unwrap();
    assert!(irpass::IrModule::same_as(&result, &m));
    assert_eq!(out.contents(), "PrintIR:\ndef @main: []\n");
}

#[test]
fn a_contexts_instrument_is_found_by_type_to_read_its_results() {
    let ctx = PassContext::builder()
        .instrument(PrintAfterAll::to(Sink::buffer().0))
        .instrument(PassTiming::new())
        .build()
        .unwrap();
    pipeline().run_in(Tiny::main(), &ctx).unwrap();
    let timing = ctx
        .instrument::<PassTiming>()
        .expect("the context has a PassTiming");
    assert_eq!(timing.roots()[0].name, "outer");
    assert!(ctx.instrument::<DumpIr>().is_none());
}
