//! The pass tests that check more than one output: counts on generated modules, errors,
//! configurations, FoldScaleAxis with generated weights. Cases that are an input and an
//! expected output are data, in `tests/cases/` (run by `tests/cases.rs`).

mod support;

use irpass::PassContext;
use irpass_passes::ir::Module;
use irpass_passes::ir::body::post_order;
use irpass_passes::*;
use support::{check, check_module, parse, run, same_values};

const T: &str = "Tensor[(2, 3), float32]";

fn f(body: &str) -> String {
    format!("def @main(%x: {T}) {{ {body} }}")
}

// ---------------------------------------------------------------- FoldConstant

#[test]
fn fold_constant_never_folds_huge_results_or_failing_calls() {
    let ctx = PassContext::builder()
        .opt_level(3)
        .config(&FOLD_MAX_ELEMENTS, 4)
        .build()
        .unwrap();
    // 8 elements from operands of 2 and 4: growth past the limit.
    let text =
        "def @main() { add(Tensor[(2, 1), float32]{1, 2}, Tensor[(4), float32]{1, 2, 3, 4}) }";
    let out = irpass::Pass::from(FoldConstant::default())
        .run_in(parse(text), &ctx)
        .unwrap();
    assert!(out.structurally_equal(&parse(text)), "{out}");
    let failing = "def @main() { divide(1, 0) }";
    assert!(
        run(FoldConstant::default(), parse(failing)).structurally_equal(&parse(failing)),
        "the error stays for run time"
    );
    let big = "def @main() { zeros(shape=[2048, 1024]) }";
    assert!(run(FoldConstant::default(), parse(big)).structurally_equal(&parse(big)));
}

// ---------------------------------------------------------------- DeadCodeElimination

#[test]
fn dead_code_elimination_walks_blocks_nested_in_body_position_as_one_block() {
    use irpass_passes::ir::body::{ArenaFunction, BodyBuilder};
    use irpass_passes::ir::{Attrs, DType, Function, Type};
    // One block per binding, each the body of the one before. `%b` is dead, `%a` is used
    // only by the last binding.
    let mut bb = BodyBuilder::new();
    let x = bb.var("x", Some(Type::tensor(&[2, 3], DType::Float32)), None);
    let (a, b, c) = (
        bb.var("a", None, None),
        bb.var("b", None, None),
        bb.var("c", None, None),
    );
    let xe = bb.use_var(x);
    let ea = bb.op("exp", &[xe], Attrs::new()).unwrap();
    let ae = bb.use_var(a);
    let eb = bb.op("exp", &[ae], Attrs::new()).unwrap();
    let ec = bb.op("exp", &[ae], Attrs::new()).unwrap();
    let ce = bb.use_var(c);
    let inner = bb.lets(&[(c, ec)], ce);
    let middle = bb.lets(&[(b, eb)], inner);
    let root = bb.lets(&[(a, ea)], middle);
    let code = ArenaFunction {
        body: bb.finish(),
        params: vec![x],
        root,
    };
    let m = Module::from_functions([("main", Function::new(code, None, Attrs::new(), None))]);
    let out = check_module(
        DeadCodeElimination::default(),
        m,
        &f("let %a = exp(%x); let %c = exp(%a); %c"),
    );
    assert_eq!(out.to_string().matches("let ").count(), 2, "{out}");
}

#[test]
fn dead_code_elimination_leaves_a_module_without_dead_code_untouched() {
    let m = parse(&f("let %a = exp(%x); add(%a, %a)"));
    let out = run(DeadCodeElimination::default(), m.clone());
    assert!(
        irpass::IrModule::same_as(&out, &m),
        "nothing to remove: the same module comes back"
    );
}

// ---------------------------------------------------------------- EliminateCommonSubexpr

