//! The random operators: each draws from its distribution (checked on many draws against
//! bounds a correct sampler stays within), repeatably where it has a seed, of the shape and
//! type its attributes or input give.

mod support;

use irpass_ir::eval::eval_function;
use irpass_ir::{DType, Tensor, Value};
use irpass_onnx::proto::AttributeProto;
use irpass_onnx::proto::attribute_proto::AttributeType;
use support::{import, int_attr, model, node, symbolic};

const FLOAT: i32 = 1;
const INT64: i32 = 7;

fn float_attr(name: &str, f: f32) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Float as i32),
        f: Some(f),
        ..AttributeProto::default()
    }
}

fn shape_attr(dims: &[i64]) -> AttributeProto {
    AttributeProto {
        name: Some("shape".into()),
        r#type: Some(AttributeType::Ints as i32),
        ints: dims.to_vec(),
        ..AttributeProto::default()
    }
}

/// The draws of a one-node model of `op` with `attrs` on `inputs`, its output declared
/// `out` of `elem_type` (twice, to see that a seed repeats them).
fn draw(
    op: &str,
    attrs: Vec<AttributeProto>,
    inputs: Vec<(irpass_onnx::proto::ValueInfoProto, Value)>,
    out: &[&str],
    elem_type: i32,
) -> (Vec<f64>, Vec<f64>) {
    let names: Vec<String> = inputs.iter().map(|(v, _)| v.name().to_string()).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut n = node(op, "draw", &names, &["y"]);
    n.attribute = attrs;
    let (infos, values): (Vec<_>, Vec<_>) = inputs.into_iter().unzip();
    let m = model(
        18,
        vec![n],
        infos,
        vec![symbolic("y", elem_type, out)],
        vec![],
    );
    let imported = import(&m);
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    let run = || {
        let y = eval_function(&imported.module, "main", values.clone()).unwrap();
        let t = y.as_tensor().unwrap();
        let dims: Vec<String> = t.shape().iter().map(usize::to_string).collect();
        assert_eq!(dims, out);
        t.values()
    };
    (run(), run())
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn std_dev(v: &[f64]) -> f64 {
    let m = mean(v);
    (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / v.len() as f64).sqrt()
}

#[test]
fn random_normal_draws_from_its_mean_and_scale_repeatably_with_a_seed() {
    let attrs = vec![
        float_attr("mean", 3.0),
        float_attr("scale", 2.0),
        float_attr("seed", 7.0),
        shape_attr(&[100, 100]),
    ];
    let (a, b) = draw("RandomNormal", attrs, vec![], &["100", "100"], FLOAT);
    assert_eq!(a, b, "a seed repeats the draws");
    // 10 000 draws: the mean within 5 standard errors (0.1), the deviation within 0.1.
    assert!((mean(&a) - 3.0).abs() < 0.1, "mean {}", mean(&a));
    assert!((std_dev(&a) - 2.0).abs() < 0.1, "deviation {}", std_dev(&a));
    // Unseeded, two runs differ.
    let attrs = vec![shape_attr(&[64])];
    let (c, d) = draw("RandomNormal", attrs, vec![], &["64"], FLOAT);
    assert_ne!(c, d);
}

#[test]
fn random_uniform_like_draws_within_its_bounds_in_its_inputs_shape() {
    let x = Value::tensor(Tensor::full(DType::Float32, &[50, 200], 0.0));
    let attrs = vec![
        float_attr("low", -1.0),
        float_attr("high", 3.0),
        float_attr("seed", 1.0),
    ];
    let input = (symbolic("x", FLOAT, &["50", "200"]), x);
    let (a, _) = draw(
        "RandomUniformLike",
        attrs,
        vec![input],
        &["50", "200"],
        FLOAT,
    );
    assert!(a.iter().all(|&v| (-1.0..3.0).contains(&v)));
    // Uniform on [-1, 3): mean 1, deviation 4/√12.
    assert!((mean(&a) - 1.0).abs() < 0.06, "mean {}", mean(&a));
    assert!((std_dev(&a) - 4.0 / 12f64.sqrt()).abs() < 0.05);
}

#[test]
fn bernoulli_draws_ones_as_often_as_each_probability_says() {
    // Probabilities 0, 0.25 and 1, 4 000 of each.
    let p: Vec<f64> = (0..12_000).map(|i| [0.0, 0.25, 1.0][i % 3]).collect();
    let x = Value::tensor(Tensor::from_vec(DType::Float32, &[12_000], p).unwrap());
    let input = (symbolic("p", FLOAT, &["12000"]), x);
    let (a, b) = draw(
        "Bernoulli",
        vec![float_attr("seed", 3.0)],
        vec![input],
        &["12000"],
        FLOAT,
    );
    assert_eq!(a, b);
    assert!(a.iter().all(|&v| v == 0.0 || v == 1.0));
    let of = |k: usize| -> Vec<f64> { a.iter().skip(k).step_by(3).copied().collect() };
    assert_eq!(mean(&of(0)), 0.0);
    assert_eq!(mean(&of(2)), 1.0);
    // 4 000 draws at 0.25: within 5 standard errors (0.034).
    assert!((mean(&of(1)) - 0.25).abs() < 0.035, "{}", mean(&of(1)));
}

#[test]
fn multinomial_draws_classes_as_often_as_their_softmax() {
    // One row of log-probabilities ln 1, ln 3: class 1 three times as likely as class 0.
    let x = Value::tensor(Tensor::from_vec(DType::Float32, &[1, 2], vec![0.0, 3f64.ln()]).unwrap());
    let input = (symbolic("x", FLOAT, &["1", "2"]), x);
    let attrs = vec![
        int_attr("sample_size", 8000),
        int_attr("dtype", 7),
        float_attr("seed", 5.0),
    ];
    let (a, _) = draw("Multinomial", attrs, vec![input], &["1", "8000"], INT64);
    assert!(a.iter().all(|&c| c == 0.0 || c == 1.0));
    assert!((mean(&a) - 0.75).abs() < 0.025, "{}", mean(&a));
}

#[test]
fn dropout_in_training_keeps_each_element_with_one_less_the_ratio_and_scales_it() {
    let x = Value::tensor(Tensor::full(DType::Float32, &[10_000], 1.0));
    let ratio = Value::tensor(Tensor::scalar(DType::Float32, 0.25));
    let training = Value::tensor(Tensor::from_bool(ndarray::ArrayD::from_elem(
        ndarray::IxDyn(&[]),
        true,
    )));
    let inputs = vec![
        (symbolic("x", FLOAT, &["10000"]), x),
        (symbolic("ratio", FLOAT, &[]), ratio),
        (symbolic("training", 9, &[]), training),
    ];
    let (a, b) = draw(
        "Dropout",
        vec![int_attr("seed", 11)],
        inputs,
        &["10000"],
        FLOAT,
    );
    assert_eq!(a, b);
    let kept: Vec<f64> = a.iter().copied().filter(|&v| v != 0.0).collect();
    assert!(kept.iter().all(|&v| (v - 1.0 / 0.75).abs() < 1e-6));
    // 10 000 draws at 0.75: within 5 standard errors (0.022).
    let share = kept.len() as f64 / a.len() as f64;
    assert!((share - 0.75).abs() < 0.022, "{share}");
}
