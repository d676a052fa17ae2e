//! The macros' compile-time behaviour: every misuse is one clear error on the token at fault
//! (`ui/<topic>/*.rs`, each with its reviewed `.stderr`), and every accepted form compiles and
//! runs (`ui/pass/*.rs`).
//!
//! The `.stderr` files are rustc 1.95's wording: on another toolchain the suite is ignored,
//! with that reason, so the test runner reports it as such. Regenerate with
//! `TRYBUILD=overwrite cargo test -p irpass-tests --test ui` and review the diff.

#[test]
#[rustversion::attr(
    not(stable(1.95)),
    ignore = "the .stderr files were recorded with rustc 1.95 (stable)"
)]
fn macro_errors_and_accepted_forms() {
    let t = trybuild::TestCases::new();
    for topic in [
        "args",
        "signature",
        "impl_block",
        "instrument",
        "config",
        "analysis",
        "options",
    ] {
        t.compile_fail(format!("ui/{topic}/*.rs"));
    }
    t.pass("ui/pass/*.rs");
}