fn count_ops(m: &Module, op: &str) -> usize {
    m.iter()
        .map(|(_, func)| {
            let body = &func.code.body;
            post_order(body, func.code.root)
                .into_iter()
                .filter(|&id| body.op_call(id).is_some_and(|(o, _, _)| o.name() == op))
                .count()
        })
        .sum()
}

// ---------------------------------------------------------------- SimplifyExpr

// ---------------------------------------------------------------- SimplifyInference

// SimplifyInference's cases are data: tests/cases/SimplifyInference/.

// ---------------------------------------------------------------- CanonicalizeOps

// ---------------------------------------------------------------- normal forms

// ---------------------------------------------------------------- module passes

#[test]
fn remove_unused_functions_keeps_what_main_reaches() {
    check(
        RemoveUnusedFunctions,
        "def @a(%y: float32) -> float32 { @b(%y) } def @b(%y: float32) -> float32 { exp(%y) } def @c(%y: float32) -> float32 { %y } def @main(%x: float32) { @a(%x) }",
        "def @a(%y: float32) -> float32 { @b(%y) } def @b(%y: float32) -> float32 { exp(%y) } def @main(%x: float32) { @a(%x) }",
    );
    let ctx = PassContext::builder()
        .config(&ENTRY_FUNCTIONS, vec!["c".to_string()])
        .build()
        .unwrap();
    let out = irpass::Pass::from(RemoveUnusedFunctions)
        .run_in(
            parse("def @c(%y: float32) -> float32 { %y } def @main(%x: float32) { %x }"),
            &ctx,
        )
        .unwrap();
    assert_eq!(out.names().collect::<Vec<_>>(), ["c"]);
}

#[test]
fn remove_unused_functions_refuses_entry_lists_that_would_delete_everything() {
    let two = "def @c(%y: float32) -> float32 { %y } def @main(%x: float32) { %x }";
    for (entries, wanted) in [
        (
            vec![],
            "`relay.RemoveUnusedFunctions.entry_functions` is empty",
        ),
        (
            vec!["mian".to_string()],
            "names `mian`, which the module does not define (did you mean `main`?)",
        ),
    ] {
        let ctx = PassContext::builder()
            .config(&ENTRY_FUNCTIONS, entries)
            .build()
            .unwrap();
        let err = irpass::Pass::from(RemoveUnusedFunctions)
            .run_in(parse(two), &ctx)
            .unwrap_err();
        assert!(err.to_string().contains(wanted), "{err}");
        // Nothing the caller had is lost.
        assert_eq!(err.module().names().count(), 2);
    }
    // The default (`["main"]`) on a module without `@main` removes nothing.
    let library =
        parse("def @a(%y: float32) -> float32 { %y } def @b(%y: float32) -> float32 { %y }");
    let out = irpass::Pass::from(RemoveUnusedFunctions)
        .run(library.clone())
        .unwrap();
    assert!(irpass::IrModule::same_as(&out, &library));
}

#[test]
fn lambda_lift_moves_closures_to_globals() {
    check(
        LambdaLift,
        "def @main(%x: float32) { let %f = fn (%y: float32) { exp(%y) }; %f(%x) }",
        "def @main(%x: float32) { let %f = @main_lifted_0; %f(%x) }
         def @main_lifted_0(%y: float32) { exp(%y) }",
    );
    check(
        LambdaLift,
        "def @main(%x: float32) { let %f = fn (%y: float32) { add(%y, %x) }; %f(1f) }",
        "def @main(%x: float32) { let %f = @main_lifted_0(%x); %f(1f) }
         def @main_lifted_0(%x: float32, Closure=1) { fn (%y: float32) { add(%y, %x) } }",
    );
    let rec = "def @main(%n: int32) { let %f: fn (int32) -> int32 = fn (%i: int32) -> int32 { if (%i > 0) { %f(%i - 1) } else { %i } }; %f(%n) }";
    let out = run(LambdaLift, parse(rec));
    assert!(out.get("main_lifted_0").is_some(), "{out}");
    out.infer_types().unwrap();
    same_values(&parse(rec), &out, 1);
}

