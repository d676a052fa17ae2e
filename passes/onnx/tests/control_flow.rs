//! Control flow: an `If` whose condition is known when importing (a comparison of static
//! sizes, as exporters and ONNX's function expansions write) is replaced by the branch it
//! takes, whose outputs become the `If`'s; one decided at run time is the IR's `if`, which the
//! interpreter runs and the writer writes back as ONNX's `If`; a `Loop` is the native call
//! `onnx.Loop` with its body a closure: typed from the body, run by the interpreter, written
//! back as a `Loop` whose `body` is the closure.

mod support;

use irpass_ir::{DType, Tensor, Value, eval_function};
use irpass_onnx::proto::{GraphProto, ModelProto, NodeProto};
use irpass_onnx::{ExportOptions, ImportOptions, export_module, import_bytes};
use prost::Message as _;
use support::{branch, int64s, model, node, op_types, symbolic};

const FLOAT: i32 = 1;
const BOOL: i32 = 9;

/// `y = If(cond) then relu(x) else neg(x)`, the condition computed by `cond_nodes`.
fn if_model(
    cond_nodes: Vec<NodeProto>,
    inputs: Vec<irpass_onnx::proto::ValueInfoProto>,
) -> ModelProto {
    let mut choose = node("If", "if", &["cond"], &["y"]);
    choose.attribute = vec![
        branch(
            "then_branch",
            vec![node("Relu", "relu", &["x"], &["t"])],
            "t",
        ),
        branch("else_branch", vec![node("Neg", "neg", &["x"], &["e"])], "e"),
    ];
    let mut nodes = cond_nodes;
    nodes.push(choose);
    model(
        17,
        nodes,
        inputs,
        vec![symbolic("y", FLOAT, &["2", "3"])],
        vec![int64s("six", &[], &[6])],
    )
}

fn run(m: &ModelProto, x: &[f64]) -> Vec<f64> {
    let imported = import_bytes(&m.encode_to_vec(), &ImportOptions::default()).unwrap();
    let x = Value::tensor(Tensor::from_vec(DType::Float32, &[2, 3], x.to_vec()).unwrap());
    let Value::Tensor(y) = eval_function(&imported.module, "main", vec![x]).unwrap() else {
        panic!("a tensor")
    };
    y.values()
}

#[test]
fn an_if_on_static_sizes_is_replaced_by_the_branch_it_takes() {
    // Size(x) == 6 is known when importing: the model is relu(x).
    let m = if_model(
        vec![
            node("Size", "size", &["x"], &["n"]),
            node("Equal", "eq", &["n", "six"], &["cond"]),
        ],
        vec![symbolic("x", FLOAT, &["2", "3"])],
    );
    let imported = import_bytes(&m.encode_to_vec(), &ImportOptions::default()).unwrap();
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    assert_eq!(op_types(written.graph.as_ref().unwrap()), ["Relu"]);
    let x = [-1.0, 2.0, -3.0, 4.0, 0.5, -0.5];
    assert_eq!(run(&m, &x), [0.0, 2.0, 0.0, 4.0, 0.5, 0.0]);
    // Size(x) != 6... is false: the else branch, -x.
    let m = if_model(
        vec![
            node("Size", "size", &["x"], &["n"]),
            node("Equal", "eq", &["n", "six"], &["same"]),
            node("Not", "not", &["same"], &["cond"]),
        ],
        vec![symbolic("x", FLOAT, &["2", "3"])],
    );
    assert_eq!(run(&m, &x), x.map(|v| -v));
}

/// `main(x, cond)` of `module` at `x` (2×3) and `cond`.
fn run_if_value(module: &irpass_ir::Module, x: &[f64], cond: bool) -> Value {
    let x = Value::tensor(Tensor::from_vec(DType::Float32, &[2, 3], x.to_vec()).unwrap());
    let c = Value::tensor(Tensor::scalar(DType::Bool, f64::from(u8::from(cond))));
    eval_function(module, "main", vec![x, c]).unwrap()
}

/// [`run_if_value`] of a `main` with one output.
fn run_if(module: &irpass_ir::Module, x: &[f64], cond: bool) -> Tensor {
    match run_if_value(module, x, cond) {
        Value::Tensor(y) => (*y).clone(),
        other => panic!("a tensor, not {other}"),
    }
}

