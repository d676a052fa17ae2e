//! `IRPASS_INSTRUMENTS` switches registered instruments on in every context, without code.
//! (Its own test binary: the variable is process-wide.)

use irpass::instrument::PassTiming;
use irpass::{INSTRUMENTS_ENV, PassContext};
use irpass_tests::*;

#[test]
fn instruments_named_in_the_environment_join_every_context_and_unknown_names_are_errors() {
    // Edition 2024 makes `std::env::set_var` unsafe and unsafe code is forbidden here, so the
    // test re-runs itself as a child process with the variable set.
    if std::env::var("IRPASS_ENV_CHILD").is_err() {
        let exe = std::env::current_exe().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("trace.json");
        let ok = std::process::Command::new(&exe)
            .args(["--exact", "instruments_named_in_the_environment_join_every_context_and_unknown_names_are_errors", "--nocapture"])
            .env("IRPASS_ENV_CHILD", "good")
            .env(INSTRUMENTS_ENV, "PassTiming, Quiet, ChromeTrace")
            .env("IRPASS_CHROME_TRACE", &trace)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&ok.stderr);
        assert!(ok.status.success(), "{stderr}");
        // PassTiming switched on by name printed its tree when its context was dropped.
        assert!(
            stderr
                .lines()
                .any(|l| l.starts_with("A: ") && l.contains("us [")),
            "{stderr}"
        );
        // The trace switched on by name was written when the context exited.
        let json = std::fs::read_to_string(&trace).unwrap();
        assert!(
            json.contains("\"name\":\"A\"") && json.contains("traceEvents"),
            "{json}"
        );
        let bad = std::process::Command::new(&exe)
            .args(["--exact", "instruments_named_in_the_environment_join_every_context_and_unknown_names_are_errors", "--nocapture"])
            .env("IRPASS_ENV_CHILD", "bad")
            .env(INSTRUMENTS_ENV, "PassTimming")
            .status()
            .unwrap();
        assert!(bad.success());
        return;
    }
    match std::env::var("IRPASS_ENV_CHILD").unwrap().as_str() {
        "good" => {
            let ctx = PassContext::builder().build().unwrap();
            assert!(ctx.instrument::<PassTiming>().is_some());
            assert_eq!(ctx.instruments().len(), 3);
            ctx.scope(|| push("A", 0, 1).run(Tiny::main()))
                .unwrap()
                .unwrap();
            assert_eq!(ctx.instrument::<PassTiming>().unwrap().roots()[0].name, "A");
        }
        _ => {
            let err = PassContext::builder().build().unwrap_err().to_string();
            assert!(
                err.contains("`PassTimming`") && err.contains("PassTiming"),
                "{err}"
            );
        }
    }
}
