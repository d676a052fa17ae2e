//! Input nested far deeper than any stack, through the public API end to end — parse, infer
//! types, print, read back, verify, evaluate, drop — on a thread with a 256 KiB stack: no
//! signal, and the stated limits (types and attribute lists nested past 256 levels) are
//! errors. The sizes here are what CI affords; `cargo bench -p irpass-ir --bench deep_input`
//! runs them ten times deeper and checks that the time grows linearly.

use irpass_ir::models::nested_text as nested;
use irpass_ir::{DType, Module, Tensor, Value, eval_function};

/// Runs `f` on a thread with a 256 KiB stack (a recursive walk of any input below would
/// overflow it).
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

/// Parses, types, prints, reads back, verifies and (when `run`) evaluates `text`.
fn round_trip(what: &str, text: &str, run: bool) {
    let m = Module::parse(text).unwrap_or_else(|e| panic!("{what}: {e}"));
    m.infer_types().unwrap_or_else(|e| panic!("{what}: {e}"));
    let printed = m.to_string();
    let again = Module::parse(&printed).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(again.to_string(), printed, "{what}: printing is stable");
    again
        .check_well_formed()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    again.verify().unwrap_or_else(|e| panic!("{what}: {e}"));
    if run {
        let x = Value::tensor(Tensor::scalar(DType::Float32, 0.5));
        eval_function(&again, "main", vec![x]).unwrap_or_else(|e| panic!("{what}: {e}"));
    }
}

/// How deep the nested forms below go.
const DEEP: usize = 100_000;

#[test]
fn calls_a_hundred_thousand_deep() {
    on_small_stack(|| round_trip("exp(…)", &nested(DEEP, "exp(", ")"), true));
}

#[test]
fn blocks_a_hundred_thousand_deep() {
    on_small_stack(|| round_trip("{…}", &nested(DEEP, "{ ", " }"), true));
}

#[test]
fn negations_a_hundred_thousand_deep() {
    on_small_stack(|| round_trip("- - …", &nested(DEEP, "- ", ""), true));
}

#[test]
fn closures_called_where_they_are_made_a_hundred_thousand_deep() {
    on_small_stack(|| {
        round_trip("fn () {…}()", &nested(DEEP, "fn () { ", " }()"), false);
        // Each closure's call is a call frame: past the interpreter's call depth limit that is
        // an error saying so; within it, the value.
        let m = Module::parse(&nested(DEEP, "fn () { ", " }()")).unwrap();
        let x = Value::tensor(Tensor::scalar(DType::Float32, 0.5));
        let err = eval_function(&m, "main", vec![x]).unwrap_err();
        assert!(
            err.message().contains("call depth limit"),
            "{}",
            err.message()
        );
        round_trip("fn () {…}()", &nested(5_000, "fn () { ", " }()"), true);
    });
}

#[test]
fn lets_a_hundred_thousand_deep() {
    on_small_stack(|| round_trip("let", &nested(DEEP, "{ let %y = 1f; ", " }"), true));
}

#[test]
fn infix_operators_a_hundred_thousand_deep() {
    on_small_stack(|| round_trip("%x + (…)", &nested(DEEP, "%x + (", ")"), true));
}

#[test]
fn tuples_a_hundred_thousand_deep_parse_print_and_their_type_is_past_the_limit() {
    // Tuples nested as deep are parsed, printed and checked; their type — nested as deep — is
    // past the stated limit of 256 levels: a type error, not a crash.
    on_small_stack(|| {
        let m = Module::parse(&nested(DEEP, "(", ",)")).unwrap();
        let printed = m.to_string();
        assert_eq!(Module::parse(&printed).unwrap().to_string(), printed);
        m.check_well_formed().unwrap();
        let err = m.infer_types().unwrap_err();
        assert!(
            err.message().contains("nests deeper than 256"),
            "{}",
            err.message()
        );
    });
}

#[test]
fn ifs_a_hundred_thousand_deep() {
    on_small_stack(|| {
        let text = nested(DEEP, "if (True) { ", " } else { %x }");
        round_trip("if", &text, true);
    });
}

#[test]
fn a_hundred_thousand_globals_each_calling_the_next() {
    on_small_stack(|| {
        const N: usize = 100_000;
        let mut text = String::with_capacity(N * 64);
        for i in 0..N {
            if i + 1 < N {
                let next = i + 1;
                text.push_str(&format!(
                    "def @f{i}(%x: float32) -> float32 {{ @f{next}(%x) }}\n"
                ));
            } else {
                text.push_str(&format!(
                    "def @f{i}(%x: float32) -> float32 {{ exp(%x) }}\n"
                ));
            }
        }
        text.push_str("def @main(%x: float32) -> float32 { @f0(%x) }\n");
        let m = Module::parse(&text).unwrap();
        assert_eq!(m.len(), N + 1);
        m.infer_types().unwrap();
        let printed = m.to_string();
        assert_eq!(Module::parse(&printed).unwrap().to_string(), printed);
        m.verify().unwrap();
        // A duplicate among them is found (a hash map, not a scan of earlier functions).
        let dup = format!("{text}def @f77(%x: float32) -> float32 {{ %x }}\n");
        let err = Module::parse(&dup).unwrap_err();
        assert!(err.message().contains("@f77"), "{err}");
    });
}

#[test]
fn types_and_attributes_past_the_stated_limit_are_errors_not_crashes() {
    on_small_stack(|| {
        for text in [
            format!(
                "def @main(%x: {}float32{}) {{ %x }}",
                "(".repeat(100_000),
                ",)".repeat(100_000)
            ),
            format!(
                "def @main(%x: {}float32) {{ %x }}",
                "fn () -> ".repeat(100_000)
            ),
            format!(
                "def @main(%x: float32) {{ sum(%x, axis={}1{}) }}",
                "[".repeat(100_000),
                "]".repeat(100_000)
            ),
        ] {
            let err = Module::parse(&text).expect_err("too deep");
            assert!(err.message().contains("nests deeper than 256"), "{err}");
        }
        // Types nested just within the limit, built by inference from nested tuples, are fine.
        let text = nested(200, "(", ",)");
        round_trip("tuples within the type limit", &text, true);
    });
}
