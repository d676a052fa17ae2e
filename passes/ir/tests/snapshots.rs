//! What the IR gives on every model, every construct of the grammar, bad text, ill-typed
//! programs and random programs — text, types, values and errors — compared with snapshots in
//! `tests/snapshots/`. The snapshots were recorded when the arena IR replaced the
//! node-per-expression one, whose outputs the arena's matched on all of these (the comparison
//! tests of that time); `IRPASS_BLESS=1 cargo test -p irpass-ir --test snapshots` rewrites them
//! after an intended change, for review in the diff.

use std::fmt::Write as _;
use std::path::PathBuf;

use irpass_ir::body::{Node, post_order};
use irpass_ir::{IrError, Module, Tensor, Value, eval_function, module_dot, random};

/// Compares `actual` with the snapshot `name` (or writes it, with `IRPASS_BLESS=1`).
fn check_snapshot(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(format!("{name}.txt"));
    if std::env::var_os("IRPASS_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (IRPASS_BLESS=1 writes it)", path.display()));
    if expected != actual {
        let diff = similar::TextDiff::from_lines(expected.as_str(), actual)
            .unified_diff()
            .header("snapshot", "actual")
            .to_string();
        panic!("{name} differs from its snapshot (IRPASS_BLESS=1 rewrites it):\n{diff}");
    }
}

/// The models of `examples/models`, by file name.
fn models() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/models");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "relay"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    out.sort();
    assert!(out.len() >= 5, "the models are in the repository");
    out
}

