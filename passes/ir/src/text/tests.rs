//! The parser: input nested a million deep on a small stack, and the limits it states (what it
//! makes of every model, construct and mistake is recorded in `tests/snapshots/`).

use super::*;

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

use crate::models::nested_text as nested;

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
            let err = parse_functions("<input>", &text).expect_err("too deep");
            assert!(err.message().contains("nests deeper than 256"), "{err}");
        }
    });
}

#[test]
fn a_parenthesised_let_parses_prints_and_round_trips() {
    // Relay writes a `let` in operand position in parentheses: `(let %a = 1; %a) + 2`.
    let text = "def @main(%x: float32) {\n  add((let %a = exp(%x); multiply(%a, %a)), 2f)\n}\n";
    let m = crate::Module::parse(text).unwrap();
    m.infer_types().unwrap();
    let printed = m.to_string();
    assert!(printed.contains("let %a = exp(%x);"), "{printed}");
    let again = crate::Module::parse(&printed).unwrap();
    assert!(again.structurally_equal(&m), "{printed}");
    assert_eq!(again.to_string(), printed);
    // The same program with the block the printer writes.
    let block = "def @main(%x: float32) {\n  add({ let %a = exp(%x); multiply(%a, %a) }, 2f)\n}\n";
    assert!(crate::Module::parse(block).unwrap().structurally_equal(&m));
    // Nested, and with a `let` chain inside.
    let nested = "def @main() { (let %a = 1f; (let %b = %a; add(%a, %b))) }";
    crate::Module::parse(nested).unwrap().infer_types().unwrap();
    // A parenthesised `let` is closed by `)`; a missing one says so.
    let err = crate::Module::parse("def @main() { add((let %a = 1f; %a, 2f) }").unwrap_err();
    assert!(
        err.to_string()
            .contains("expected `)` to close the parenthesised `let`"),
        "{err}"
    );
}
