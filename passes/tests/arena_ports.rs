//! The passes ported to the arena give what the registered passes give: the same text (so the
//! same nodes, sharing included, and the same names), on every model, on the MLP chain, and on
//! random well-typed programs.

mod support;

use irpass::PassContext;
use irpass_passes as _;
use irpass_passes::DEFAULT_FOLD_MAX_ELEMENTS;
use irpass_passes::arena::{
    apply, backward_fold_scale_axis, canonicalize_ops, convert_layout, dead_code_elimination,
    eliminate_common_subexpr, fold_constant, forward_fold_scale_axis, fuse_ops, simplify_expr,
    simplify_inference, to_a_normal_form, to_graph_normal_form,
};
use irpass_passes::ir::arena::ArenaFunction;
use irpass_passes::ir::arena::{BodyTypes, FunctionInput, infer_types};
use irpass_passes::ir::{Module, models, random};
use proptest::prelude::*;
use support::{MODELS, model};

/// The registered pipeline `pipeline` on `m`.
fn registered(pipeline: &str, m: &Module) -> Module {
    let ctx = PassContext::builder().opt_level(3).build().unwrap();
    let spec = irpass::pipeline::parse(pipeline).unwrap_or_else(|e| panic!("{e}"));
    let pass = spec.build::<Module>().unwrap_or_else(|e| panic!("{e}"));
    pass.run_in(m.clone(), &ctx)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The types of function `name` (`a`, declared as `f`) of `m`, whose other functions' types
/// are known.
fn types_of(
    m: &Module,
    name: &str,
    f: &irpass_passes::ir::Function,
    a: &ArenaFunction,
) -> BodyTypes {
    let input = FunctionInput {
        name,
        body: &a.body,
        params: &a.params,
        root: a.root,
        ret_type: f.ret_type.as_ref(),
        span: f.span,
    };
    let known = |g: &str| m.get(g).and_then(|f| f.checked_type().cloned());
    infer_types(&[input], &known)
        .unwrap_or_else(|e| panic!("{e}"))
        .remove(0)
}

/// The arena port of each pass named in `passes`, in order, on every function of `m`.
fn ported(passes: &[&str], m: &Module) -> Module {
    m.infer_types().unwrap_or_else(|e| panic!("{e}"));
    let funcs = m.iter().map(|(name, f)| {
        let mut a = ArenaFunction::from_function(f);
        for p in passes {
            let out = match *p {
                "SimplifyExpr" => simplify_expr(&a, &types_of(m, name, f, &a)),
                "ConvertLayout{layout=NHWC}" => {
                    convert_layout(&a, &types_of(m, name, f, &a), "NHWC").unwrap()
                }
                "ConvertLayout{layout=NCHW}" => {
                    convert_layout(&a, &types_of(m, name, f, &a), "NCHW").unwrap()
                }
                "ToANormalForm" => Some(to_a_normal_form(&a)),
                "FuseOps" if f.has_attr("Primitive") => None,
                "FuseOps" => fuse_ops(&a, &types_of(m, name, f, &a), true, 256),
                "FuseOps0" => fuse_ops(&a, &types_of(m, name, f, &a), false, 256),
                "BackwardFoldScaleAxis" => backward_fold_scale_axis(&a, &types_of(m, name, f, &a)),
                "ForwardFoldScaleAxis" => forward_fold_scale_axis(&a, &types_of(m, name, f, &a)),
                "FoldConstant" => fold_constant(&a, DEFAULT_FOLD_MAX_ELEMENTS),
                "EliminateCommonSubexpr" => eliminate_common_subexpr(&a, false),
                "DeadCodeElimination" => dead_code_elimination(&a),
                "CanonicalizeOps" => canonicalize_ops(&a),
                "ToGraphNormalForm" => to_graph_normal_form(&a),
                "SimplifyInference" => simplify_inference(&a),
                other => panic!("{other} is not ported"),
            };
            a = apply(a, out);
        }
        (name.to_string(), a.to_function_like(f))
    });
    Module::from_functions(funcs.collect::<Vec<_>>())
}

const PIPELINES: [&[&str]; 20] = [
    &["FoldConstant"],
    &["EliminateCommonSubexpr"],
    &["DeadCodeElimination"],
    &[
        "FoldConstant",
        "EliminateCommonSubexpr",
        "DeadCodeElimination",
    ],
    &["CanonicalizeOps"],
    &["ToGraphNormalForm"],
    &["SimplifyInference"],
    &["SimplifyInference", "FoldConstant", "DeadCodeElimination"],
    &["SimplifyExpr"],
    &["SimplifyExpr", "FoldConstant", "SimplifyExpr"],
    &["BackwardFoldScaleAxis"],
    &["ForwardFoldScaleAxis"],
    &[
        "SimplifyInference",
        "BackwardFoldScaleAxis",
        "ForwardFoldScaleAxis",
        "FoldConstant",
    ],
    &["FuseOps"],
    &["SimplifyInference", "FoldConstant", "FuseOps"],
    &["ToANormalForm"],
    &["ToANormalForm", "ToGraphNormalForm"],
    &["ConvertLayout{layout=NHWC}"],
    &["ConvertLayout{layout=NHWC}", "ConvertLayout{layout=NCHW}"],
    &[
        "SimplifyInference",
        "ConvertLayout{layout=NHWC}",
        "FoldConstant",
    ],
];

fn same_as_registered(what: &str, m: &Module) {
    for passes in PIPELINES {
        // The registered CSE requires InferType; the ports read no recorded type.
        let text = format!("InferType,{}", passes.join(","));
        let want = registered(&text, m).to_string();
        let got = ported(passes, m).to_string();
        assert_eq!(got, want, "{what}: {passes:?}");
    }
}

#[test]
fn the_ports_give_the_registered_passes_text_on_every_model() {
    for name in MODELS {
        same_as_registered(name, &model(name));
    }
}

#[test]
fn the_ports_give_the_registered_passes_text_on_the_mlp_chain() {
    let m = models::mlp_chain(30);
    same_as_registered("mlp_chain(30)", &m);
    let out = ported(PIPELINES[3], &m).to_string();
    assert_eq!(
        out.matches("let ").count(),
        4 * 30,
        "4 lets per layer are left"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn the_ports_give_the_registered_passes_text_on_random_programs(
        choices in proptest::collection::vec(any::<u32>(), 64..256)
    ) {
        let m = random::program(&choices);
        same_as_registered("random program", &m);
    }
}

#[test]
fn the_simplify_expr_port_makes_every_simplification_the_registered_pass_makes() {
    let text = r#"
def @main(%x: Tensor[(2, 3), float32], %b: bool) {
  %0 = multiply(%x, 1f);
  %1 = add(0f, %0);
  %2 = subtract(%1, 0f);
  %3 = divide(%2, 1f);
  %4 = negative(negative(%3));
  %5 = nn.relu(nn.relu(%4));
  %6 = cast(%5, dtype="float32");
  %7 = reshape(reshape(%6, newshape=[3, 2]), newshape=[6]);
  %8 = reshape(%7, newshape=[6]);
  %9 = transpose(transpose(reshape(%8, newshape=[2, 3]), axes=[1, 0]), axes=[1, 0]);
  %10 = transpose(transpose(%x, axes=[1, 0]));
  %12 = if (%b) { %9 } else { %10 };
  %13 = multiply(%x, Tensor[(2, 3), float32]{1, 1, 1, 1, 1, 1});
  %14 = add(%x, Tensor[(1, 2, 3), float32]{0, 0, 0, 0, 0, 0});
  (%12, %13, %14)
}
"#;
    let m = Module::parse(text).unwrap();
    let want = registered("InferType,SimplifyExpr", &m).to_string();
    let got = ported(&["SimplifyExpr"], &m).to_string();
    assert_eq!(got, want);
    for gone in [
        "multiply(%x, 1f)",
        "negative",
        "relu(nn.relu",
        "cast",
        "reshape",
        "transpose",
    ] {
        assert!(!got.contains(gone), "`{gone}` is simplified away:\n{got}");
    }
    // Broadcasting to a bigger shape is not an identity.
    assert!(got.contains("add(%x, Tensor[(1, 2, 3)"), "{got}");
}

#[test]
fn the_simplify_expr_port_knows_the_type_of_a_rebuilt_if_where_the_registered_pass_does_not() {
    // The `if` is rebuilt (its branch changed), and the registered pass cannot tell the type
    // of a rebuilt `if` from its operands, so it keeps `add(%0, 0f)`; the port gives a rebuilt
    // node the type of the node it was rebuilt from.
    let text = "def @main(%x: Tensor[(2), float32], %b: bool) { add(if (%b) { multiply(%x, 1f) } else { %x }, 0f) }";
    let m = Module::parse(text).unwrap();
    let want = registered("InferType,SimplifyExpr", &m).to_string();
    let got = ported(&["SimplifyExpr"], &m).to_string();
    assert!(want.contains("add(%0, 0f)"), "{want}");
    assert!(!got.contains("add("), "{got}");
    assert!(
        got.contains("if (%b) {\n    %x\n  } else {\n    %x\n  }"),
        "{got}"
    );
}

/// Every pattern the scale folds rewrite, and some they must leave (a value used twice, a
/// grouped convolution, a non-default layout).
const SCALES: &str = r#"
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(3, 2, 3, 3), float32],
          %v: Tensor[(1, 8), float32], %d: Tensor[(5, 8), float32], %g: Tensor[(2, 1, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  %1 = multiply(%0, Tensor[(3, 1, 1), float32]{1, 2, 3});
  %2 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  %3 = add(%2, Tensor[(3, 1, 1), float32]{1, 1, 1});
  %4 = multiply(Tensor[(1, 3, 1, 1), float32]{2, 2, 2}, %3);
  %5 = nn.dense(%v, %d, units=5);
  %6 = multiply(%5, Tensor[(1, 5), float32]{1, 2, 3, 4, 5});
  %7 = multiply(%x, Tensor[(2, 1, 1), float32]{3, 4});
  %8 = nn.conv2d(%7, %w, padding=[1, 1, 1, 1]);
  %9 = multiply(%v, 2f);
  %10 = nn.dense(%9, %d, units=5);
  %11 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  %12 = multiply(%11, 2f);
  %13 = multiply(%x, 2f);
  %14 = nn.conv2d(%13, %g, padding=[1, 1, 1, 1], groups=2);
  (%1, %4, %6, %8, %10, %12, %11, %13, %14)
}
"#;

#[test]
fn the_fold_scale_axis_ports_fold_what_the_registered_passes_fold() {
    let m = Module::parse(SCALES).unwrap();
    for dir in ["BackwardFoldScaleAxis", "ForwardFoldScaleAxis"] {
        let want = registered(&format!("InferType,{dir}"), &m).to_string();
        let got = ported(&[dir], &m).to_string();
        assert_eq!(got, want, "{dir}");
        assert_ne!(got, m.to_string(), "{dir} folds something");
    }
}

#[test]
fn the_fuse_ops_port_fuses_as_the_registered_pass_at_level_0_and_with_a_max_depth() {
    use irpass_passes::{FUSE_MAX_DEPTH, FUSE_OPT_LEVEL};
    for name in MODELS {
        let m = model(name);
        m.infer_types().unwrap();
        for (level, depth) in [(0, 256), (1, 2), (1, 3)] {
            let ctx = PassContext::builder()
                .opt_level(3)
                .config(&FUSE_OPT_LEVEL, level)
                .config(&FUSE_MAX_DEPTH, depth)
                .build()
                .unwrap();
            let pass = irpass::pipeline::parse("InferType,FuseOps")
                .unwrap()
                .build::<Module>()
                .unwrap();
            let want = pass.run_in(m.clone(), &ctx).unwrap().to_string();
            let funcs = m.iter().map(|(n, f)| {
                let a = ArenaFunction::from_function(f);
                let out = if f.has_attr("Primitive") {
                    None
                } else {
                    fuse_ops(&a, &types_of(&m, n, f, &a), level > 0, depth)
                };
                (n.to_string(), apply(a, out).to_function_like(f))
            });
            let got = Module::from_functions(funcs.collect::<Vec<_>>()).to_string();
            assert_eq!(got, want, "{name} at level {level}, depth {depth}");
            assert!(got.contains("Primitive=1"), "{name}: something is fused");
        }
    }
}

#[test]
fn the_convert_layout_port_converts_the_conv_models_and_refuses_an_unknown_layout() {
    for name in ["resnet_block", "mobilenet_block"] {
        let got = ported(&["ConvertLayout{layout=NHWC}"], &model(name)).to_string();
        assert!(got.contains("data_layout=\"NHWC\""), "{name}: {got}");
    }
    let m = model("mlp");
    let f = m.get("main").unwrap();
    let a = ArenaFunction::from_function(f);
    m.infer_types().unwrap();
    let err = convert_layout(&a, &types_of(&m, "main", f, &a), "NCWH").unwrap_err();
    assert!(err.contains("layout `NCWH` is not supported"), "{err}");
}

/// Programs for the module passes: inline functions in chains and cycles, closures that
/// capture, recurse, nest, or are fused; functions referenced as values.
const MODULE_PROGRAMS: &[&str] = &[
    "def @sq(%y: float32, Inline=1) -> float32 { let %z = multiply(%y, %y); %z }
     def @main(%x: float32) { add(@sq(%x), @sq(exp(%x))) }",
    "def @a(%y: float32, Inline=1) -> float32 { exp(%y) }
     def @b(%y: float32, Inline=1) -> float32 { @a(%y) }
     def @main(%x: float32) { @b(%x) }",
    "def @a(%n: float32, Inline=1) -> float32 { if (%n > 0f) { @b(%n - 1f) } else { %n } }
     def @b(%n: float32, Inline=1) -> float32 { if (%n > 0f) { @a(%n - 1f) } else { %n } }
     def @main(%x: float32) { @a(%x) }",
    "def @f(%y: float32) -> float32 { %y } def @unused(%y: float32) { %y }
     def @main(%x: float32) { let %g = @f; %g(%x) }",
    "def @main(%x: float32) { let %f = fn (%y: float32) { exp(%y) }; %f(%x) }",
    "def @main(%x: float32) { let %f = fn (%y: float32) { add(%y, %x) }; %f(1f) }",
    "def @main(%n: int32) { let %f: fn (int32) -> int32 = fn (%i: int32) -> int32 { if (%i > 0) { %f(%i - 1) } else { %i } }; %f(%n) }",
    "def @main(%x: float32, %z: float32) { let %k = fn (%a: float32) { fn (%b: float32) { add(add(%a, %b), %z) } }; %k(%x)(%z) }",
    "def @main(%x: float32) { %0 = fn (%p: float32, Primitive=1) { exp(%p) }; %0(%x) }",
    "def @main(%x: float32) { let %u = exp(%x); let %f = fn (%y) { add(%y, %u) }; %f(%x) }",
];

/// The arena port of a module pass on `m` (converted), as text.
fn ported_module(pass: &str, m: &Module) -> String {
    use irpass_passes::arena::{inline, lambda_lift, remove_unused_functions};
    use irpass_passes::ir::arena::Module as ArenaModule;
    let a = ArenaModule::from_expr_module(m);
    if m.get("main").is_some_and(|f| f.checked_type().is_some()) {
        a.infer_types().unwrap();
    }
    match pass {
        "Inline" => inline(&a),
        "LambdaLift" => lambda_lift(&a),
        "RemoveUnusedFunctions" => remove_unused_functions(&a, vec!["main".into()]),
        other => panic!("{other} is not ported"),
    }
    .to_string()
}

#[test]
fn the_module_pass_ports_give_the_registered_passes_text() {
    let mut inputs: Vec<(String, Module)> = MODULE_PROGRAMS
        .iter()
        .map(|t| (t.to_string(), Module::parse(t).unwrap()))
        .collect();
    inputs.extend(MODELS.iter().map(|n| (n.to_string(), model(n))));
    for (what, m) in &inputs {
        for pass in ["Inline", "LambdaLift", "RemoveUnusedFunctions"] {
            // Untyped, then typed (lifted parameters get the captured variables' types).
            let want = registered(pass, m).to_string();
            assert_eq!(ported_module(pass, m), want, "{pass} on {what}");
            let typed = Module::parse(&m.to_string()).unwrap();
            let want = registered(&format!("InferType,{pass}"), &typed).to_string();
            typed.infer_types().unwrap();
            assert_eq!(
                ported_module(pass, &typed),
                want,
                "InferType,{pass} on {what}"
            );
        }
    }
}

#[test]
fn the_module_pass_ports_change_what_they_are_for() {
    let m = |i: usize| Module::parse(MODULE_PROGRAMS[i]).unwrap();
    let inlined = ported_module("Inline", &m(0));
    assert!(
        !inlined.contains("@sq") && inlined.contains("multiply(%x, %x)"),
        "{inlined}"
    );
    let cycle = ported_module("Inline", &m(2));
    assert!(
        cycle.contains("def @a") && !cycle.contains("def @b"),
        "{cycle}"
    );
    let lifted = ported_module("LambdaLift", &m(5));
    assert!(
        lifted.contains("def @main_lifted_0(%x: float32, Closure=1)"),
        "{lifted}"
    );
    let typed = m(9);
    typed.infer_types().unwrap();
    let lifted = ported_module("LambdaLift", &typed);
    assert!(
        lifted.contains("def @main_lifted_0(%u: float32, Closure=1)"),
        "{lifted}"
    );
    let fused = ported_module("LambdaLift", &m(8));
    assert!(!fused.contains("lifted"), "{fused}");
    let removed = ported_module("RemoveUnusedFunctions", &m(3));
    assert!(
        !removed.contains("@unused") && removed.contains("def @f"),
        "{removed}"
    );
}

#[test]
fn the_a_normal_form_port_places_shared_values_as_the_registered_pass_does() {
    let programs = [
        "def @main(%x: float32, %c: bool) {
            %0 = exp(%x);
            %1 = if (%c) { abs(nn.relu(%0)) } else { nn.relu(%0) };
            let %f = fn (%y: float32) { add(%y, %1) };
            %f(%1) }",
        "def @main(%x: float32, %c: bool) { %0 = exp(%x); if (%c) { add(%0, %0) } else { %0 } }",
        "def @main(%x: float32) { let %f = fn (%y: float32) { %0 = exp(%y); multiply(%0, %0) }; (%f(%x), %f(%x)) }",
    ];
    for text in programs.iter().chain(MODULE_PROGRAMS) {
        let m = Module::parse(text).unwrap();
        let want = registered("ToANormalForm", &m).to_string();
        assert_eq!(ported(&["ToANormalForm"], &m).to_string(), want, "{text}");
    }
}
