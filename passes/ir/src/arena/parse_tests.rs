//! The arena parser: the same functions (nodes, sharing, spans), the same errors at the same
//! places as the recursive parser, and input nested a million deep on a small stack.

use super::*;
use crate::Span;
use crate::error::IrError;
use crate::module::Module;

/// Parses `text` both ways and checks that every function came out the same: structurally
/// equal, printed the same, and with the same span on every node (a global, one node for all
/// its uses, carries its first use's).
fn same_as_the_recursive_parser(text: &str) -> Result<(), String> {
    let m = Module::parse(text).map_err(|e| format!("Module::parse: {e}"))?;
    let parsed = parse_functions("<input>", text).map_err(|e| format!("parse_functions: {e}"))?;
    let names: Vec<&str> = m.iter().map(|(n, _)| n).collect();
    let got: Vec<&str> = parsed.iter().map(|p| p.name.as_str()).collect();
    if names != got {
        return Err(format!("functions {got:?} vs {names:?}"));
    }
    for p in &parsed {
        let f = m.get(&p.name).unwrap();
        let old = ArenaFunction::from_function(f);
        if !structurally_equal(&p.function, &old) {
            return Err(format!("@{}: not structurally equal", p.name));
        }
        let new_text = function_text(&p.name, &p.function, p.ret_type.as_ref(), &p.attrs);
        let old_text = function_text(&p.name, &old, f.ret_type.as_ref(), &f.attrs);
        if new_text != old_text {
            return Err(format!("@{}:\n{new_text}\nvs\n{old_text}", p.name));
        }
        if (p.ret_type.as_ref(), &p.attrs, p.span) != (f.ret_type.as_ref(), &f.attrs, f.span) {
            return Err(format!("@{}: signature or span differ", p.name));
        }
        // The same spans and variables on corresponding nodes (found by walking both from
        // the result: the ids may differ, the parser numbering in text order).
        let (a, b) = (&p.function.body, &old.body);
        let mut seen = vec![false; a.len()];
        let mut stack = vec![(p.function.root, old.root)];
        while let Some((x, y)) = stack.pop() {
            if std::mem::replace(&mut seen[x.index()], true) {
                continue;
            }
            let (nx, ny) = (a.node(x), b.node(y));
            if let (Node::Var(u), Node::Var(w)) = (nx, ny) {
                if a.var(*u) != b.var(*w) {
                    return Err(format!(
                        "@{}: variable {:?} vs {:?}",
                        p.name,
                        a.var(*u),
                        b.var(*w)
                    ));
                }
            }
            if !matches!(nx, Node::Global(_)) && a.span(x) != b.span(y) {
                return Err(format!(
                    "@{}: {nx:?} at {:?} vs {:?}",
                    p.name,
                    a.span(x),
                    b.span(y)
                ));
            }
            let (mut ox, mut oy) = (Vec::new(), Vec::new());
            a.for_each_operand(x, |o| ox.push(o));
            b.for_each_operand(y, |o| oy.push(o));
            if let (Node::Let { bindings: bx, .. }, Node::Let { bindings: by, .. }) = (nx, ny) {
                for (&(u, _), &(w, _)) in a.bindings(*bx).iter().zip(b.bindings(*by)) {
                    if a.var(u) != b.var(w) {
                        return Err(format!(
                            "@{}: binding {:?} vs {:?}",
                            p.name,
                            a.var(u),
                            b.var(w)
                        ));
                    }
                }
            }
            stack.extend(ox.into_iter().zip(oy));
        }
        for (&u, &w) in p.function.params.iter().zip(&old.params) {
            if a.var(u) != b.var(w) {
                return Err(format!(
                    "@{}: parameter {:?} vs {:?}",
                    p.name,
                    a.var(u),
                    b.var(w)
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn every_model_parses_into_the_arena_the_recursive_parser_gives() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/models");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "relay") {
            let text = std::fs::read_to_string(&path).unwrap();
            same_as_the_recursive_parser(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            n += 1;
        }
    }
    assert!(n >= 5);
}

#[test]
fn every_construct_of_the_grammar_parses_as_the_recursive_parser_reads_it() {
    let programs = [
        // Infix operators: precedence, associativity, minus signs, and their spans.
        "def @main(%a: float32, %b: float32, %c: float32) { %a + %b * %c - %a / %b }",
        "def @main(%a: float32, %b: float32, %c: float32) { %a * %b + %c < %a == %b }",
        "def @main(%a: float32, %b: float32) { - - %a + -%b * -2f - -3 }",
        "def @main(%a: float32) { (%a + %a) * (%a - %a) }",
        // Calls, projections, tuples, parentheses.
        "def @main(%t: (float32, (float32, float32))) { ((%t.1).0, %t.0, (%t.1,), ()) }",
        "def @f(%x: float32) -> float32 { %x }\ndef @main() { (@f(1f), @f(@f(2f)), @f) }",
        "def @main(%x: Tensor[(2, 4), float32]) { let %s = split(%x, indices_or_sections=2, axis=1); (%s.0, %s.1) }",
        "def @main(%x: Tensor[(1, 8), float32], %w: Tensor[(4, 8), float32]) { nn.dense(%x, %w, units=4) }",
        "def @main(%x: Tensor[(2, 3), float32]) { sum(%x, axis=[1], keepdims=True, exclude=False) }",
        "def @main() { zeros(shape=[2, 2], dtype=float32) }",
        // Bindings, graph nodes, blocks, closures, recursion, free variables.
        "def @main(%x: float32) { %0 = exp(%x); %1 = add(%0, %0); let %y: float32 = %1; (%y, %0) }",
        "def @main(%x: float32) { let %y = { let %z = exp(%x); add(%z, %z) }; multiply(%y, %y) }",
        "def @main(%x: float32) { let %f = fn (%a: float32, Primitive=1) -> float32 { exp(%a) }; %f(%x) }",
        "def @main(%x: float32) { let %loop = fn (%i: int32) -> int32 { if (less(%i, 3)) { %loop(add(%i, 1)) } else { %i } }; %loop(0) }",
        "def @main() { free_var %v: float32; exp(%v) }",
        "def @main(%x: float32) { fn (%a) { %a }(%x) }",
        "def @main(%x: float32) { let %x = exp(%x); let %x = exp(%x); %x }",
        // `if`, constants of every kind.
        "def @main(%c: bool, %x: float32) { if (%c) { let %y = exp(%x); %y } else { if (%c) { %x } else { 0f } } }",
        "def @main() { (1, -2i64, 3.5f, 4f16, 5.25f64, 6u8, -7i8, True, False, Tensor[(2, 2), float32]{1, -2, 3.5, nan}, int32{7}) }",
        "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(?, 3), float32], %f: fn (float32) -> (float32, _)) { %x }",
        "def @main(%x: float32) {\n  // a comment\n  /* and another */ exp(%x)\n}",
    ];
    for text in programs {
        same_as_the_recursive_parser(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, failure_persistence: None, ..Default::default() })]

    #[test]
    fn random_programs_parse_into_the_arena_the_recursive_parser_gives(
        choices in proptest::collection::vec(proptest::prelude::any::<u32>(), 64..256)
    ) {
        let text = crate::random::expr_program(&choices).to_string();
        if let Err(e) = same_as_the_recursive_parser(&text) {
            proptest::prop_assert!(false, "{}\n{}", e, text);
        }
    }
}

/// Texts with a mistake: every parse error of the text format's tests and more.
const BAD: &[&str] = &[
    "def @main(%x: float32) {\n  add(%x, %y)\n}",
    "def @main(%x: float32) {\n  add(%x %x)\n}",
    "def @main(%x: Tensor[(2, 3) float32]) { %x }",
    "def @main(%x: Tensor[(2, 3), float31]) { %x }",
    "def @main() { meta[relay.Constant][0] }",
    "#[version = \"0.0.4\"]\ndef @main() { 1f }",
    "def @main() {\n  /* never closed\n  1f\n}",
    "def @main() { 1q }",
    "def @main() { 300i8 }",
    "def @main(%x: float32) { %x }\ndef @main(%y: float32) { %y }",
    "def @main(%x: float32, %x: float32) { %x }",
    "def @main() { if (True) { 1f } }",
    "def @main() { Tensor[(2), float32]{1, 2, 3} }",
    "def @main(%x: float32) { %x = exp(%x); %x }",
    "def @main() { \"text\" }",
    "let %x = 1f;",
    "def @main() { 1f",
    "def @main(%x: float32) { nn.softmax(%x, axis=1, 2) }",
    "def @main(%f: fn (float32) -> float32) { %f(%f, axis=1) }",
    "def @main(%f: fn (float32) -> float32) { %f(axis=1) }",
    "def @main() { 1f } $",
    "def @main(%x: float32) { (%x, %x }",
    "def @main(%x: float32) { %x.x }",
    "def @main(%x: float32) { exp %x }",
    "def @main(%x: float32) { nope(%x) }",
    "def @main(%x: float32) { exp(%x, axis=1, axis=2) }",
    "def @main(%x: float32) { let %y = exp(%x) %y }",
    "def @main(%x: float32) { let x = 1; %x }",
    "def @main(%x: float32) { (let %y = 1; %y) }",
    "def @main(%x: float32) { if %x { 1 } else { 2 } }",
    "def @main(%x: float32) { { %x }",
    "def @main(%x: float32) { %x + }",
    "def @main(%x: float32) { - }",
    "def @main() { fn (%a) { %a }",
    "def @main() { fn (%a %b) { %a } }",
    "def @main(%x: ((((float32)))) { %x }",
    "def @main() { sum(1f, axis=[[1]]) }",
    "def @main() { Tensor[(2), float32]{1, x} }",
    "def main() { 1f }",
    "METADATA",
];

#[test]
fn bad_text_gets_the_error_the_recursive_parser_gives_at_the_same_place() {
    let show = |e: &IrError| {
        e.problems
            .iter()
            .map(|p| (p.message.clone(), p.span.map(|s: Span| (s.start, s.end))))
            .collect::<Vec<_>>()
    };
    for text in BAD {
        let old = Module::parse(text).expect_err(text);
        let new = parse_functions("<input>", text).expect_err(text);
        assert_eq!(show(&new), show(&old), "{text}");
        assert_eq!(new.render(), old.render(), "{text}");
    }
}

#[test]
fn a_field_number_past_u32_is_an_error() {
    // The recursive parser takes any `usize`; an arena's projection holds a `u32`.
    let err = parse_functions("<input>", "def @main(%x: float32) { %x.99999999999 }").unwrap_err();
    assert!(err.message().contains("field number too large"), "{err}");
}

/// On a thread with a small stack, so that a recursion as deep as the input would overflow.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

/// `open` and `close` around `%x` `depth` times, in a function of `%x: float32`.
fn nested(depth: usize, open: &str, close: &str) -> String {
    let mut text = String::from("def @main(%x: float32) { ");
    for _ in 0..depth {
        text.push_str(open);
    }
    text.push_str("%x");
    for _ in 0..depth {
        text.push_str(close);
    }
    text.push_str(" }");
    text
}

#[test]
fn text_nested_a_million_deep_parses_in_a_loop() {
    on_small_stack(|| {
        const DEEP: usize = 1_000_000;
        // (open, close, nodes made per level)
        let cases = [
            ("(", ")", 0),
            ("(", ",)", 1),
            ("{ ", " }", 0),
            ("exp(", ")", 1),
            ("- ", "", 1),
            ("fn () { ", " }()", 1),
            ("if (True) { ", " } else { %x }", 1),
            ("{ let %y = 1f; ", " }", 1),
            ("%x + (", ")", 1),
        ];
        for (open, close, per_level) in cases {
            let text = nested(DEEP, open, close);
            let f = parse_functions("<input>", &text)
                .unwrap_or_else(|e| panic!("{open}...{close}: {e}"))
                .remove(0);
            assert!(
                f.function.body.len() >= DEEP * per_level,
                "{open}...{close}"
            );
        }
        // A long flat chain of infix operators.
        let mut text = String::from("def @main(%x: float32) { %x");
        for _ in 0..DEEP {
            text.push_str(" + %x * %x");
        }
        text.push_str(" }");
        let f = parse_functions("<input>", &text).unwrap().remove(0);
        assert_eq!(f.function.body.len(), 2 * DEEP + 1);
    });
}

#[test]
fn a_type_or_attribute_nested_past_the_limit_is_a_parse_error() {
    on_small_stack(|| {
        let deep_type = format!(
            "def @main(%x: {}float32{}) {{ %x }}",
            "(".repeat(100_000),
            ",)".repeat(100_000)
        );
        let deep_attr = format!(
            "def @main(%x: float32) {{ sum(%x, axis={}1{}) }}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        for text in [deep_type, deep_attr] {
            let new = parse_functions("<input>", &text).expect_err("too deep");
            assert!(new.message().contains("nests deeper than 256"), "{new}");
            let old = Module::parse(&text).expect_err("too deep");
            assert_eq!(old.message(), new.message());
        }
    });
}