/// The `If` nodes of `g`, with the op types of each one's then and else branch.
fn ifs(g: &GraphProto) -> Vec<[Vec<String>; 2]> {
    g.node
        .iter()
        .filter(|n| n.op_type() == "If")
        .map(|n| {
            ["then_branch", "else_branch"].map(|name| {
                let branch = n.attribute.iter().find(|a| a.name() == name).unwrap();
                op_types(branch.g.as_ref().unwrap())
                    .into_iter()
                    .map(str::to_string)
                    .collect()
            })
        })
        .collect()
}

fn run_time_if_model() -> ModelProto {
    if_model(
        vec![],
        vec![
            symbolic("x", FLOAT, &["2", "3"]),
            symbolic("cond", BOOL, &[]),
        ],
    )
}

#[test]
fn an_if_decided_at_run_time_is_an_ir_if_that_the_interpreter_runs_and_the_writer_writes_back() {
    let imported = support::import(&run_time_if_model());
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    let text = imported.module.to_string();
    assert!(text.contains("if ("), "{text}");
    let x = [-1.0, 2.0, -3.0, 4.0, 0.5, -0.5];
    let relu = [0.0, 2.0, 0.0, 4.0, 0.5, 0.0];
    assert_eq!(run_if(&imported.module, &x, true).values(), relu);
    assert_eq!(run_if(&imported.module, &x, false).values(), x.map(|v| -v));
    // Written back as ONNX's If, each branch a subgraph of its own nodes.
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let g = written.graph.as_ref().unwrap();
    assert_eq!(op_types(g), ["If"]);
    assert_eq!(
        ifs(g),
        [[vec!["Relu".to_string()], vec!["Neg".to_string()]]]
    );
    let again = support::import(&written);
    for cond in [true, false] {
        assert!(run_if(&again.module, &x, cond).bit_eq(&run_if(&imported.module, &x, cond)));
    }
}

#[test]
fn an_ifs_branches_read_the_graphs_values_and_nest() {
    // r = relu(x); y = If(cond) then (If(cond) then r + r else r) else -x: the inner If is in
    // the then branch, both read r from the graph, and r is also a graph output.
    let mut inner = node("If", "inner", &["cond"], &["t"]);
    inner.attribute = vec![
        branch(
            "then_branch",
            vec![node("Add", "twice", &["r", "r"], &["rr"])],
            "rr",
        ),
        branch(
            "else_branch",
            vec![node("Identity", "same", &["r"], &["ri"])],
            "ri",
        ),
    ];
    let mut outer = node("If", "outer", &["cond"], &["y"]);
    outer.attribute = vec![
        branch("then_branch", vec![inner], "t"),
        branch("else_branch", vec![node("Neg", "neg", &["x"], &["e"])], "e"),
    ];
    let m = model(
        17,
        vec![node("Relu", "relu", &["x"], &["r"]), outer],
        vec![
            symbolic("x", FLOAT, &["2", "3"]),
            symbolic("cond", BOOL, &[]),
        ],
        vec![
            symbolic("y", FLOAT, &["2", "3"]),
            symbolic("r", FLOAT, &["2", "3"]),
        ],
        vec![],
    );
    let imported = support::import(&m);
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let g = written.graph.as_ref().unwrap();
    // The Relu is written once, outside, under the output's name, which the branches read.
    assert_eq!(op_types(g), ["Relu", "If"]);
    assert_eq!(g.node[0].output, ["r"]);
    assert_eq!(ifs(g)[0][0], ["If"]);
    let x = [-1.0, 2.0, -3.0, 4.0, 0.5, -0.5];
    let again = support::import(&written);
    let y = |module: &irpass_ir::Module, cond| {
        let Value::Tuple(out) = run_if_value(module, &x, cond) else {
            panic!("two outputs")
        };
        out[0].as_tensor().unwrap().values()
    };
    for module in [&imported.module, &again.module] {
        assert_eq!(y(module, true), [0.0, 4.0, 0.0, 8.0, 1.0, 0.0]);
        assert_eq!(y(module, false), x.map(|v| -v));
    }
}