/// Every construct of the grammar, once or more.
const CONSTRUCTS: &[&str] = &[
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

/// Closures, globals, recursion and unknown types for inference.
const TYPED: &[&str] = &[
    "def @main(%x: Tensor[(3), float32]) { let %f = fn (%y) { exp(%y) }; let %g = fn (%a, %b) { (%a, %b) }; %g(%f(%x), 1) }",
    "def @f(%x) { %x }\ndef @main(%y: float32) { @f(%y) }",
    "def @even(%n: int32) -> bool { if (equal(%n, 0)) { True } else { @odd(subtract(%n, 1)) } }\n\
         def @odd(%n: int32) -> bool { if (equal(%n, 0)) { False } else { @even(subtract(%n, 1)) } }\n\
         def @main() { @even(4) }",
    "def @main(%x: float32) { let %loop: fn (int32, float32) -> float32 = fn (%i: int32, %acc: float32) -> float32 { if (less(%i, 3)) { %loop(add(%i, 1), multiply(%acc, %x)) } else { %acc } }; %loop(0, 1f) }",
    "def @main(%x: Tensor[(?, 4), float32], %w: Tensor[(8, 4), float32]) { nn.dense(%x, %w) }",
    "def @main(%t: (Tensor[(2), float32], _)) { let %u = (%t.0, %t.0); %u.1 }",
    "def @main(%x: Tensor[(2, 3), float32]) { let %y = transpose(%x); let %t = (%y, %x); (%t.1, %t.0) }",
    "def @main(%x: Tensor[(4), float32]) { let %s = split(%x, indices_or_sections=2); (%s.0, %s.1) }",
    "def @main(%x: float32) { let %f = fn (%a) { %a }; (%f(%x), %f) }",
    "def @id(%x) { %x }",
];

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
    "def @main(%x: float32) { add(let %y = 1f; %y, %x) }",
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

/// Ill-typed programs: one or more per kind of mistake.
const ILL_TYPED: &[&str] = &[
    "def @main(%x: Tensor[(2), float32]) -> Tensor[(3), float32] {\n  exp(%x)\n}",
    "def @main(%c: float32, %x: float32) {\n  if (%c) { %x } else { %x }\n}",
    "def @main(%c: bool, %x: float32) {\n  if (%c) { %x } else { 1 }\n}",
    "def @main(%x: float32) {\n  let %y: int32 = %x;\n  %y\n}",
    "def @f(%x: float32) -> float32 { %x }\ndef @main() {\n  @f(1, 2)\n}",
    "def @f(%x: float32) -> float32 { %x }\ndef @main() {\n  @f(1)\n}",
    "def @main(%x: float32) {\n  %x(1f)\n}",
    "def @main(%t: (float32, float32)) {\n  %t.2\n}",
    "def @main(%x: float32) {\n  %x.0\n}",
    "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(3, 2), float32]) {\n  %0 = add(%x, %x);\n  add(%0, %y)\n}",
    "def @main() {\n  @missing(1f)\n}",
    "def @main() {\n  let %f = fn (%a) { exp(%a) };\n  1f\n}",
    "def @a(%x: float32) -> int32 { %x }\ndef @b(%x: int32) -> float32 { %x }",
    "def @main(%x: float32) { let %f = fn (%a) -> int32 { %a }; %f(%x) }",
    "def @main(%x: (float32, int32)) -> (float32, float32) { %x }",
    "def @main(%x: float32) { let %f = fn (%a: float32) { %a }; %f(%x, %x) }",
    "def @main(%x: float32) { let %f = fn (%a) { %a(%a) }; %f }",
    "def @main(%x: Tensor[(2), float32]) { (add(%x, 1i64), add(%x, 1i64)) }",
];

/// Programs for the interpreter: closures, recursion, globals, tuples, and errors.
const EVALUATED: &[&str] = &[
    "def @main(%x: float32) { let %f = fn (%a: float32) { multiply(%a, %x) }; (%f(2f), %f(%x)) }",
    "def @main(%x: int32) { let %loop = fn (%i: int32, %acc: int32) -> int32 { if (less(%i, 10)) { %loop(add(%i, 1), add(%acc, %i)) } else { %acc } }; %loop(0, %x) }",
    "def @fact(%n: int32) -> int32 { if (equal(%n, 0)) { 1 } else { multiply(%n, @fact(subtract(%n, 1))) } }\ndef @main() { @fact(10) }",
    "def @main(%t: (float32, float32)) { %t.1 }",
    "def @main(%x: Tensor[(4), float32]) { let %s = split(%x, indices_or_sections=2); add(%s.0, %s.1) }",
    "def @main(%x: float32) { %0 = exp(%x); %1 = add(%0, %0); if (less(%1, 3f)) { %0 } else { %1 } }",
    "def @main(%x: float32) { let %k = fn (%a: float32) { fn (%b: float32) { add(%a, %b) } }; %k(1f)(%x) }",
    "def @main(%x: float32) { fn (%a: float32) { %a } }",
    "def @main(%x: Tensor[(2), float32]) { reshape(%x, newshape=[3]) }",
    "def @main(%x: float32) { let %f = fn (%a: float32) { %a }; %f(%x, %x) }",
    "def @main(%x: float32) { @main(%x) }",
];

/// Each message and position of an error, and its rendering.
fn problems(e: &IrError) -> String {
    let mut out = String::new();
    for p in &e.problems {
        let span = p.span.map(|s| (s.start, s.end));
        let _ = writeln!(out, "{:?} at {span:?}", p.message);
    }
    out.push_str(&e.render());
    out
}

/// The module's text and, once typed, each function's type and the type of every variable
/// bound in it (in evaluation order), or the type errors.
fn text_and_types(m: &Module) -> String {
    let mut out = m.to_string();
    if let Err(e) = m.infer_types() {
        out.push_str(&problems(&e));
        return out;
    }
    for (name, f) in m.iter() {
        let types = f.types().expect("typed");
        let _ = writeln!(out, "@{name}: {}", types.function_type());
        let body = &f.code.body;
        for e in post_order(body, f.code.root) {
            if let Node::Let { bindings, .. } = body.node(e) {
                for &(v, value) in body.bindings(*bindings) {
                    let _ = writeln!(out, "  %{} = {}", body.var(v).name, types.of(value));
                }
            }
        }
    }
    out
}

#[test]
fn every_model_and_construct_parses_prints_and_types_as_recorded() {
    let mut out = String::new();
    for (name, text) in models() {
        let m = Module::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let _ = writeln!(out, "==== {name}\n{}", text_and_types(&m));
    }
    for text in CONSTRUCTS.iter().chain(TYPED) {
        let m = Module::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let _ = writeln!(out, "==== {text}\n{}", text_and_types(&m));
    }
    check_snapshot("text_and_types", &out);
}

#[test]
fn bad_text_gets_the_errors_recorded_at_the_same_places() {
    let mut out = String::new();
    for text in BAD {
        let e = Module::parse(text).expect_err(text);
        let _ = writeln!(out, "==== {text}\n{}", problems(&e));
    }
    check_snapshot("parse_errors", &out);
}

#[test]
fn ill_typed_programs_get_the_problems_recorded_at_the_same_places() {
    let mut out = String::new();
    for text in ILL_TYPED {
        let m = Module::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let e = m.infer_types().expect_err(text);
        let _ = writeln!(out, "==== {text}\n{}", problems(&e));
    }
    check_snapshot("type_errors", &out);
}

/// The value of `@main` on the inputs of `seed` (made positive when `positive`, as a batch
/// norm's variance must be), or the error.
fn value(m: &Module, seed: u64, positive: bool) -> String {
    let mut inputs = random::inputs(m, seed);
    if positive {
        for v in &mut inputs {
            if let Value::Tensor(t) = v {
                let values: Vec<f64> = t.values().iter().map(|x| x.abs() + 0.5).collect();
                *v = Value::tensor(Tensor::from_vec(t.dtype(), t.shape(), values).unwrap());
            }
        }
    }
    match eval_function(m, "main", inputs) {
        Ok(v) => format!("{v:?}"),
        Err(e) => format!("error: {}", e.message()),
    }
}

#[test]
fn every_model_and_program_evaluates_to_the_values_recorded() {
    let mut out = String::new();
    for (name, text) in models() {
        let m = Module::parse(&text).unwrap();
        let _ = writeln!(out, "==== {name}\n{}", value(&m, 0, true));
    }
    for text in EVALUATED {
        let m = Module::parse(text).unwrap();
        let _ = writeln!(out, "==== {text}\n{}", value(&m, 7, false));
    }
    check_snapshot("values", &out);
}

#[test]
fn random_programs_print_type_and_evaluate_as_recorded() {
    let mut out = String::new();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for i in 0..24 {
        let len = 16 + 8 * i;
        let choices: Vec<u32> = (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 16) as u32
            })
            .collect();
        let m = random::program(&choices);
        let _ = writeln!(
            out,
            "==== program {i}\n{}{}",
            text_and_types(&m),
            value(&m, i as u64, false)
        );
    }
    check_snapshot("random_programs", &out);
}

#[test]
fn every_model_draws_the_dot_graph_recorded() {
    let mut out = String::new();
    for (name, text) in models() {
        let m = Module::parse(&text).unwrap();
        let _ = writeln!(out, "==== {name}\n{}", module_dot(&m));
    }
    check_snapshot("dot", &out);
}
