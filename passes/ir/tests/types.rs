//! Type inference over whole modules, type errors with positions, and well-formedness.

use std::sync::Arc;

use irpass_ir::body::{ArenaFunction, BodyBuilder, Node, post_order};
use irpass_ir::{Attrs, DType, Function, Module, Tensor, Type};

fn main_type(text: &str) -> Type {
    let m = Module::parse(text).unwrap_or_else(|e| panic!("{e}"));
    m.infer_types().unwrap_or_else(|e| panic!("{e}"));
    m.get("main").unwrap().function_type().unwrap()
}

#[test]
fn unannotated_closures_get_their_types_from_their_uses() {
    let t = main_type(
        "def @main(%x: Tensor[(3), float32]) { let %f = fn (%y) { exp(%y) }; let %g = fn (%a, %b) { (%a, %b) }; %g(%f(%x), 1) }",
    );
    assert_eq!(
        t.to_string(),
        "fn (Tensor[(3), float32]) -> (Tensor[(3), float32], int32)"
    );
}

#[test]
fn globals_may_call_each_other_and_recurse_through_let() {
    let t = main_type(
        "def @double(%x: float32) -> float32 { %x * 2f }
         def @main(%n: int32, %x: float32) -> float32 {
           let %loop: fn (int32, float32) -> float32 = fn (%i: int32, %acc: float32) -> float32 {
             if (%i > 0) { %loop(%i - 1, @double(%acc)) } else { %acc }
           };
           %loop(%n, %x)
         }",
    );
    assert_eq!(
        t,
        Type::func(
            vec![Type::scalar(DType::Int32), Type::scalar(DType::Float32)],
            Type::scalar(DType::Float32)
        )
    );
}

#[test]
fn every_node_and_variable_records_its_type() {
    let m = Module::parse("def @main(%x: Tensor[(2, 3), float32]) { let %y = transpose(%x); let %t = (%y, %x); (%t.1, %t.0) }").unwrap();
    m.infer_types().unwrap();
    let f = m.get("main").unwrap();
    let (body, root) = (&f.code.body, f.code.root);
    let types = f.types().unwrap();
    let Node::Let { bindings, .. } = body.node(root) else {
        panic!()
    };
    let (y, value) = body.bindings(*bindings)[0];
    assert_eq!(types.var(y).to_string(), "Tensor[(3, 2), float32]");
    assert_eq!(types.of(value).to_string(), "Tensor[(3, 2), float32]");
    for id in post_order(body, root) {
        assert!(types.of(id).is_complete(), "{:?}", body.node(id));
    }
}

#[test]
fn equal_tensor_types_of_a_function_are_recorded_as_one_shared_type() {
    // Inference records a type on every node: equal tensor types within a function share
    // one allocation (a count increment per node, not a new type each time a constant or a
    // relation makes one), across functions not.
    let m = Module::parse(
        "def @main(%x: Tensor[(1, 2), float32]) {
           let %w = Tensor[(2, 2), float32]{1, 2, 3, 4};
           let %a = matmul(%x, %w);
           let %b = matmul(%a, Tensor[(2, 2), float32]{5, 6, 7, 8});
           let %c = add(%b, Tensor[(1, 2), float32]{1, 1});
           let %d = sum(%c, axis=[1]);
           (%d, sum(%a, axis=[1]), Tensor[(1), float32]{0})
         }
         def @other(%x: Tensor[(1, 2), float32]) { matmul(%x, Tensor[(2, 2), float32]{1, 0, 0, 1}) }",
    )
    .unwrap();
    m.infer_types().unwrap();
    let f = m.get("main").unwrap();
    let types = f.types().unwrap();
    let mut by_text = std::collections::HashMap::<String, Vec<_>>::new();
    for id in post_order(&f.code.body, f.code.root) {
        if let Type::Tensor(tt) = types.of(id) {
            by_text
                .entry(tt.to_string())
                .or_default()
                .push(types.id(id));
        }
    }
    let mut sizes = Vec::new();
    for (text, ids) in &by_text {
        assert!(
            ids.iter().all(|t| *t == ids[0]),
            "{text}: one entry of the type table"
        );
        sizes.push((text.as_str(), ids.len()));
    }
    sizes.sort();
    assert_eq!(
        sizes,
        [
            ("Tensor[(1), float32]", 4),
            // `%x`, `%a`, `%b`, `%c` (a variable is one node however often it is used),
            // the two matmuls, the add and its constant.
            ("Tensor[(1, 2), float32]", 8),
            ("Tensor[(2, 2), float32]", 3),
        ]
    );
    assert_eq!(
        m.get("other").unwrap().result_type().unwrap().to_string(),
        "Tensor[(1, 2), float32]"
    );
}