#[test]
fn branches_of_one_element_written_with_different_ranks_give_one_type() {
    // then: a scalar constant; else: ReduceSum(x, keepdims) reshaped to [1] — ONNX's function
    // expansions write such pairs. The `if` has the higher rank.
    let mut choose = node("If", "if", &["cond"], &["y"]);
    choose.attribute = vec![
        branch(
            "then_branch",
            vec![node("Identity", "k", &["zero"], &["t"])],
            "t",
        ),
        branch(
            "else_branch",
            vec![
                node("ReduceSum", "sum", &["x"], &["s"]),
                node("Reshape", "flat", &["s", "one"], &["e"]),
            ],
            "e",
        ),
    ];
    let m = model(
        17,
        vec![choose],
        vec![
            symbolic("x", FLOAT, &["2", "3"]),
            symbolic("cond", BOOL, &[]),
        ],
        vec![symbolic("y", FLOAT, &["1"])],
        vec![
            support::floats("zero", &[], &[0.0]),
            int64s("one", &[1], &[1]),
        ],
    );
    let imported = support::import(&m);
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let (t, e) = (
        run_if(&imported.module, &x, true),
        run_if(&imported.module, &x, false),
    );
    assert_eq!((t.shape(), t.values()), (&[1][..], vec![0.0]));
    assert_eq!((e.shape(), e.values()), (&[1][..], vec![21.0]));
}

#[test]
fn an_if_whose_branches_differ_in_type_is_kept_whole_where_its_output_is_declared() {
    // then: x (2×3); else: its transpose (3×2). The IR's `if` has one type: the node is kept
    // whole, typed by the declared output; undeclared, it is refused with the reason.
    let make = |declared: bool| {
        let mut choose = node("If", "if", &["cond"], &["y"]);
        choose.attribute = vec![
            branch(
                "then_branch",
                vec![node("Relu", "relu", &["x"], &["t"])],
                "t",
            ),
            branch(
                "else_branch",
                vec![node("Transpose", "tr", &["x"], &["e"])],
                "e",
            ),
        ];
        let out = if declared {
            symbolic("y", FLOAT, &["?", "?"])
        } else {
            irpass_onnx::proto::ValueInfoProto {
                name: Some("y".into()),
                ..Default::default()
            }
        };
        model(
            17,
            vec![choose],
            vec![
                symbolic("x", FLOAT, &["2", "3"]),
                symbolic("cond", BOOL, &[]),
            ],
            vec![out],
            vec![],
        )
    };
    let imported = support::import(&make(true));
    assert_eq!(imported.opaque, [("If".to_string(), 1)]);
    let e = import_bytes(&make(false).encode_to_vec(), &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("its branches' outputs differ in type (then `Tensor[(2, 3), float32]`, else `Tensor[(3, 2), float32]`)"),
        "{e}"
    );
}

#[test]
fn an_unknown_operator_in_a_branch_is_kept_there() {
    // then: Plugin(x) of com.example, declared; else: -x. The `if` is the IR's, the plugin
    // an opaque call inside it, written back inside the branch with its domain imported.
    let mut plugin = node("Plugin", "plugin", &["x"], &["t"]);
    plugin.domain = Some("com.example".into());
    let mut choose = node("If", "if", &["cond"], &["y"]);
    choose.attribute = vec![
        branch("then_branch", vec![plugin], "t"),
        branch("else_branch", vec![node("Neg", "neg", &["x"], &["e"])], "e"),
    ];
    let mut m = model(
        17,
        vec![choose],
        vec![
            symbolic("x", FLOAT, &["2", "3"]),
            symbolic("cond", BOOL, &[]),
        ],
        vec![symbolic("y", FLOAT, &["2", "3"])],
        vec![],
    );
    m.opset_import.push(irpass_onnx::proto::OperatorSetIdProto {
        domain: Some("com.example".into()),
        version: Some(1),
    });
    let g = m.graph.as_mut().unwrap();
    g.value_info.push(symbolic("t", FLOAT, &["2", "3"]));
    let imported = support::import(&m);
    assert_eq!(imported.opaque, [("com.example.Plugin".to_string(), 1)]);
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let g = written.graph.as_ref().unwrap();
    assert_eq!(
        ifs(g),
        [[vec!["Plugin".to_string()], vec!["Neg".to_string()]]]
    );
    assert!(
        written
            .opset_import
            .iter()
            .any(|o| o.domain() == "com.example" && o.version == Some(1))
    );
    // The else branch runs; the then branch is the plugin, which the interpreter cannot.
    let x = [-1.0, 2.0, -3.0, 4.0, 0.5, -0.5];
    assert_eq!(run_if(&imported.module, &x, false).values(), x.map(|v| -v));
}

