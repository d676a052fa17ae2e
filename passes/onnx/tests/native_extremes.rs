//! Every native operator (`onnx.*`) called on parameters of a few shapes and element types,
//! with its attributes at their defaults and at extreme integers: each call type-checks or
//! gets an error, and each that type-checks evaluates or gets an error; none panics (the
//! tests run with overflow checks on).

use irpass_ir::random::{EXTREME_INTS, extreme_call, filled_inputs};
use irpass_ir::{DType, Module, Op, eval_function};
use irpass_onnx as _;

/// The calls of every native operator on 1 to 4 parameters of the shapes (all of one, or of
/// different ones), float32 and int64, with default and extreme integer attributes: the
/// programs' text.
fn programs() -> Vec<String> {
    let shapes = ["()", "(4)", "(2, 3)", "(1, 2, 3, 3)"];
    let natives = Op::all()
        .into_iter()
        .filter(|op| op.name().starts_with("onnx.") && op.name() != "onnx.node");
    let mut out = Vec::new();
    for op in natives {
        for n in 1..=4 {
            // Every parameter of one shape, or each of the next shape than the one before.
            for (first, mixed) in (0..shapes.len()).flat_map(|s| [(s, false), (s, true)]) {
                let shape = |i: usize| shapes[(first + if mixed { i } else { 0 }) % shapes.len()];
                for dtype in [DType::Float32, DType::Int64] {
                    for int in std::iter::once(None).chain(EXTREME_INTS.map(Some)) {
                        let params: Vec<String> = (0..n)
                            .map(|i| format!("%a{i}: Tensor[{}, {dtype}]", shape(i)))
                            .collect();
                        let args: Vec<String> = (0..n).map(|i| format!("%a{i}")).collect();
                        out.push(format!(
                            "def @main({}) {{ {} }}",
                            params.join(", "),
                            extreme_call(op, &args, int)
                        ));
                    }
                }
            }
        }
    }
    out
}

thread_local! {
    /// Where the last panic on this thread happened.
    static WHERE: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// `text`, the program that panicked, with where it did.
fn located(text: &str) -> String {
    let at = WHERE.with(|w| w.borrow().clone());
    format!("{text} (at {at})")
}

#[test]
fn no_native_kernel_panics_on_what_its_type_relation_accepts() {
    std::panic::set_hook(Box::new(|info| {
        let at = info.location().map(|l| l.to_string()).unwrap_or_default();
        WHERE.with(|w| *w.borrow_mut() = at);
    }));
    let mut panics = Vec::new();
    let mut evaluated = 0;
    for text in programs() {
        let Ok(m) = Module::parse(&text) else {
            continue;
        };
        if std::panic::catch_unwind(|| m.infer_types()).map_or(true, |r| r.is_err()) {
            if std::panic::catch_unwind(|| m.infer_types()).is_err() {
                panics.push(format!("(type relation) {}", located(&text)));
            }
            continue;
        }
        // Parameter i is filled with 1 + i, in its declared type.
        let inputs = filled_inputs(&m);
        evaluated += 1;
        if std::panic::catch_unwind(|| eval_function(&m, "main", inputs)).is_err() {
            panics.push(located(&text));
        }
    }
    // (The default hook again, to report the failure.)
    drop(std::panic::take_hook());
    assert!(evaluated > 1000, "{evaluated} programs evaluated");
    // One example per operator that panics.
    let mut first: std::collections::BTreeMap<&str, (usize, &str)> = Default::default();
    for p in &panics {
        let op = p
            .split("{ ")
            .nth(1)
            .and_then(|c| c.split('(').next())
            .unwrap_or(p);
        first.entry(op).or_insert((0, p)).0 += 1;
    }
    let examples: Vec<String> = first
        .iter()
        .map(|(op, (n, p))| format!("{op} ×{n}: {p}"))
        .collect();
    assert!(
        panics.is_empty(),
        "{} of {evaluated} programs panic:\n{}",
        panics.len(),
        examples.join("\n")
    );
}