// ---------------------------------------------------------------- ConvertLayout

#[test]
fn convert_layout_on_the_resnet_block_transforms_once_per_input_and_once_at_the_output() {
    let m = support::model("resnet_block");
    let out = run(ConvertLayout::default(), m.clone());
    let text = out.to_string();
    // data in, two weights, the result out: the shortcut reuses the data's transform.
    assert_eq!(text.matches("layout_transform(").count(), 4, "{text}");
    assert_eq!(text.matches("data_layout=\"NHWC\"").count(), 2, "{text}");
    same_values(&m, &out, 1);
    // Back to NCHW with the option.
    let nchw = irpass::registry::lookup_with_options::<Module>(
        "ConvertLayout",
        &serde_json::json!({"layout": "NCHW"}),
    )
    .unwrap();
    let back = run(nchw, out);
    same_values(&m, &back, 1);
}

// ---------------------------------------------------------------- FoldScaleAxis

fn const_tensor(shape: &[usize], seed: u64) -> String {
    let n: usize = shape.iter().product();
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let values: Vec<String> = (0..n)
        .map(|i| format!("{}", ((i as u64 * 7 + seed) % 11) as f64 / 4.0 - 1.0))
        .collect();
    format!(
        "Tensor[({}), float32]{{{}}}",
        dims.join(", "),
        values.join(", ")
    )
}

#[test]
fn fold_scale_axis_folds_output_scales_into_conv_weights_through_a_bias() {
    let (w, b, s) = (
        const_tensor(&[3, 2, 3, 3], 1),
        const_tensor(&[3, 1, 1], 2),
        const_tensor(&[3, 1, 1], 3),
    );
    let text = format!(
        "def @main(%x: Tensor[(1, 2, 5, 5), float32]) {{
        %0 = nn.conv2d(%x, {w}, padding=[1, 1, 1, 1]);
        %1 = add(%0, {b});
        multiply(%1, {s}) }}"
    );
    let m = parse(&text);
    let out = run(irpass_passes::fold_scale_axis(), m.clone());
    assert_eq!(
        count_ops(&out, "multiply"),
        0,
        "the scale is folded away:\n{out}"
    );
    assert_eq!(count_ops(&out, "nn.conv2d"), 1);
    same_values(&m, &out, 2);
}

#[test]
fn a_scale_folds_into_a_weight_larger_than_the_fold_limit() {
    // A batch norm's scale moved into a conv weight: the product replaces the weight and is no
    // larger, so it folds past FoldConstant's element limit (54 elements against 16 here; a
    // ResNet's 512x512x3x3 weights against the default 2^20).
    let (w, s) = (const_tensor(&[3, 2, 3, 3], 1), const_tensor(&[3, 1, 1], 3));
    let text = format!(
        "def @main(%x: Tensor[(1, 2, 5, 5), float32]) {{ multiply(nn.conv2d(%x, {w}), {s}) }}"
    );
    let ctx = PassContext::builder()
        .opt_level(3)
        .config(&FOLD_MAX_ELEMENTS, 16)
        .build()
        .unwrap();
    let out = irpass::Pass::from(irpass_passes::fold_scale_axis())
        .run_in(parse(&text), &ctx)
        .unwrap();
    assert_eq!(count_ops(&out, "multiply"), 0, "{out}");
    same_values(&parse(&text), &out, 2);
}

