//! `rules!` at compile time: every misuse is an error on the string or name at fault
//! (`ui/fail/*.rs`, each with its reviewed `.stderr`), and a rule set registered as a pass
//! compiles, is found by name and runs (`ui/pass/*.rs`).
//!
//! The `.stderr` files are rustc 1.95's wording: on another toolchain the suite is ignored,
//! with that reason. Regenerate with `TRYBUILD=overwrite cargo test -p irpass-ir-macros --test
//! ui` and review the diff.

#[test]
#[rustversion::attr(
    not(stable(1.95)),
    ignore = "the .stderr files were recorded with rustc 1.95 (stable)"
)]
fn rule_errors_and_accepted_forms() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
