//! Differential checking: a function of two modules (a program before and after a pipeline)
//! run on the same random inputs, the outputs compared within a tolerance — `irpass-opt
//! --check N`, as onnx-simplifier's `check_n` runs a model before and after through ONNX
//! Runtime.
//!
//! ```
//! use irpass_ir::Module;
//! use irpass_ir::eval::{Tolerance, check_equivalent};
//! let before = Module::parse("def @main(%x: Tensor[(4), float32]) { multiply(%x, 2f) }").unwrap();
//! let after = Module::parse("def @main(%x: Tensor[(4), float32]) { add(%x, %x) }").unwrap();
//! let report = check_equivalent(&before, &after, "main", 3, Tolerance::default()).unwrap();
//! assert_eq!(report.runs, 3);
//!
//! let wrong = Module::parse("def @main(%x: Tensor[(4), float32]) { add(%x, 2f) }").unwrap();
//! let err = check_equivalent(&before, &wrong, "main", 3, Tolerance::default()).unwrap_err();
//! assert!(err.to_string().contains("differs"), "{err}");
//!
//! // A named size takes several values, the same in every parameter of one input set.
//! let before = Module::parse("def @main(%x: Tensor[(n, 2), float32], %y: Tensor[(n, 2), float32]) { add(%x, %y) }").unwrap();
//! check_equivalent(&before, &before, "main", 3, Tolerance::default()).unwrap();
//! ```

use std::fmt;

use super::machine::eval_function;
use crate::{DType, Dim, IrError, Module, Symbol, Tensor, Type, Value};

/// How far two outputs may be apart: `|a - b| <= atol + rtol * |b|` for each element, `b`
/// the original's (NumPy's `allclose`); NaN matches NaN.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// Relative tolerance.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
}

impl Default for Tolerance {
    /// `rtol = 1e-3`, `atol = 1e-4`: what float32 arithmetic reordered by a pass stays within.
    fn default() -> Self {
        Tolerance {
            rtol: 1e-3,
            atol: 1e-4,
        }
    }
}

/// What a successful check saw.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckReport {
    /// Input sets run.
    pub runs: usize,
    /// Output elements compared over all runs.
    pub elements: usize,
    /// The largest absolute difference between an original and a new element.
    pub max_abs_diff: f64,
}

impl fmt::Display for CheckReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} random input set{} the same outputs ({} elements compared, largest \
             difference {:.3e})",
            self.runs,
            if self.runs == 1 { " gives" } else { "s give" },
            self.elements,
            self.max_abs_diff
        )
    }
}

/// Why a check failed.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum CheckError {
    /// Random inputs cannot be made for the function (a parameter without a static tensor
    /// type, or a function missing from a module).
    Inputs(String),
    /// One of the programs failed to run (`which`: "the original" or "the result").
    Eval {
        /// Which program.
        which: &'static str,
        /// The input set (from 1).
        run: usize,
        /// The interpreter's error.
        error: IrError,
    },
    /// The outputs differ.
    Differs {
        /// The input set (from 1).
        run: usize,
        /// Where in the output: `output`, or `output.1.0` for a field of a tuple.
        path: String,
        /// What differs.
        detail: String,
    },
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::Inputs(m) => f.write_str(m),
            CheckError::Eval { which, run, error } => {
                write!(f, "{which} fails on random input set {run}: {error}")
            }
            CheckError::Differs { run, path, detail } => {
                write!(f, "on random input set {run}, {path} differs: {detail}")
            }
        }
    }
}

impl std::error::Error for CheckError {}

/// Runs `function` of `before` and of `after` on `n` sets of random inputs (seeded, so the
/// same call checks the same inputs) and compares the outputs within `tol`.
///
/// The inputs come from the parameters' types in `before`, which must be tensors whose sizes
/// are static or named: floats uniform in [-1, 1), integers in [0, 4) (valid indices for any
/// axis of four or more), booleans either way. A named size (`batch`) is the same in every
/// parameter of one input set and changes from set to set (1 to 4), so `n >= 2` runs a
/// symbolic program at two sizes.
///
/// # Errors
/// [`CheckError`]: inputs that cannot be made, a program that fails, or outputs that differ
/// (in shape, type, structure or an element beyond `tol`).
pub fn check_equivalent(
    before: &Module,
    after: &Module,
    function: &str,
    n: usize,
    tol: Tolerance,
) -> Result<CheckReport, CheckError> {
    let types = parameter_types(before, function)?;
    if after.get(function).is_none() {
        return Err(CheckError::Inputs(format!(
            "the result has no function `@{function}`"
        )));
    }
    let mut report = CheckReport {
        runs: 0,
        elements: 0,
        max_abs_diff: 0.0,
    };
    let mut names: Vec<Symbol> = types
        .iter()
        .flat_map(|(_, shape)| shape.iter().filter_map(|d| d.symbol()))
        .collect();
    names.sort();
    names.dedup();
    for run in 1..=n {
        let mut rng = SplitMix(run as u64);
        let args: Vec<Value> = types
            .iter()
            .map(|(dtype, shape)| {
                let shape: Vec<usize> = shape
                    .iter()
                    .map(|d| match *d {
                        Dim::Static(v) => v as usize,
                        Dim::Named(s) => named_size(&names, s, run),
                        Dim::Any => unreachable!("parameter_types refuses `?`"),
                    })
                    .collect();
                Value::tensor(random_tensor(*dtype, &shape, &mut rng))
            })
            .collect();
        let eval = |which, m: &Module| {
            eval_function(m, function, args.clone()).map_err(|error| CheckError::Eval {
                which,
                run,
                error,
            })
        };
        let expected = eval("the original", before)?;
        let got = eval("the result", after)?;
        compare(&expected, &got, "output".into(), tol, &mut report)
            .map_err(|(path, detail)| CheckError::Differs { run, path, detail })?;
        report.runs += 1;
    }
    Ok(report)
}