#[test]
fn fold_scale_axis_folds_input_scales_forward_and_dense_scales_both_ways() {
    let (w, s) = (const_tensor(&[3, 2, 3, 3], 4), const_tensor(&[2, 1, 1], 5));
    let text = format!(
        "def @main(%x: Tensor[(1, 2, 5, 5), float32]) {{ nn.conv2d(multiply(%x, {s}), {w}) }}"
    );
    let out = run(irpass_passes::fold_scale_axis(), parse(&text));
    assert_eq!(count_ops(&out, "multiply"), 0, "{out}");
    same_values(&parse(&text), &out, 2);
    let (wd, sd_in, sd_out) = (
        const_tensor(&[4, 3], 6),
        const_tensor(&[3], 7),
        const_tensor(&[4], 8),
    );
    let text = format!(
        "def @main(%x: Tensor[(2, 3), float32]) {{ multiply(nn.dense(multiply(%x, {sd_in}), {wd}), {sd_out}) }}"
    );
    let out = run(irpass_passes::fold_scale_axis(), parse(&text));
    assert_eq!(count_ops(&out, "multiply"), 0, "{out}");
    same_values(&parse(&text), &out, 2);
}

#[test]
fn fold_scale_axis_leaves_a_scaled_value_that_is_used_twice() {
    let (w, s) = (const_tensor(&[3, 2, 3, 3], 1), const_tensor(&[3, 1, 1], 3));
    let text = format!(
        "def @main(%x: Tensor[(1, 2, 5, 5), float32]) {{
        %0 = nn.conv2d(%x, {w});
        (multiply(%0, {s}), %0) }}"
    );
    let out = run(BackwardFoldScaleAxis, parse(&text));
    assert_eq!(count_ops(&out, "multiply"), 1, "{out}");
}

// ---------------------------------------------------------------- more of TVM's cases

#[test]
fn a_normal_form_keeps_a_recursive_closure_and_binds_inside_function_bodies() {
    let text = "def @main(%n: int32) { let %f: fn (int32) -> int32 = fn (%i: int32) -> int32 { if (%i > 0) { %f(%i - 1) } else { %i } }; %f(%n) }";
    let out = run(ToANormalForm, parse(text));
    out.infer_types().unwrap();
    same_values(&parse(text), &out, 2);
    let body = out.to_string();
    assert!(
        body.contains("let %x"),
        "bindings inside the closure: {body}"
    );
}

#[test]
fn inline_stops_at_a_cycle_of_inline_functions_and_keeps_what_it_calls() {
    // @a and @b call each other: @a is inlined into @main with @b inlined into it, and the
    // call that would close the cycle stays a call of @a, which therefore stays; @b goes.
    let input = parse(
        "def @a(%n: float32, Inline=1) -> float32 { if (%n > 0f) { @b(%n - 1f) } else { %n } }
         def @b(%n: float32, Inline=1) -> float32 { if (%n > 0f) { @a(%n - 1f) } else { %n } }
         def @main(%x: float32) { @a(%x) }",
    );
    let out = check_module(
        Inline,
        input,
        // An inlined call's argument is computed once, shared by the parameter's uses.
        "def @a(%n: float32, Inline=1) -> float32 {
           if (%n > 0f) { %0 = %n - 1f; if (%0 > 0f) { @a(%0 - 1f) } else { %0 } } else { %n }
         }
         def @main(%x: float32) {
           if (%x > 0f) { %0 = %x - 1f; if (%0 > 0f) { @a(%0 - 1f) } else { %0 } } else { %x }
         }",
    );
    assert!(out.get("b").is_none());
}

#[test]
fn a_normal_form_moves_a_shared_if_with_its_branches_out_of_a_closure() {
    // The `if` is reached first inside the closure and then outside it: it must be bound
    // outside, and the values its branches share must stay inside its branches' scope.
    let text = "def @main(%x: float32, %c: bool) {
        %0 = exp(%x);
        %1 = if (%c) { abs(nn.relu(%0)) } else { nn.relu(%0) };
        let %f = fn (%y: float32) { add(%y, %1) };
        %f(%1) }";
    let out = run(ToANormalForm, parse(text));
    out.infer_types().unwrap_or_else(|e| panic!("{e}\n{out}"));
    same_values(&parse(text), &out, 2);
}
