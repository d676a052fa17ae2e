//! Every operator on extreme shapes and attributes: huge and zero dimensions, integer
//! attributes at the ends of their range. Each program type-checks or gets an error, and each
//! that type-checks on small inputs evaluates or gets an error; none panics (the tests run
//! with overflow checks on).

use irpass_ir::random::{EXTREME_INTS, arg_counts, extreme_call, filled_inputs};
use irpass_ir::{DType, Module, Op, eval_function};

const HUGE: &str = "4611686018427387904"; // 2^62
const MAX: &str = "9223372036854775807"; // i64::MAX

/// Every operator called on parameters of each of `shapes` (float32 and int64), with default
/// and with each extreme integer attribute: the programs' text.
fn programs(shapes: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for op in Op::all() {
        for n in arg_counts(op) {
            for shape in shapes {
                for dtype in [DType::Float32, DType::Int64] {
                    let ints = std::iter::once(None).chain(EXTREME_INTS.map(Some));
                    for int in ints {
                        let params: Vec<String> = (0..n)
                            .map(|i| format!("%a{i}: Tensor[{shape}, {dtype}]"))
                            .collect();
                        let args: Vec<String> = (0..n).map(|i| format!("%a{i}")).collect();
                        let text = format!(
                            "def @main({}) {{ {} }}",
                            params.join(", "),
                            extreme_call(op, &args, int)
                        );
                        out.push(text);
                    }
                }
            }
        }
    }
    out
}

fn report(panics: &[String], of: usize) -> String {
    format!(
        "{} of {of} programs panic, e.g.:\n{}",
        panics.len(),
        panics
            .iter()
            .take(30)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    )
}

#[test]
fn no_type_relation_panics_on_extreme_shapes_or_attributes() {
    let shapes = [
        "()".to_string(),
        "(0)".into(),
        format!("({HUGE})"),
        format!("({MAX})"),
        format!("({HUGE}, {HUGE})"),
        format!("(1, {HUGE}, 3, 3)"),
        format!("({MAX}, {MAX}, {MAX}, {MAX})"),
        "(2, 0, 3, 3)".into(),
    ];
    let programs = programs(&shapes);
    assert!(programs.len() > 1000, "{} programs", programs.len());
    let panics: Vec<String> = programs
        .iter()
        .filter(|text| {
            std::panic::catch_unwind(|| {
                if let Ok(m) = Module::parse(text) {
                    let _ = m.infer_types();
                }
            })
            .is_err()
        })
        .cloned()
        .collect();
    assert!(panics.is_empty(), "{}", report(&panics, programs.len()));
}

#[test]
fn no_kernel_panics_on_extreme_attributes() {
    let shapes = ["()", "(4)", "(2, 3)", "(1, 2, 3, 3)"].map(String::from);
    let mut panics = Vec::new();
    let mut evaluated = 0;
    for text in programs(&shapes) {
        let Ok(m) = Module::parse(&text) else {
            continue;
        };
        if m.infer_types().is_err() {
            continue;
        }
        // Parameter i is filled with 1 + i, in its declared type.
        let inputs = filled_inputs(&m);
        evaluated += 1;
        if std::panic::catch_unwind(|| eval_function(&m, "main", inputs)).is_err() {
            panics.push(text);
        }
    }
    assert!(evaluated > 500, "{evaluated} programs evaluated");
    assert!(panics.is_empty(), "{}", report(&panics, evaluated));
}
