//! Every pass on every operator called on constants with extreme integer attributes (-1, 2,
//! the ends of the i64 range, 2^62): a pass returns a module or an error, never panics, and a
//! module it returns computes what the input computed.

mod support;

use irpass::{PassContext, registry};
use irpass_passes as _;
use irpass_passes::ir::random::{EXTREME_INTS, arg_counts, extreme_call};
use irpass_passes::ir::{Module, Op, eval_function};
use support::{close, registered_passes};

/// `@main` calling `op` on `n` constants of `shape` (a float and an int variant), with
/// each of [`EXTREME_INTS`] as its integer attributes; only programs that type-check.
fn programs() -> Vec<Module> {
    let mut out = Vec::new();
    for op in Op::all() {
        for n in arg_counts(op) {
            for shape in [vec![4usize], vec![2, 3], vec![1, 2, 3, 3]] {
                for dtype in ["float32", "int64"] {
                    for int in EXTREME_INTS {
                        let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
                        let count: usize = shape.iter().product();
                        let args: Vec<String> = (0..n)
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
                        let text =
                            format!("def @main() {{ {} }}", extreme_call(op, &args, Some(int)));
                        if let Ok(m) = Module::parse(&text)
                            && m.infer_types().is_ok()
                        {
                            out.push(m);
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
    let names = registered_passes();
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