/// The size of the named dimension `s` in input set `run` (from 1): 1 to 4, the first name
/// 1 in the first set, each later name one more than the name before, each set one more than
/// the set before (wrapping after 4), so that different names differ and one name takes
/// several sizes.
fn named_size(names: &[Symbol], s: Symbol, run: usize) -> usize {
    let i = names.iter().position(|&n| n == s).unwrap_or(0);
    (run - 1 + i) % 4 + 1
}

/// Each parameter's element type and shape (static sizes and names).
fn parameter_types(m: &Module, function: &str) -> Result<Vec<(DType, Vec<Dim>)>, CheckError> {
    let f = m
        .get(function)
        .ok_or_else(|| CheckError::Inputs(format!("the module has no function `@{function}`")))?;
    let body = &f.code.body;
    f.code
        .params
        .iter()
        .map(|&p| {
            let var = body.var(p);
            let tensor = var.annotation.as_ref().and_then(Type::as_tensor);
            let Some(t) = tensor else {
                return Err(CheckError::Inputs(format!(
                    "parameter `%{}` is not a tensor of a known type, so no random input can \
                     be made for it",
                    var.name
                )));
            };
            let fixed = t.shape.iter().all(|d| match d {
                Dim::Static(v) => usize::try_from(*v).is_ok(),
                Dim::Named(_) => true,
                Dim::Any => false,
            });
            if !fixed {
                return Err(CheckError::Inputs(format!(
                    "parameter `%{}` has a dimension that is neither a size nor a name ({}); \
                     fix it (for a model, `--input-shape {}:D1,D2,...`)",
                    var.name, t, var.name
                )));
            }
            Ok((t.dtype, t.shape.clone()))
        })
        .collect()
}

/// Compares `got` with `expected` at `path`; on a difference, where and what.
fn compare(
    expected: &Value,
    got: &Value,
    path: String,
    tol: Tolerance,
    report: &mut CheckReport,
) -> Result<(), (String, String)> {
    match (expected, got) {
        (Value::Tensor(a), Value::Tensor(b)) => {
            compare_tensors(a, b, tol, report).map_err(|d| (path, d))
        }
        (Value::Tuple(a), Value::Tuple(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                compare(x, y, format!("{path}.{i}"), tol, report)?;
            }
            Ok(())
        }
        (Value::Opaque(a), Value::Opaque(b)) if a.same(&**b) => Ok(()),
        (Value::Opaque(a), Value::Opaque(b)) => Err((path, format!("{a} became {b}"))),
        (Value::Tuple(a), Value::Tuple(b)) => Err((
            path,
            format!("a tuple of {} fields became one of {}", a.len(), b.len()),
        )),
        _ => Err((path, format!("{} became {}", kind(expected), kind(got)))),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Tensor(_) => "a tensor",
        Value::Tuple(_) => "a tuple",
        Value::Closure(_) => "a function",
        Value::Opaque(_) => "an opaque value",
    }
}

fn compare_tensors(
    a: &Tensor,
    b: &Tensor,
    tol: Tolerance,
    report: &mut CheckReport,
) -> Result<(), String> {
    if a.dtype() != b.dtype() || a.shape() != b.shape() {
        return Err(format!("{} became {}", a.tensor_type(), b.tensor_type()));
    }
    let (xs, ys) = (a.float_values(), b.float_values());
    for (i, (&x, &y)) in xs.iter().zip(ys.iter()).enumerate() {
        if x == y || (x.is_nan() && y.is_nan()) {
            continue;
        }
        let diff = (x - y).abs();
        if diff.is_nan() || diff > tol.atol + tol.rtol * x.abs() {
            return Err(format!(
                "element {i} (of {}) is {} where the original gives {} (tolerance: {} + {} × |{}|)",
                xs.len(),
                crate::tensor::float_text(y),
                crate::tensor::float_text(x),
                tol.atol,
                tol.rtol,
                crate::tensor::float_text(x),
            ));
        }
        report.max_abs_diff = report.max_abs_diff.max(diff);
    }
    report.elements += xs.len();
    Ok(())
}

