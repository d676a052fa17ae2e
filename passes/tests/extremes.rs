//! Every pass on every operator called on constants with extreme integer attributes (-1, 2,
//! the ends of the i64 range, 2^62): a pass returns a module or an error, never panics, and a
//! module it returns computes what the input computed.

mod support;

use irpass::ir::op::{Arity, AttrDefault, AttrKind};
use irpass::ir::{Module, Op, eval_function};
use irpass::{PassContext, registry};
use irpass_passes as _;
use support::close;

/// The attributes of a call of `op`: required ones get a plausible value, integer ones
/// `hostile` when given.
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

/// `@main` calling `op` on `n` constants of `shape` (a float and an int variant), with
/// integer attributes `hostile`; only programs that type-check.
fn programs() -> Vec<Module> {
    let mut out = Vec::new();
    for op in Op::all() {
        let counts = match op.def().arity {
            Arity::Exact(n) => vec![n],
            Arity::AtLeast(n) => vec![n, n + 1],
        };
        for n in counts {
            for shape in [vec![4usize], vec![2, 3], vec![1, 2, 3, 3]] {
                for dtype in ["float32", "int64"] {
                    for hostile in [
                        Some("-1"),
                        Some("2"),
                        Some("9223372036854775807"),
                        Some("-9223372036854775808"),
                        Some("4611686018427387904"),
                    ] {
                        let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
                        let count: usize = shape.iter().product();
                        let mut args: Vec<String> = (0..n)
                            .map(|i| {
                                let values: Vec<String> =
                                    (0..count).map(|j| ((i + j) % 5 + 1).to_string()).collect();
                                format!(
                                    "Tensor[({}), {dtype}]{{{}}}",
                                    dims.join(", "),
                                    values.join(", ")
                                )
                            })
                            .collect();
                        args.extend(attrs(op, hostile));
                        let text = format!("def @main() {{ {}({}) }}", op.name(), args.join(", "));
                        if let Ok(m) = Module::parse(&text) {
                            if m.infer_types().is_ok() {
                                out.push(m);
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

#[test]
fn no_pass_panics_on_extreme_attributes_and_what_it_returns_computes_the_same() {
    let names: Vec<String> = registry::passes::<Module>()
        .into_iter()
        .map(|r| r.info.name.to_string())
        .filter(|n| n != "PrintIR")
        .collect();
    assert!(names.len() >= 20, "{names:?}");
    let programs = programs();
    assert!(programs.len() > 300, "{} programs", programs.len());
    let ctx = PassContext::builder().opt_level(3).build().unwrap();
    let mut failures = Vec::new();
    for m in &programs {
        let before = eval_function(m, "main", vec![]);
        for name in &names {
            let pass = registry::lookup::<Module>(name).unwrap();
            match pass.run_in(m.clone(), &ctx) {
                Err(e) if e.is_panic() => failures.push(format!("{name} panicked: {e}\n{m}")),
                Err(_) => {}
                Ok(out) => {
                    if let Ok(expected) = &before {
                        match eval_function(&out, "main", vec![]) {
                            Ok(got) if close(&got, expected) => {}
                            other => failures.push(format!(
                                "{name} changed the result ({other:?} vs {expected}):\n{m}\n{out}"
                            )),
                        }
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures, e.g.:\n{}",
        failures.len(),
        failures
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
