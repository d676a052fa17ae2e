//! Helpers the rule tests share.

use irpass_ir::Module;
use irpass_ir::pattern::{Rule, RuleSet};

/// `input`'s `@main` rewritten by `rules` (as a set named `test`, without types).
pub fn rewrite_with(rules: Vec<Rule>, input: &str) -> Module {
    let m = Module::parse(input).expect("the test's program parses");
    let f = m.get("main").expect("the test's program has @main");
    let out = RuleSet::new("test", rules).apply(&f.code, None).unwrap();
    Module::from_functions([("main", f.with_code(out))])
}

/// Asserts that `got` is `want` (text), structurally, sharing included.
pub fn assert_same(got: &Module, want: &str) {
    let want = Module::parse(want).unwrap();
    assert!(got.structurally_equal(&want), "got\n{got}\nwant\n{want}");
}
