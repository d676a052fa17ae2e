//! Opsets before 9: the older versions irpass reads as the next one (`consumed_inputs`, the
//! `broadcast`/`axis` of the arithmetic operators before 7), and writes back as themselves.

mod support;

use irpass_ir::{DType, Tensor, Value, eval_function};
use irpass_onnx::{ExportOptions, ImportOptions, export_module, import_bytes};
use prost::Message as _;
use support::{model, node, symbolic};

const FLOAT: i32 = 1;

#[test]
fn an_opset_6_broadcast_by_axis_is_read_and_written_with_its_attribute() {
    use irpass_onnx::proto::ModelProto;
    let attr = |name: &str, v: i64| support::int_attr(name, v);
    // y = x + b, x: (2, 3, 4), b: (3,) aligned at axis 1 (opset 6's broadcast), then z = y * s
    // with s: (4,) on the trailing axis.
    let mut add = node("Add", "add", &["x", "b"], &["y"]);
    add.attribute = vec![attr("broadcast", 1), attr("axis", 1)];
    let mut mul = node("Mul", "mul", &["y", "s"], &["z"]);
    mul.attribute = vec![attr("broadcast", 1)];
    let m: ModelProto = model(
        6,
        vec![add, mul],
        vec![
            symbolic("x", FLOAT, &["2", "3", "4"]),
            symbolic("b", FLOAT, &["3"]),
            symbolic("s", FLOAT, &["4"]),
        ],
        vec![symbolic("z", FLOAT, &["2", "3", "4"])],
        vec![],
    );
    let imported = import_bytes(&m.encode_to_vec(), &ImportOptions::default()).unwrap();
    let vec = |shape: &[usize], f: fn(usize) -> f64| {
        let n = shape.iter().product();
        Value::tensor(Tensor::from_vec(DType::Float32, shape, (0..n).map(f).collect()).unwrap())
    };
    let args = vec![
        vec(&[2, 3, 4], |i| i as f64),
        vec(&[3], |i| 100.0 * i as f64),
        vec(&[4], |i| (i + 1) as f64),
    ];
    let Value::Tensor(z) = eval_function(&imported.module, "main", args).unwrap() else {
        panic!("a tensor")
    };
    // z[i, j, k] = (x[i, j, k] + 100 j) * (k + 1)
    let want: Vec<f64> = (0..24)
        .map(|n| ((n + 100 * ((n / 4) % 3)) * (n % 4 + 1)) as f64)
        .collect();
    assert_eq!(z.values(), want);
    // Written back at opset 6: the second operands broadcast by attribute again (the aligned
    // bias as a (3, 1) operand on the trailing axes).
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let g = written.graph.as_ref().unwrap();
    assert_eq!(written.opset_import[0].version, Some(6));
    for n in g
        .node
        .iter()
        .filter(|n| matches!(n.op_type(), "Add" | "Mul"))
    {
        let broadcast = n.attribute.iter().find(|a| a.name() == "broadcast");
        assert_eq!(broadcast.and_then(|a| a.i), Some(1), "{n:?}");
    }
    // A broadcast opset 6 cannot say (the first operand stretched) is refused by name.
    let m = model(
        9,
        vec![node("Add", "add", &["b", "x"], &["y"])],
        vec![
            symbolic("b", FLOAT, &["3"]),
            symbolic("x", FLOAT, &["2", "3"]),
        ],
        vec![symbolic("y", FLOAT, &["2", "3"])],
        vec![],
    );
    let imported = import_bytes(&m.encode_to_vec(), &ImportOptions::default()).unwrap();
    let at_6 = ExportOptions {
        opset: Some(6),
        ..ExportOptions::default()
    };
    let e = export_module(&imported.module, None, &at_6)
        .unwrap_err()
        .to_string();
    assert!(e.contains("cannot write opset 6: Add of shapes"), "{e}");
    assert!(export_module(&imported.module, None, &ExportOptions::default()).is_ok());
}

#[test]
fn an_opset_6_gemm_broadcasting_its_c_is_read_and_written_with_its_attribute() {
    let mut gemm = node("Gemm", "gemm", &["a", "w", "c"], &["y"]);
    gemm.attribute = vec![support::int_attr("broadcast", 1)];
    let m = model(
        6,
        vec![gemm],
        vec![symbolic("a", FLOAT, &["2", "2"])],
        vec![symbolic("y", FLOAT, &["2", "3"])],
        vec![
            support::floats("w", &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
            support::floats("c", &[3], &[10.0, 20.0, 30.0]),
        ],
    );
    let imported = import_bytes(&m.encode_to_vec(), &ImportOptions::default()).unwrap();
    let a =
        Value::tensor(Tensor::from_vec(DType::Float32, &[2, 2], vec![1.0, 0.0, 0.0, 1.0]).unwrap());
    let Value::Tensor(y) = eval_function(&imported.module, "main", vec![a]).unwrap() else {
        panic!("a tensor")
    };
    assert_eq!(y.values(), [11.0, 22.0, 33.0, 14.0, 25.0, 36.0]);
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let g = written.graph.as_ref().unwrap();
    // (Unoptimised: the weight's transpose is written as a node.)
    let gemm = g.node.iter().find(|n| n.op_type() == "Gemm").unwrap();
    let broadcast = gemm.attribute.iter().find(|a| a.name() == "broadcast");
    assert_eq!(broadcast.and_then(|a| a.i), Some(1));
}

#[test]
fn an_add_of_one_shape_is_written_as_sum_before_opset_7() {
    // ONNX Runtime has no `Add` kernel before version 7; `Sum`, which it runs, is the same
    // sum where the operands have one shape. A broadcasting add stays `Add`.
    let m = model(
        6,
        vec![
            node("Sum", "sum", &["x", "y"], &["s"]),
            node("Add", "bias", &["s", "b"], &["z"]),
        ],
        vec![
            symbolic("x", FLOAT, &["2", "3"]),
            symbolic("y", FLOAT, &["2", "3"]),
            symbolic("b", FLOAT, &["3"]),
        ],
        vec![symbolic("z", FLOAT, &["2", "3"])],
        vec![],
    );
    let mut m = m;
    m.graph.as_mut().unwrap().node[1].attribute = vec![support::int_attr("broadcast", 1)];
    let imported = import_bytes(&m.encode_to_vec(), &ImportOptions::default()).unwrap();
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    assert_eq!(
        support::op_types(written.graph.as_ref().unwrap()),
        ["Sum", "Add"]
    );
    let at_7 = ExportOptions {
        opset: Some(7),
        ..ExportOptions::default()
    };
    let written = export_module(&imported.module, None, &at_7).unwrap();
    assert_eq!(
        support::op_types(written.graph.as_ref().unwrap()),
        ["Add", "Add"]
    );
}
