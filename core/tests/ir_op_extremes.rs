//! Every operator on extreme shapes and attributes: huge and zero dimensions, integer
//! attributes at the ends of their range. Each program type-checks or gets an error, and each
//! that type-checks on small inputs evaluates or gets an error; none panics (the tests run
//! with overflow checks on).

use irpass::ir::op::{Arity, AttrDefault, AttrKind};
use irpass::ir::{DType, Module, Op, Tensor, Value, eval_function};

const HUGE: &str = "4611686018427387904"; // 2^62
const MAX: &str = "9223372036854775807"; // i64::MAX

fn shapes() -> Vec<String> {
    vec![
        "()".into(),
        "(0)".into(),
        format!("({HUGE})"),
        format!("({MAX})"),
        format!("({HUGE}, {HUGE})"),
        format!("(1, {HUGE}, 3, 3)"),
        format!("({MAX}, {MAX}, {MAX}, {MAX})"),
        "(2, 0, 3, 3)".into(),
    ]
}

/// A value for each attribute: the required ones get a plausible value, the integer ones
/// (when `hostile`) a value at the end of the range.
fn attrs(op: Op, hostile: Option<&str>) -> Vec<String> {
    op.def()
        .attrs
        .iter()
        .filter_map(|a| {
            let required = matches!(a.default, AttrDefault::Required);
            let value = match (a.kind, hostile) {
                (AttrKind::Int | AttrKind::OptInt, Some(v)) => v.to_string(),
                (AttrKind::Ints | AttrKind::OptInts | AttrKind::IntOrInts, Some(v)) => {
                    format!("[{v}, {v}]")
                }
                _ if !required => return None,
                (AttrKind::Int | AttrKind::OptInt, None) => "1".into(),
                (AttrKind::Ints | AttrKind::OptInts | AttrKind::IntOrInts, None) => "[1]".into(),
                (AttrKind::Float, _) => "1.0".into(),
                (AttrKind::Bool, _) => "True".into(),
                (AttrKind::DType, _) => "\"float32\"".into(),
                (AttrKind::Str, _) => "\"NCHW\"".into(),
            };
            Some(format!("{}={value}", a.name))
        })
        .collect()
}

#[test]
fn no_type_relation_panics_on_extreme_shapes_or_attributes() {
    let mut panics = Vec::new();
    let mut checked = 0;
    for op in Op::all() {
        let counts = match op.def().arity {
            Arity::Exact(n) => vec![n],
            Arity::AtLeast(n) => vec![n, n + 1],
        };
        for n in counts {
            for shape in shapes() {
                for dtype in ["float32", "int64"] {
                    for hostile in [
                        None,
                        Some("-1"),
                        Some(MAX),
                        Some("-9223372036854775808"),
                        Some(HUGE),
                    ] {
                        let params: Vec<String> = (0..n)
                            .map(|i| format!("%a{i}: Tensor[{shape}, {dtype}]"))
                            .collect();
                        let mut args: Vec<String> = (0..n).map(|i| format!("%a{i}")).collect();
                        args.extend(attrs(op, hostile));
                        let text = format!(
                            "def @main({}) {{ {}({}) }}",
                            params.join(", "),
                            op.name(),
                            args.join(", ")
                        );
                        let outcome = std::panic::catch_unwind(|| {
                            if let Ok(m) = Module::parse(&text) {
                                let _ = m.infer_types();
                            }
                        });
                        checked += 1;
                        if outcome.is_err() {
                            panics.push(text);
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 1000, "{checked} programs");
    assert!(
        panics.is_empty(),
        "{} of {checked} programs panic, e.g.:\n{}",
        panics.len(),
        panics
            .iter()
            .take(30)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn no_kernel_panics_on_extreme_attributes() {
    let mut panics = Vec::new();
    let mut evaluated = 0;
    for op in Op::all() {
        let counts = match op.def().arity {
            Arity::Exact(n) => vec![n],
            Arity::AtLeast(n) => vec![n, n + 1],
        };
        for n in counts {
            for shape in [vec![], vec![4], vec![2, 3], vec![1, 2, 3, 3]] {
                for (dtype, name) in [(DType::Float32, "float32"), (DType::Int64, "int64")] {
                    for hostile in [
                        None,
                        Some("-1"),
                        Some("2"),
                        Some(MAX),
                        Some("-9223372036854775808"),
                        Some(HUGE),
                    ] {
                        let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
                        let params: Vec<String> = (0..n)
                            .map(|i| format!("%a{i}: Tensor[({}), {name}]", dims.join(", ")))
                            .collect();
                        let mut args: Vec<String> = (0..n).map(|i| format!("%a{i}")).collect();
                        args.extend(attrs(op, hostile));
                        let text = format!(
                            "def @main({}) {{ {}({}) }}",
                            params.join(", "),
                            op.name(),
                            args.join(", ")
                        );
                        let Ok(m) = Module::parse(&text) else {
                            continue;
                        };
                        if m.infer_types().is_err() {
                            continue;
                        }
                        let inputs: Vec<Value> = (0..n)
                            .map(|i| Value::tensor(Tensor::full(dtype, &shape, 1.0 + i as f64)))
                            .collect();
                        evaluated += 1;
                        let outcome = std::panic::catch_unwind(|| {
                            let _ = eval_function(&m, "main", inputs);
                        });
                        if outcome.is_err() {
                            panics.push(text);
                        }
                    }
                }
            }
        }
    }
    assert!(evaluated > 500, "{evaluated} programs evaluated");
    assert!(
        panics.is_empty(),
        "{} of {evaluated} programs panic, e.g.:\n{}",
        panics.len(),
        panics
            .iter()
            .take(30)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