/// A random tensor for a parameter (see [`check_equivalent`]).
fn random_tensor(dtype: DType, shape: &[usize], rng: &mut SplitMix) -> Tensor {
    let n: usize = shape.iter().product();
    let values = (0..n)
        .map(|_| {
            let u = rng.unit();
            match dtype {
                d if d.is_float() => 2.0 * u - 1.0,
                DType::Bool => (u < 0.5) as u8 as f64,
                _ => (u * 4.0).floor(),
            }
        })
        .collect();
    Tensor::from_vec(dtype, shape, values).expect("the values fit the shape")
}

/// SplitMix64: a small seeded generator (the inputs must be the same for the same seed on
/// every machine, not of cryptographic quality).
struct SplitMix(u64);

impl SplitMix {
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(before: &str, after: &str) -> Result<CheckReport, CheckError> {
        let (b, a) = (
            Module::parse(before).unwrap(),
            Module::parse(after).unwrap(),
        );
        check_equivalent(&b, &a, "main", 4, Tolerance::default())
    }

    const TWO: &str = "def @main(%x: Tensor[(3), float32], %i: Tensor[(2), int64]) { \
                       (multiply(%x, 2f), take(%x, %i)) }";

    #[test]
    fn equal_programs_pass_and_the_report_counts_what_was_compared() {
        let r = check(
            TWO,
            "def @main(%x: Tensor[(3), float32], %i: Tensor[(2), int64]) { \
             (add(%x, %x), take(%x, %i)) }",
        )
        .unwrap();
        assert_eq!((r.runs, r.elements), (4, 4 * 5));
        assert_eq!(r.max_abs_diff, 0.0);
        assert!(
            r.to_string()
                .starts_with("4 random input sets give the same outputs")
        );
    }

    #[test]
    fn a_difference_names_the_input_set_the_tuple_field_and_the_element() {
        let err = check(
            TWO,
            "def @main(%x: Tensor[(3), float32], %i: Tensor[(2), int64]) { \
             (multiply(%x, 2.01f), take(%x, %i)) }",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("on random input set 1, output.0 differs: element "),
            "{err}"
        );
        // Within the tolerance is the same.
        check(
            TWO,
            "def @main(%x: Tensor[(3), float32], %i: Tensor[(2), int64]) { \
             (multiply(%x, 2.0000001f), take(%x, %i)) }",
        )
        .unwrap();
    }

    #[test]
    fn a_changed_type_or_structure_is_a_difference() {
        let err = check(
            "def @main(%x: Tensor[(3), float32]) { %x }",
            "def @main(%x: Tensor[(3), float32]) { expand_dims(%x, axis=0) }",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("Tensor[(3), float32] became Tensor[(1, 3), float32]"),
            "{err}"
        );
        let err = check(
            "def @main(%x: Tensor[(3), float32]) { (%x, %x) }",
            "def @main(%x: Tensor[(3), float32]) { %x }",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("output differs: a tuple became a tensor"),
            "{err}"
        );
    }

    #[test]
    fn inputs_that_cannot_be_made_and_programs_that_fail_are_errors() {
        let err = check(
            "def @main(%x: Tensor[(?, 3), float32]) { %x }",
            "def @main(%x: Tensor[(?, 3), float32]) { %x }",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("parameter `%x` has a dimension that is neither a size nor a name"),
            "{err}"
        );
        let err = check(
            "def @main(%x: Tensor[(3), float32]) { %x }",
            "def @other(%x: Tensor[(3), float32]) { %x }",
        )
        .unwrap_err()
        .to_string();
        assert_eq!(err, "the result has no function `@main`");
        let err = check(
            "def @main(%x: Tensor[(3), float32]) { %x }",
            "def @main(%x: Tensor[(3), float32]) { @main(%x) }",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("the result fails on random input set 1: "),
            "{err}"
        );
    }

    #[test]
    fn the_inputs_are_the_same_for_the_same_set_and_integers_are_small_indices() {
        let mut a = SplitMix(7);
        let mut b = SplitMix(7);
        let x = random_tensor(DType::Int64, &[1000], &mut a);
        assert!(x.bit_eq(&random_tensor(DType::Int64, &[1000], &mut b)));
        assert!(x.values().iter().all(|v| (0.0..4.0).contains(v)));
        let f = random_tensor(DType::Float32, &[1000], &mut a);
        assert!(f.values().iter().all(|v| (-1.0..1.0).contains(v)));
    }
}
