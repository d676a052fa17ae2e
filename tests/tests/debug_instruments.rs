//! The debugging instruments: PrintChanged, VerifyEach, OptBisect, CrashReproducer,
//! ChromeTrace.

use std::sync::Arc;

use irpass::instrument::{
    ChromeTrace, CrashReproducer, OptBisect, PrintChanged, Reproducer, Sink, VerifyEach,
};
use irpass::{PassContext, Sequential};
use irpass_tests::*;

#[test]
fn print_changed_prints_only_passes_that_changed_the_module_and_diffs_on_request() {
    let (sink, buf) = Sink::buffer();
    let ctx = PassContext::builder()
        .instrument(PrintChanged::new().to(sink))
        .build()
        .unwrap();
    let seq = Sequential::new([keep("Keep", 0), push("Push", 0, 7)]).unwrap();
    ctx.scope(|| seq.run(Tiny::main())).unwrap().unwrap();
    let out = buf.contents();
    assert!(
        out.contains("*** IR Dump After Push (changed) ***"),
        "{out}"
    );
    assert!(
        !out.contains("Keep"),
        "an unchanged module is not printed: {out}"
    );
    assert!(
        !out.contains("sequential"),
        "Sequentials are not printed: {out}"
    );

    let (sink, buf) = Sink::buffer();
    let ctx = PassContext::builder()
        .instrument(PrintChanged::diff().to(sink))
        .build()
        .unwrap();
    ctx.scope(|| push("Push", 0, 7).run(Tiny::main()))
        .unwrap()
        .unwrap();
    let out = buf.contents();
    assert!(
        out.contains("--- before Push")
            && out.contains("+++ after Push")
            && out.contains("+def @main: [7]"),
        "{out}"
    );
}

#[test]
fn verify_each_names_the_pass_that_broke_the_module() {
    let ctx = PassContext::builder()
        .instrument(VerifyEach)
        .build()
        .unwrap();
    let seq = Sequential::new([
        push("Fine", 0, 1),
        push("Breaks", 0, -5),
        push("After", 0, 2),
    ])
    .unwrap();
    let err = ctx.scope(|| seq.run(Tiny::main())).unwrap().unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("invalid after pass `Breaks`"), "{msg}");
    assert_eq!(
        err.module().body("main"),
        Some(&[1][..]),
        "the last good module is the one before Breaks"
    );
}

#[test]
fn opt_bisect_runs_the_first_n_passes_and_reports_each_decision() {
    let (sink, buf) = Sink::buffer();
    let bisect = Arc::new(OptBisect::new(2).to(sink));
    let ctx = PassContext::builder()
        .instrument_arc(bisect.clone())
        .build()
        .unwrap();
    let seq = Sequential::new([push("A", 0, 1), push("B", 0, 2), push("C", 0, 3)]).unwrap();
    let out = ctx.scope(|| seq.run(Tiny::main())).unwrap().unwrap();
    assert_eq!(out.body("main"), Some(&[1, 2][..]));
    assert_eq!(bisect.count(), 3);
    assert_eq!(
        buf.contents(),
        "BISECT: running pass (1) A on tiny module\nBISECT: running pass (2) B on tiny module\nBISECT: NOT running pass (3) C on tiny module\n"
    );
}

#[test]
fn crash_reproducer_writes_the_first_failing_pass_with_its_input_module() {
    let dir = tempfile::tempdir().unwrap();
    for (failing, what) in [(fail("Boom"), "error"), (panicking("Boom"), "panic")] {
        let path = dir.path().join(format!("{what}.repro"));
        let repro = Arc::new(
            CrashReproducer::new(&path)
                .with_pipeline("A,outer(Boom)")
                .with_config("{\"tiny.Level\":\"3\"}"),
        );
        let ctx = PassContext::builder()
            .instrument_arc(repro.clone())
            .build()
            .unwrap();
        let seq = Sequential::new([
            push("A", 0, 4),
            Sequential::named("outer", [failing]).unwrap().into(),
        ])
        .unwrap();
        assert!(ctx.scope(|| seq.run(Tiny::main())).unwrap().is_err());
        assert!(repro.written(), "{what}");
        let text = std::fs::read_to_string(&path).unwrap();
        let header = Reproducer::read(&text).unwrap();
        assert_eq!(header.pipeline, "A,outer(Boom)", "{what}");
        assert_eq!(
            header.failing_pass, "Boom",
            "the innermost failing pass, not the Sequential ({what})"
        );
        assert_eq!(header.config, "{\"tiny.Level\":\"3\"}");
        assert_eq!(
            header.module, "def @main: [4]\n",
            "the module alone ({what})"
        );
        assert!(
            text.ends_with("def @main: [4]\n"),
            "the module before the failing pass: {text}"
        );
    }
    assert!(Reproducer::read("def @main() { 1f }").is_err());
}

#[test]
fn chrome_trace_records_every_pass_as_a_complete_event() {
    let trace = Arc::new(ChromeTrace::new());
    let ctx = PassContext::builder()
        .instrument_arc(trace.clone())
        .build()
        .unwrap();
    let seq = Sequential::named("pipeline", [push("A", 0, 1), fail("B")]).unwrap();
    let _ = ctx.scope(|| seq.run(Tiny::main()));
    let json = trace.to_json();
    let events = json["traceEvents"].as_array().unwrap();
    let names: Vec<&str> = events.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["A", "B (failed)", "pipeline (failed)"]);
    assert!(
        events
            .iter()
            .all(|e| e["ph"] == "X" && e["dur"].as_f64().unwrap() >= 0.0)
    );
    let a = &events[0];
    let p = &events[2];
    assert!(
        a["ts"].as_f64().unwrap() >= p["ts"].as_f64().unwrap(),
        "A starts inside the pipeline"
    );
}
