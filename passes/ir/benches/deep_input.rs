//! Input nested 10^5 and 10^6 deep, end to end through the public API — parse, infer types,
//! print, read the text back, check it, evaluate (where the interpreter's call depth limit
//! allows), drop — on a thread with a 1 MiB stack, and 10^5 and 10^6 globals each calling the
//! next. Prints, per form, the best of three rounds at each size and the ratio: a quadratic
//! step would show 100 or more; linear work shows 10 times what this machine's caches add at
//! that size, which the last line calibrates: a hash map filled with n keys and read back,
//! timed in the same run (on the 2-core VM of BENCHMARKS.md it grows 30–45× from 10^5 to 10^6).
//!
//! ```text
//! cargo bench -p irpass-ir --bench deep_input
//! cargo bench -p irpass-ir --bench deep_input -- if   # the forms whose name contains "if"
//! ```
//! The test suite runs the same forms at 10^5 (`tests/deep_input.rs`).
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use irpass_ir::models::nested_text as nested;
use irpass_ir::{DType, Module, Tensor, Value, eval_function};
use rustc_hash::FxHashMap;

/// `n` globals, each calling the next, and `@main` calling the first.
fn globals(n: usize) -> String {
    let mut text = String::with_capacity(n * 64);
    for i in 0..n {
        let call = if i + 1 < n {
            format!("@f{}(%x)", i + 1)
        } else {
            "exp(%x)".to_string()
        };
        text.push_str(&format!("def @f{i}(%x: float32) -> float32 {{ {call} }}\n"));
    }
    text.push_str("def @main(%x: float32) -> float32 { @f0(%x) }\n");
    text
}

/// Everything the IR does with a text, in order; `run` evaluates `@main` too.
fn end_to_end(text: &str, run: bool) {
    let m = Module::parse(text).expect("parses");
    m.infer_types().expect("types");
    let printed = m.to_string();
    let again = Module::parse(&printed).expect("reads back");
    again.check_well_formed().expect("well formed");
    again.verify().expect("verifies");
    if run {
        let x = Value::tensor(Tensor::scalar(DType::Float32, 0.5));
        eval_function(&again, "main", vec![x]).expect("evaluates");
    }
    drop((m, again));
}

/// The best of three rounds of `end_to_end` on `text`, on a thread with a 1 MiB stack.
fn time(text: String, run: bool) -> Duration {
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            (0..3)
                .map(|_| {
                    let t = Instant::now();
                    end_to_end(&text, run);
                    t.elapsed()
                })
                .min()
                .expect("three rounds")
        })
        .expect("a thread")
        .join()
        .expect("no panic")
}

/// The calibration: an `FxHashMap` filled with `n` keys and each read back once, best of three.
fn hash_map_calibration(n: u32) -> Duration {
    (0..3)
        .map(|_| {
            let t = Instant::now();
            let mut m: FxHashMap<u32, u64> = FxHashMap::default();
            for i in 0..n {
                m.insert(i, u64::from(i));
            }
            let sum: u64 = (0..n).map(|i| m[&(n - 1 - i)]).sum();
            black_box(sum);
            t.elapsed()
        })
        .min()
        .expect("three rounds")
}

/// One line of the table.
fn row(name: &str, small: Duration, large: Duration) {
    println!(
        "{name:<36} {:>12.1} {:>12.1} {:>8.1}",
        small.as_secs_f64() * 1e3,
        large.as_secs_f64() * 1e3,
        large.as_secs_f64() / small.as_secs_f64()
    );
}

fn main() {
    let filter = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .unwrap_or_default();
    // (name, text at a depth, evaluate?). Nested closures are not evaluated: each is a call,
    // and the interpreter stops at 10 000 nested calls with an error (the tests check it).
    type Make = fn(usize) -> String;
    let forms: [(&str, Make, bool); 9] = [
        ("calls exp(…)", |d| nested(d, "exp(", ")"), true),
        ("blocks { … }", |d| nested(d, "{ ", " }"), true),
        ("negations - - …", |d| nested(d, "- ", ""), true),
        ("infix %x + (…)", |d| nested(d, "%x + (", ")"), true),
        (
            "lets { let %y = 1f; … }",
            |d| nested(d, "{ let %y = 1f; ", " }"),
            true,
        ),
        (
            "ifs if (True) { … } else { %x }",
            |d| nested(d, "if (True) { ", " } else { %x }"),
            true,
        ),
        (
            "closures fn () { … }()",
            |d| nested(d, "fn () { ", " }()"),
            false,
        ),
        ("tuple (…,).0", |d| nested(d, "(", ",).0"), true),
        // Not evaluated: 10^5 nested calls are past the interpreter's call depth limit.
        ("globals @f_i calls @f_i+1", globals, false),
    ];
    println!(
        "{:<36} {:>12} {:>12} {:>8}",
        "form (best of 3)", "10^5 (ms)", "10^6 (ms)", "ratio"
    );
    for (name, make, run) in forms {
        if !name.contains(filter.as_str()) {
            continue;
        }
        row(name, time(make(100_000), run), time(make(1_000_000), run));
    }
    row(
        "calibration: hash map, n keys",
        hash_map_calibration(100_000),
        hash_map_calibration(1_000_000),
    );
}
