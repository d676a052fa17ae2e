//! Rules that ask about users: an `exclusive` rule leaves a match alone when something
//! outside it uses one of its inner values, and a guard reads a node's use count.

mod support;

use irpass_ir::pattern::Rule;
use support::{assert_same, rewrite_with};

fn fuse_exp_log(exclusive: bool) -> Rule {
    let r = Rule::template("fuse", "exp(log(?x))", "?x");
    if exclusive { r.exclusive() } else { r }
}

#[test]
fn an_exclusive_rule_leaves_a_match_whose_inner_value_is_used_outside() {
    let shared = "def @main(%a: float32) { %0 = log(%a); (exp(%0), %0) }";
    // Not exclusive: the fusion fires and `log` stays for the tuple (computed anyway).
    assert_same(
        &rewrite_with(vec![fuse_exp_log(false)], shared),
        "def @main(%a: float32) { (%a, log(%a)) }",
    );
    // Exclusive: `log`'s other user keeps the match as it is.
    assert_same(&rewrite_with(vec![fuse_exp_log(true)], shared), shared);
    // Used once (by the match), it fires.
    assert_same(
        &rewrite_with(
            vec![fuse_exp_log(true)],
            "def @main(%a: float32) { negative(exp(log(%a))) }",
        ),
        "def @main(%a: float32) { negative(%a) }",
    );
}

#[test]
fn an_inner_value_used_twice_inside_the_match_is_exclusive() {
    // `%0` is used twice by the multiply, both inside the match.
    let rule = Rule::template(
        "square_root",
        "sqrt(multiply(log(?x) as ?l, ?l))",
        "abs(log(?x))",
    )
    .exclusive();
    assert_same(
        &rewrite_with(
            vec![rule.clone()],
            "def @main(%a: float32) { %0 = log(%a); sqrt(multiply(%0, %0)) }",
        ),
        "def @main(%a: float32) { abs(log(%a)) }",
    );
    // A third use, outside: left alone.
    let shared = "def @main(%a: float32) { %0 = log(%a); (sqrt(multiply(%0, %0)), %0) }";
    assert_same(&rewrite_with(vec![rule], shared), shared);
}

#[test]
fn a_constant_shared_outside_an_exclusive_match_does_not_stop_it() {
    let rule = Rule::template("double", "multiply(?x, 2f)", "add(?x, ?x)").exclusive();
    assert_same(
        &rewrite_with(
            vec![rule],
            "def @main(%a: float32) { %0 = 2f; (multiply(%a, %0), subtract(%a, %0)) }",
        ),
        "def @main(%a: float32) { (add(%a, %a), subtract(%a, 2f)) }",
    );
}

#[test]
fn a_replacement_takes_the_users_of_what_it_replaced() {
    // `b`'s match holds `a`'s replacement, built in the same round: it has the users of the
    // `exp` it replaced (one), so `b` fires in that round too.
    let a = Rule::template("a", "exp(log(?x))", "negative(?x)").exclusive();
    let b = Rule::template("b", "abs(negative(?x))", "abs(?x)").exclusive();
    assert_same(
        &rewrite_with(
            vec![a.clone(), b.clone()],
            "def @main(%a: float32) { abs(exp(log(%a))) }",
        ),
        "def @main(%a: float32) { abs(%a) }",
    );
    // The replaced `exp` had two users: so has its replacement, and `b` leaves it.
    assert_same(
        &rewrite_with(
            vec![a, b],
            "def @main(%a: float32) { %0 = exp(log(%a)); (abs(%0), %0) }",
        ),
        "def @main(%a: float32) { %0 = negative(%a); (abs(%0), %0) }",
    );
}

#[test]
fn a_guard_reads_how_many_users_a_node_had() {
    let single = Rule::compute("single", "exp(?x)", |cx, m| {
        let x = m["x"];
        (cx.uses(x) == Some(1)).then_some(x)
    });
    assert_same(
        &rewrite_with(
            vec![single.clone()],
            "def @main(%a: float32) { exp(log(%a)) }",
        ),
        "def @main(%a: float32) { log(%a) }",
    );
    let twice = "def @main(%a: float32) { %0 = log(%a); add(exp(%0), %0) }";
    assert_same(&rewrite_with(vec![single], twice), twice);
}