#[test]
fn unsqueeze_and_squeeze_of_unknown_sizes_are_written_as_themselves() {
    // (1, ?, ?) → Unsqueeze at 3 → Squeeze at 0: no Reshape can say these (more than one size
    // unknown), the axes can.
    let axes = |name: &str, v: &[i64]| int64s(name, &[v.len() as i64], v);
    let m = model(
        17,
        vec![
            node("Unsqueeze", "u", &["x", "two"], &["u"]),
            node("Squeeze", "s", &["u", "zero"], &["y"]),
        ],
        vec![symbolic("x", FLOAT, &["1", "?", "?"])],
        vec![symbolic("y", FLOAT, &["?", "?", "1"])],
        vec![axes("two", &[3]), axes("zero", &[0])],
    );
    let imported = import_bytes(&m.encode_to_vec(), &ImportOptions::default()).unwrap();
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let g = written.graph.as_ref().unwrap();
    assert_eq!(op_types(g), ["Unsqueeze", "Squeeze"]);
    let x = Value::tensor(
        Tensor::from_vec(DType::Float32, &[1, 2, 3], (0..6).map(f64::from).collect()).unwrap(),
    );
    let again = import_bytes(&written.encode_to_vec(), &ImportOptions::default()).unwrap();
    let (a, b) = (
        eval_function(&imported.module, "main", vec![x.clone()]).unwrap(),
        eval_function(&again.module, "main", vec![x]).unwrap(),
    );
    let (Value::Tensor(a), Value::Tensor(b)) = (a, b) else {
        panic!("tensors")
    };
    assert!(a.bit_eq(&b));
    assert_eq!(a.shape(), [2, 3, 1]);
}

#[test]
fn a_loop_is_a_native_call_typed_by_its_body_run_and_written_back() {
    // Loop(3, true, start): the body adds 1 to the carried value and scans it; nothing in the
    // body is declared. The carried result is typed as `start`; the scan output is declared.
    let body = GraphProto {
        name: Some("body".into()),
        node: vec![
            node("Identity", "keep", &["cond"], &["cond_out"]),
            node("Add", "step", &["prev", "one"], &["current"]),
            node("Identity", "scan", &["prev"], &["seen"]),
        ],
        input: vec![
            symbolic("i", 7, &[]),
            symbolic("cond", BOOL, &[]),
            irpass_onnx::proto::ValueInfoProto {
                name: Some("prev".into()),
                ..Default::default()
            },
        ],
        output: ["cond_out", "current", "seen"]
            .iter()
            .map(|o| irpass_onnx::proto::ValueInfoProto {
                name: Some(o.to_string()),
                ..Default::default()
            })
            .collect(),
        ..GraphProto::default()
    };
    let mut repeat = node("Loop", "loop", &["three", "yes", "start"], &["last", "all"]);
    repeat.attribute = vec![support::graph_attr("body", body)];
    let mut m = model(
        17,
        vec![repeat, node("Add", "use", &["last", "last"], &["twice"])],
        vec![symbolic("start", FLOAT, &[])],
        vec![
            symbolic("all", FLOAT, &["3"]),
            symbolic("twice", FLOAT, &[]),
        ],
        vec![
            int64s("three", &[], &[3]),
            support::floats("one", &[], &[1.0]),
        ],
    );
    let g = m.graph.as_mut().unwrap();
    g.initializer.push(support::bools("yes", &[], &[true]));
    let imported = import_bytes(&m.encode_to_vec(), &ImportOptions::default()).unwrap();
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    assert!(imported.module.to_string().contains("onnx.Loop("));
    imported.module.infer_types().unwrap();
    let ty = imported
        .module
        .get("main")
        .unwrap()
        .function_type()
        .unwrap();
    assert_eq!(
        ty.to_string(),
        "fn (float32) -> (Tensor[(3), float32], float32)"
    );
    // Three turns from 0.5: the scan output holds 0.5, 1.5, 2.5; the carried value ends at
    // 3.5, doubled.
    let start = Value::tensor(Tensor::scalar(DType::Float32, 0.5));
    let out = eval_function(&imported.module, "main", vec![start]).unwrap();
    let fields = out.as_tuple().unwrap();
    assert_eq!(fields[0].as_tensor().unwrap().values(), [0.5, 1.5, 2.5]);
    assert_eq!(fields[1].as_tensor().unwrap().values(), [7.0]);
    // Written back: a `Loop` whose `body` is a graph of three outputs.
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let g = written.graph.as_ref().unwrap();
    let the_loop = g.node.iter().find(|n| n.op_type() == "Loop").unwrap();
    let body = the_loop
        .attribute
        .iter()
        .find(|a| a.name() == "body")
        .unwrap();
    assert_eq!(body.g.as_ref().unwrap().output.len(), 3);
}