#[test]
fn dynamic_dimensions_unify_with_static_ones() {
    let t = main_type(
        "def @main(%x: Tensor[(?, 4), float32], %w: Tensor[(8, 4), float32]) { nn.dense(%x, %w) }",
    );
    assert_eq!(
        t.to_string(),
        "fn (Tensor[(?, 4), float32], Tensor[(8, 4), float32]) -> Tensor[(?, 8), float32]"
    );
}

/// (program, message part, line, column).
const TYPE_ERRORS: &[(&str, &str, usize, usize)] = &[
    (
        "def @main(%x: Tensor[(2), float32]) -> Tensor[(3), float32] {\n  exp(%x)\n}",
        "the function's body does not have its declared result type: expected `Tensor[(3), float32]`, found `Tensor[(2), float32]` (dimension 0: 3 vs 2)",
        2,
        3,
    ),
    (
        "def @main(%c: float32, %x: float32) {\n  if (%c) { %x } else { %x }\n}",
        "the condition of `if` must be a bool scalar: expected `bool`, found `float32`",
        // A variable is written where it is bound: a problem with a use of one is reported
        // at the expression that uses it.
        2,
        3,
    ),
    (
        "def @main(%c: bool, %x: float32) {\n  if (%c) { %x } else { 1 }\n}",
        "the branches of `if` have different types: expected `float32`, found `int32`",
        2,
        25,
    ),
    (
        "def @main(%x: float32) {\n  let %y: int32 = %x;\n  %y\n}",
        "the value of `%y` does not have its declared type: expected `int32`, found `float32`",
        // The value is a variable: reported at the binding of `%y`.
        2,
        7,
    ),
    (
        "def @f(%x: float32) -> float32 { %x }\ndef @main() {\n  @f(1, 2)\n}",
        "this function takes 1 argument, 2 given",
        3,
        3,
    ),
    (
        "def @f(%x: float32) -> float32 { %x }\ndef @main() {\n  @f(1)\n}",
        "the arguments do not fit the function's parameters",
        3,
        3,
    ),
    (
        "def @main(%x: float32) {\n  %x(1f)\n}",
        "a value of type `float32` is called, but it is not a function",
        2,
        3,
    ),
    (
        "def @main(%t: (float32, float32)) {\n  %t.2\n}",
        "field 2 of a tuple of 2 fields does not exist",
        2,
        3,
    ),
    (
        "def @main(%x: float32) {\n  %x.0\n}",
        "`.0` projects a tuple field, but the value has type `float32`",
        2,
        3,
    ),
    (
        "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(3, 2), float32]) {\n  %0 = add(%x, %x);\n  add(%0, %y)\n}",
        "shapes (2, 3) and (3, 2) do not broadcast",
        3,
        3,
    ),
    (
        "def @main() {\n  @missing(1f)\n}",
        "`@missing` is not defined in the module",
        2,
        3,
    ),
    (
        "def @main() {\n  let %f = fn (%a) { exp(%a) };\n  1f\n}",
        "cannot infer the argument types of `exp`",
        2,
        22,
    ),
];

#[test]
fn type_errors_say_what_was_expected_and_point_at_the_expression() {
    for (text, wanted, line, col) in TYPE_ERRORS {
        let m = Module::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let err = m.infer_types().expect_err(text);
        assert!(
            err.message().contains(wanted),
            "{text:?}\n  wanted `{wanted}`\n  got    `{}`",
            err.message()
        );
        assert_eq!(
            err.line_col(),
            Some((*line, *col)),
            "{text:?}: {}",
            err.message()
        );
        assert!(err.render().contains("type error"), "{}", err.render());
    }
}

#[test]
fn several_independent_type_errors_are_all_reported_in_source_order() {
    let text = "def @a(%x: float32) -> int32 { %x }\ndef @b(%x: int32) -> float32 { %x }";
    let err = Module::parse(text).unwrap().infer_types().unwrap_err();
    assert_eq!(err.problems.len(), 2, "{err}");
    assert!(err.problems[0].span.unwrap().start < err.problems[1].span.unwrap().start);
}

