//! The interpreter against values computed independently: by hand for small programs, by numpy
//! (`support/gen_model_values.py`) for the models.

use irpass_ir::{DType, Module, Tensor, Value, eval_function};

fn model(name: &str) -> Module {
    let path = format!(
        "{}/../../examples/models/{name}.relay",
        env!("CARGO_MANIFEST_DIR")
    );
    Module::parse_named(&path, &std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The deterministic inputs of `gen_model_values.py`: 0.5 * sin(0.37 k + seed), float32.
fn input(shape: &[usize], seed: f64) -> Value {
    let n: usize = shape.iter().product();
    let values = (0..n)
        .map(|k| f64::from((0.37 * k as f64 + seed).sin() as f32) * 0.5)
        .collect();
    Value::tensor(Tensor::from_vec(DType::Float32, shape, values).unwrap())
}

fn scalar(dtype: DType, v: f64) -> Value {
    Value::tensor(Tensor::scalar(dtype, v))
}

fn run(text: &str, args: Vec<Value>) -> Value {
    let m = Module::parse(text).unwrap_or_else(|e| panic!("{e}"));
    m.infer_types().unwrap_or_else(|e| panic!("{e}"));
    eval_function(&m, "main", args).unwrap_or_else(|e| panic!("{e}"))
}

fn values(v: &Value) -> Vec<f64> {
    v.as_tensor().unwrap().values()
}

#[test]
fn the_mlp_gives_numpys_probabilities() {
    let m = model("mlp");
    let args = vec![
        input(&[1, 784], 1.0),
        input(&[256, 784], 2.0),
        input(&[256], 3.0),
        input(&[128, 256], 4.0),
        input(&[128], 5.0),
        input(&[10, 128], 6.0),
        input(&[10], 7.0),
    ];
    let out = eval_function(&m, "main", args).unwrap();
    let numpy = [
        0.4266546070575714,
        2.808228600770235e-06,
        0.02890513464808464,
        8.50784417707473e-05,
        0.0006569655379280448,
        0.003108970122411847,
        1.1792044460889883e-05,
        0.06648910045623779,
        4.419387948928488e-07,
        0.47408509254455566,
    ];
    for (got, want) in values(&out).iter().zip(numpy) {
        assert!(
            (got - want).abs() <= 1e-5 * want.abs() + 1e-9,
            "{got} vs {want}"
        );
    }
}

#[test]
fn the_gated_model_runs_its_closure_and_branches_like_numpy() {
    let m = model("gated_closures");
    for (use_relu, sum, first, last) in [
        (true, 153.0626220703125, 1.5814629793167114, 0.0),
        (
            false,
            15.91317367553711,
            0.27995336055755615,
            0.24336978793144226,
        ),
    ] {
        let args = vec![
            input(&[1, 64], 11.0),
            input(&[64, 64], 12.0),
            input(&[64], 13.0),
            input(&[64, 64], 14.0),
            input(&[64], 15.0),
            scalar(DType::Bool, if use_relu { 1.0 } else { 0.0 }),
        ];
        let out = eval_function(&m, "main", args).unwrap();
        let fields = out.as_tuple().unwrap();
        let h = values(&fields[0]);
        let s = values(&fields[1])[0];
        assert!(
            (s - sum).abs() <= 1e-5 * sum.abs(),
            "use_relu={use_relu}: sum {s} vs {sum}"
        );
        assert!(
            (h[0] - first).abs() <= 1e-5 * first.abs() + 1e-7,
            "use_relu={use_relu}"
        );
        assert!(
            (h[63] - last).abs() <= 1e-5 * last.abs() + 1e-7,
            "use_relu={use_relu}"
        );
    }
}

#[test]
fn a_recursive_let_bound_closure_computes_a_factorial() {
    let out = run(
        "def @main(%n: int64) -> int64 {
           let %fact: fn (int64) -> int64 = fn (%i: int64) -> int64 {
             if (%i <= 1i64) { 1i64 } else { %i * %fact(%i - 1i64) }
           };
           %fact(%n)
         }",
        vec![scalar(DType::Int64, 10.0)],
    );
    assert_eq!(values(&out), [3628800.0]);
}

#[test]
fn closures_capture_values_not_variables_and_are_first_class() {
    // make_adder(k) returns a closure adding k; both closures keep their own k.
    let out = run(
        "def @main(%x: float32) {
           let %make = fn (%k: float32) { fn (%y: float32) { %y + %k } };
           let %add2 = %make(2f);
           let %add10 = %make(10f);
           (%add2(%x), %add10(%x), %add2(%add10(%x)))
         }",
        vec![scalar(DType::Float32, 1.5)],
    );
    let f: Vec<f64> = out
        .as_tuple()
        .unwrap()
        .iter()
        .map(|v| values(v)[0])
        .collect();
    assert_eq!(f, [3.5, 11.5, 13.5]);
}

#[test]
fn only_the_taken_branch_of_if_is_evaluated() {
    // The other branch would divide by zero.
    let text = "def @main(%c: bool, %a: int32) { if (%c) { %a } else { divide(%a, 0) } }";
    let out = run(
        text,
        vec![scalar(DType::Bool, 1.0), scalar(DType::Int32, 7.0)],
    );
    assert_eq!(values(&out), [7.0]);
    let m = Module::parse(text).unwrap();
    let err = eval_function(
        &m,
        "main",
        vec![scalar(DType::Bool, 0.0), scalar(DType::Int32, 7.0)],
    )
    .unwrap_err();
    assert!(err.message().contains("integer division by zero"), "{err}");
    assert_eq!(err.line_col(), Some((1, 56)), "at `divide`");
}

#[test]
fn tuples_globals_and_hand_computed_arithmetic() {
    let out = run(
        "def @square(%x: Tensor[(3), float32]) { multiply(%x, %x) }
         def @main(%x: Tensor[(3), float32]) {
           let %t = (@square(%x), %x - 1f);
           %0 = %t.0;
           (sum(%0), %t.1, max(%0))
         }",
        vec![Value::tensor(
            Tensor::from_vec(DType::Float32, &[3], vec![1.0, -2.0, 3.0]).unwrap(),
        )],
    );
    let f = out.as_tuple().unwrap();
    assert_eq!(values(&f[0]), [14.0]);
    assert_eq!(values(&f[1]), [0.0, -3.0, 2.0]);
    assert_eq!(values(&f[2]), [9.0]);
}

#[test]
fn a_shared_node_is_evaluated_once_so_wide_dags_stay_linear() {
    // 60 levels of x_{i+1} = x_i + x_i: exponential as a tree, linear as a DAG.
    let mut text = String::from("def @main(%x: float64) {\n  %0 = add(%x, %x);\n");
    for i in 1..60 {
        text.push_str(&format!("  %{i} = add(%{}, %{});\n", i - 1, i - 1));
    }
    text.push_str("  %59\n}");
    let out = run(&text, vec![scalar(DType::Float64, 1.0)]);
    assert_eq!(values(&out), [2f64.powi(60)]);
}

#[test]
fn float32_arithmetic_rounds_like_float32() {
    // 0.1f + 0.2f in float32 is 0.30000001192092896 (not float64's 0.30000000000000004).
    let out = run("def @main() { 0.1f + 0.2f }", vec![]);
    assert_eq!(values(&out), [f64::from(0.1f32 + 0.2f32)]);
}