#[test]
fn well_formedness_rejects_a_variable_bound_twice_and_one_used_out_of_scope() {
    let one = || Arc::new(Tensor::scalar(DType::Float32, 1.0));
    let function = |b: BodyBuilder, root| {
        let code = ArenaFunction {
            body: b.finish(),
            params: vec![],
            root,
        };
        Module::from_functions([("main", Function::new(code, None, Attrs::new(), None))])
    };
    // `let %x = 1f; %x` used as the value of a second `let %x`: bound twice.
    let mut b = BodyBuilder::new();
    let x = b.var("x", Some(Type::scalar(DType::Float32)), None);
    let c = b.constant(one());
    let xe = b.use_var(x);
    let inner = b.lets(&[(x, c)], xe);
    let twice = b.lets(&[(x, inner)], xe);
    let m = function(b, twice);
    let err = m.check_well_formed().unwrap_err();
    assert!(err.message().contains("`%x` is bound twice"), "{err}");

    let mut b = BodyBuilder::new();
    let y = b.var("y", Some(Type::scalar(DType::Float32)), None);
    let c = b.constant(one());
    let ye = b.use_var(y);
    let scoped = b.lets(&[(y, c)], ye);
    let outside = b.tuple(&[scoped, ye]);
    let m = function(b, outside);
    let err = m.check_well_formed().unwrap_err();
    assert!(
        err.message()
            .contains("`%y` is used outside the scope of its binding"),
        "{err}"
    );
    // `verify` (the framework's hook) runs both checks.
    assert!(m.verify().is_err());
}

#[test]
fn verify_accepts_every_model() {
    for name in [
        "mlp",
        "resnet_block",
        "mobilenet_block",
        "transformer_block",
        "gated_closures",
    ] {
        let text = std::fs::read_to_string(format!(
            "{}/../../examples/models/{name}.relay",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let m = Module::parse(&text).unwrap();
        assert!(m.verify().is_ok(), "{name}: {:?}", m.verify());
    }
}

#[test]
fn a_ceil_mode_pool_drops_a_last_window_that_would_start_in_the_trailing_padding() {
    // ONNX's `maxpool_2d_ceil_output_size_reduce_by_one`: 2 inputs, window 1, stride 2: the
    // second window would start at 2, past the input; ceil alone would give 2 outputs.
    let t = main_type(
        "def @main(%x: Tensor[(1, 1, 2, 2), float32]) { nn.max_pool2d(%x, pool_size=[1, 1], strides=[2, 2], ceil_mode=True) }",
    );
    assert_eq!(
        t.to_string(),
        "fn (Tensor[(1, 1, 2, 2), float32]) -> Tensor[(1, 1, 1, 1), float32]"
    );
    // `averagepool_2d_ceil_last_window_starts_on_pad`: 2 inputs padded by 1 on each side,
    // window 3, stride 3: the window at -1, and the one at 2 would start on the trailing pad.
    let t = main_type(
        "def @main(%x: Tensor[(1, 3, 2, 2), float32]) { nn.avg_pool2d(%x, pool_size=[3, 3], strides=[3, 3], padding=[1, 1, 1, 1], ceil_mode=True) }",
    );
    assert_eq!(
        t.to_string(),
        "fn (Tensor[(1, 3, 2, 2), float32]) -> Tensor[(1, 3, 1, 1), float32]"
    );
    // A last window that starts inside the input stays.
    let t = main_type(
        "def @main(%x: Tensor[(1, 1, 5, 5), float32]) { nn.max_pool2d(%x, pool_size=[2, 2], strides=[2, 2], ceil_mode=True) }",
    );
    assert_eq!(
        t.to_string(),
        "fn (Tensor[(1, 1, 5, 5), float32]) -> Tensor[(1, 1, 3, 3), float32]"
    );
}

#[test]
fn opaque_types_read_print_and_match_only_themselves() {
    let text = "def @main(%s: Opaque[\"seq(tensor(float)[?,3])\"]) -> Opaque[\"seq(tensor(float)[?,3])\"] {\n  %s\n}\n";
    let m = Module::parse(text).unwrap();
    m.infer_types().unwrap();
    assert_eq!(m.to_string(), format!("#[version = \"0.0.5\"]\n{text}"));
    // Another opaque type, or a tensor, is a type error.
    for ret in ["Opaque[\"seq(tensor(int64))\"]", "Tensor[(3), float32]"] {
        let wrong = text.replacen(
            "-> Opaque[\"seq(tensor(float)[?,3])\"]",
            &format!("-> {ret}"),
            1,
        );
        let m = Module::parse(&wrong).unwrap();
        assert!(m.infer_types().is_err(), "{wrong}");
    }
    let e = Module::parse("def @main(%s: Opaque[seq]) { %s }")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("expected the opaque type's name in quotes"),
        "{e}"
    );
}
