//! Each pass on small programs: the expected result (compared structurally) and the same
//! values before and after. The cases follow what TVM's tests of each pass cover.

mod support;

use irpass::PassContext;
use irpass_passes::ir::Module;
use irpass_passes::ir::arena::{Body, ExprId, Node, post_order};
use irpass_passes::*;
use support::{check, check_module, parse, run, same_values};

const T: &str = "Tensor[(2, 3), float32]";

/// The body and result of `@main`.
fn main_of(m: &Module) -> (&Body, ExprId) {
    let f = m.get("main").expect("a @main");
    (&f.code.body, f.code.root)
}

/// The operands of node `e` (fields of a tuple, arguments of a call).
fn operands(body: &Body, e: ExprId) -> Vec<ExprId> {
    let mut out = Vec::new();
    body.for_each_operand(e, |o| out.push(o));
    out
}

fn f(body: &str) -> String {
    format!("def @main(%x: {T}) {{ {body} }}")
}

// ---------------------------------------------------------------- FoldConstant

#[test]
fn fold_constant_folds_constant_calls_lets_tuples_and_if() {
    check(
        FoldConstant,
        &f("add(%x, multiply(2f, 3f))"),
        &f("add(%x, 6f)"),
    );
    check(
        FoldConstant,
        &f("let %a = add(1f, 2f); multiply(%x, %a)"),
        &f("multiply(%x, 3f)"),
    );
    check(
        FoldConstant,
        &f("%0 = (1f, 2f); add(%x, %0.1)"),
        &f("add(%x, 2f)"),
    );
    check(
        FoldConstant,
        &f("if (True) { %x } else { negative(%x) }"),
        &f("%x"),
    );
    check(
        FoldConstant,
        &f("%0 = fn (%y: float32) { add(%y, add(1f, 1f)) }; multiply(%x, %0(1f))"),
        &f("%0 = fn (%y: float32) { add(%y, 2f) }; multiply(%x, %0(1f))"),
    );
}

#[test]
fn fold_constant_keeps_dtypes_exact() {
    check(
        FoldConstant,
        "def @main() { add(3, 4) }",
        "def @main() { 7 }",
    );
    check(
        FoldConstant,
        "def @main() { cast(2.7f, dtype=\"int32\") }",
        "def @main() { 2 }",
    );
    check(
        FoldConstant,
        "def @main() { add(0.1f, 0.2f) }",
        &format!("def @main() {{ {}f }}", 0.1f32 + 0.2f32),
    );
    check(
        FoldConstant,
        "def @main() { divide(7i64, 2i64) }",
        "def @main() { 3i64 }",
    );
}

#[test]
fn fold_constant_folds_tuple_results_and_projections_of_them() {
    let before = "def @main(%x: Tensor[(1, 2), float32]) {
        %0 = nn.batch_norm(Tensor[(1, 2), float32]{1, 2}, Tensor[(2), float32]{1, 1}, Tensor[(2), float32]{0, 0}, Tensor[(2), float32]{0, 0}, Tensor[(2), float32]{1, 1}, epsilon=0f);
        add(%x, %0.0) }";
    check(
        FoldConstant,
        before,
        "def @main(%x: Tensor[(1, 2), float32]) { add(%x, Tensor[(1, 2), float32]{1, 2}) }",
    );
}

#[test]
fn fold_constant_never_folds_huge_results_or_failing_calls() {
    let ctx = PassContext::builder()
        .opt_level(3)
        .config(&FOLD_MAX_ELEMENTS, 4)
        .build()
        .unwrap();
    let text = "def @main() { add(Tensor[(8), float32]{1, 2, 3, 4, 5, 6, 7, 8}, 1f) }";
    let out = irpass::Pass::from(FoldConstant)
        .run_in(parse(text), &ctx)
        .unwrap();
    assert!(out.structurally_equal(&parse(text)), "{out}");
    let failing = "def @main() { divide(1, 0) }";
    assert!(
        run(FoldConstant, parse(failing)).structurally_equal(&parse(failing)),
        "the error stays for run time"
    );
    let big = "def @main() { zeros(shape=[2048, 1024]) }";
    assert!(run(FoldConstant, parse(big)).structurally_equal(&parse(big)));
}

// ---------------------------------------------------------------- DeadCodeElimination

#[test]
fn dead_code_elimination_removes_unused_lets_and_chains_of_them() {
    check(DeadCodeElimination, &f("let %a = exp(%x); %x"), &f("%x"));
    check(
        DeadCodeElimination,
        &f("let %a = exp(%x); let %b = exp(%a); let %c = tanh(%b); %x"),
        &f("%x"),
    );
    check(
        DeadCodeElimination,
        &f("let %a = exp(%x); let %b = exp(%x); %b"),
        &f("let %b = exp(%x); %b"),
    );
    check(
        DeadCodeElimination,
        "def @main(%x: float32, %c: bool) { if (%c) { let %u = exp(%x); %x } else { let %v = tanh(%x); %v } }",
        "def @main(%x: float32, %c: bool) { if (%c) { %x } else { let %v = tanh(%x); %v } }",
    );
    check(
        DeadCodeElimination,
        &f("let %g = fn (%y: float32) { let %z = exp(%y); %y }; %x"),
        &f("%x"),
    );
    check(
        DeadCodeElimination,
        &f("let %g = fn (%y: float32) { let %z = exp(%y); %y }; multiply(%x, %g(1f))"),
        &f("let %g = fn (%y: float32) { %y }; multiply(%x, %g(1f))"),
    );
}

#[test]
fn dead_code_elimination_sees_uses_inside_branches_closures_and_shared_nodes() {
    // `%a` is used only inside an `if` branch and a closure of later bindings, `%s` only
    // through a graph node shared by two of them, `%r` only by itself (a recursive closure
    // that is never called): the pass forgets a variable once it reaches its binding, which
    // is right only if every use was seen by then.
    let before = "def @main(%x: float32, %c: bool) {
        let %a = exp(%x);
        let %s = tanh(%x);
        %0 = add(%s, %s);
        let %dead = negative(%x);
        let %r = fn (%n: float32) -> float32 { %r(%n) };
        let %g = fn (%y: float32) { multiply(%y, %a) };
        let %d = if (%c) { add(%a, %0) } else { %0 };
        add(%d, %g(%x))
    }";
    let after = "def @main(%x: float32, %c: bool) {
        let %a = exp(%x);
        let %s = tanh(%x);
        %0 = add(%s, %s);
        let %g = fn (%y: float32) { multiply(%y, %a) };
        let %d = if (%c) { add(%a, %0) } else { %0 };
        add(%d, %g(%x))
    }";
    check(DeadCodeElimination, before, after);
}

#[test]
fn dead_code_elimination_walks_blocks_nested_in_body_position_as_one_block() {
    use irpass_passes::ir::arena::{ArenaFunction, BodyBuilder};
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
        DeadCodeElimination,
        m,
        &f("let %a = exp(%x); let %c = exp(%a); %c"),
    );
    assert_eq!(out.to_string().matches("let ").count(), 2, "{out}");
}

#[test]
fn dead_code_elimination_leaves_a_module_without_dead_code_untouched() {
    let m = parse(&f("let %a = exp(%x); add(%a, %a)"));
    let out = run(DeadCodeElimination, m.clone());
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

#[test]
fn cse_merges_equal_calls_and_respects_attributes() {
    let out = run(EliminateCommonSubexpr, parse(&f("add(exp(%x), exp(%x))")));
    assert_eq!(count_ops(&out, "exp"), 1, "{out}");
    let out = run(
        EliminateCommonSubexpr,
        parse(&f(
            "(nn.softmax(%x, axis=0), nn.softmax(%x, axis=1), nn.softmax(%x, axis=1))",
        )),
    );
    assert_eq!(count_ops(&out, "nn.softmax"), 2, "{out}");
    let out = run(
        EliminateCommonSubexpr,
        parse(&f(
            "%0 = add(%x, 1f); %1 = add(%x, 1f); %2 = multiply(%0, %0); %3 = multiply(%1, %1); add(%2, %3)",
        )),
    );
    assert_eq!(
        (count_ops(&out, "add"), count_ops(&out, "multiply")),
        (2, 1),
        "{out}"
    );
    let out = run(
        EliminateCommonSubexpr,
        parse(&f("add(exp(%x), exp(negative(%x)))")),
    );
    assert_eq!(
        count_ops(&out, "exp"),
        2,
        "different arguments stay apart: {out}"
    );
    // In a closure, equal calls on the parameter merge; across closures they do not.
    let out = run(
        EliminateCommonSubexpr,
        parse(&f(
            "let %g = fn (%y: float32) { add(exp(%y), exp(%y)) }; let %h = fn (%y: float32) { exp(%y) }; (%g(1f), %h(1f), %x)",
        )),
    );
    assert_eq!(count_ops(&out, "exp"), 2, "{out}");
    same_values(
        &parse(&f("add(exp(%x), exp(%x))")),
        &run(EliminateCommonSubexpr, parse(&f("add(exp(%x), exp(%x))"))),
        2,
    );
}

#[test]
fn cse_drops_a_let_whose_value_an_earlier_let_binds() {
    check(
        EliminateCommonSubexpr,
        &f("let %a = exp(%x); let %b = exp(%x); let %c = %a; add(%b, %c)"),
        &f("let %a = exp(%x); add(%a, %a)"),
    );
}

#[test]
fn cse_reuses_a_binding_only_where_it_is_in_scope() {
    // A binding in one branch of an `if` (or inside a closure) is not visible in the other
    // branch (or outside): the second `let` stays, though its value is the same node.
    let branches = format!(
        "def @main(%c: bool, %x: {T}) {{ if (%c) {{ let %a = exp(%x); multiply(%a, %a) }} \
         else {{ let %b = exp(%x); subtract(%b, %b) }} }}"
    );
    check(EliminateCommonSubexpr, &branches, &branches);
    let closure = f("let %g = fn () { let %a = exp(%x); %a }; let %b = exp(%x); add(%g(), %b)");
    check(EliminateCommonSubexpr, &closure, &closure);
    // Inside its scope, a nested chain still reuses the outer binding.
    check(
        EliminateCommonSubexpr,
        &f("let %a = exp(%x); let %g = fn () { let %b = exp(%x); %b }; add(%g(), %a)"),
        &f("let %a = exp(%x); let %g = fn () { %a }; add(%g(), %a)"),
    );
}

#[test]
fn cse_limited_to_calls_leaves_tuples_apart() {
    let text = f("((%x, 1f), (%x, 1f), exp(%x), exp(%x))");
    let ctx = PassContext::builder()
        .opt_level(3)
        .config(&CSE_CALLS_ONLY, true)
        .build()
        .unwrap();
    let out = irpass::Pass::from(EliminateCommonSubexpr)
        .run_in(parse(&text), &ctx)
        .unwrap();
    let (body, root) = main_of(&out);
    let fields = operands(body, root);
    assert_ne!(fields[0], fields[1], "tuples not merged");
    assert_eq!(fields[2], fields[3], "calls merged");
    let out = run(EliminateCommonSubexpr, parse(&text));
    let (body, root) = main_of(&out);
    let fields = operands(body, root);
    assert_eq!(fields[0], fields[1], "by default tuples merge too");
}

// ---------------------------------------------------------------- SimplifyExpr

#[test]
fn simplify_expr_removes_identities_that_keep_the_type() {
    check(SimplifyExpr, &f("multiply(%x, 1f)"), &f("%x"));
    check(SimplifyExpr, &f("multiply(1f, add(%x, 0f))"), &f("%x"));
    check(SimplifyExpr, &f("divide(subtract(%x, 0f), 1f)"), &f("%x"));
    check(SimplifyExpr, &f("negative(negative(%x))"), &f("%x"));
    check(SimplifyExpr, &f("nn.relu(nn.relu(%x))"), &f("nn.relu(%x)"));
    check(SimplifyExpr, &f("cast(%x, dtype=\"float32\")"), &f("%x"));
    // A constant that broadcasts x to a bigger shape is not an identity.
    let text = "def @main(%x: Tensor[(3), float32]) { multiply(%x, ones(shape=[2, 3])) }";
    check(SimplifyExpr, text, text);
    let text = "def @main(%x: Tensor[(3), float32]) { multiply(%x, Tensor[(2, 3), float32]{1, 1, 1, 1, 1, 1}) }";
    check(SimplifyExpr, text, text);
}

#[test]
fn simplify_expr_composes_transposes_and_reshapes() {
    check(SimplifyExpr, &f("transpose(transpose(%x))"), &f("%x"));
    let t3 = "def @main(%x: Tensor[(2, 3, 4), float32]) {";
    check(
        SimplifyExpr,
        &format!("{t3} transpose(transpose(%x, axes=[1, 0, 2]), axes=[0, 2, 1]) }}"),
        &format!("{t3} transpose(%x, axes=[1, 2, 0]) }}"),
    );
    check(
        SimplifyExpr,
        &format!("{t3} reshape(reshape(%x, newshape=[6, 4]), newshape=[4, 6]) }}"),
        &format!("{t3} reshape(%x, newshape=[4, 6]) }}"),
    );
    check(
        SimplifyExpr,
        &format!("{t3} reshape(%x, newshape=[0, -1, 4]) }}"),
        &format!("{t3} %x }}"),
    );
    check(
        SimplifyExpr,
        &format!("{t3} reshape(reshape(%x, newshape=[6, 4]), newshape=[2, 3, 4]) }}"),
        &format!("{t3} %x }}"),
    );
}

// ---------------------------------------------------------------- SimplifyInference

// SimplifyInference's cases are data: tests/cases/SimplifyInference/.

// ---------------------------------------------------------------- CanonicalizeOps

#[test]
fn canonicalize_ops_turns_bias_add_into_a_broadcast_add() {
    check(
        CanonicalizeOps,
        "def @main(%x: Tensor[(1, 3, 2, 2), float32], %b: Tensor[(3), float32]) { nn.bias_add(%x, %b) }",
        "def @main(%x: Tensor[(1, 3, 2, 2), float32], %b: Tensor[(3), float32]) { add(%x, expand_dims(%b, axis=1, num_newaxis=2)) }",
    );
    check(
        CanonicalizeOps,
        "def @main(%x: Tensor[(2, 3), float32], %b: Tensor[(3), float32]) { nn.bias_add(%x, %b, axis=-1) }",
        "def @main(%x: Tensor[(2, 3), float32], %b: Tensor[(3), float32]) { add(%x, %b) }",
    );
}

// ---------------------------------------------------------------- normal forms

#[test]
fn a_normal_form_binds_each_value_once_in_the_innermost_common_scope() {
    check(
        ToANormalForm,
        &f("%0 = exp(%x); add(%0, %0)"),
        &f("let %a = exp(%x); let %b = add(%a, %a); %b"),
    );
    // Used in both branches only: bound once, before the `if`.
    check(
        ToANormalForm,
        "def @main(%x: float32, %c: bool) { %0 = exp(%x); if (%c) { add(%0, 1f) } else { %0 } }",
        "def @main(%x: float32, %c: bool) { let %a = exp(%x); let %b = if (%c) { let %d = add(%a, 1f); %d } else { %a }; %b }",
    );
    // Used in one branch only: bound inside it.
    check(
        ToANormalForm,
        "def @main(%x: float32, %c: bool) { if (%c) { exp(%x) } else { %x } }",
        "def @main(%x: float32, %c: bool) { let %b = if (%c) { let %a = exp(%x); %a } else { %x }; %b }",
    );
}

#[test]
fn graph_normal_form_inlines_lets_and_keeps_recursive_ones() {
    check(
        ToGraphNormalForm,
        &f("let %a = exp(%x); add(%a, %a)"),
        &f("%0 = exp(%x); add(%0, %0)"),
    );
    let rec = "def @main(%n: int32) { let %f: fn (int32) -> int32 = fn (%i: int32) -> int32 { if (%i > 0) { %f(%i - 1) } else { %i } }; %f(%n) }";
    check(ToGraphNormalForm, rec, rec);
    // A closure that does not call itself is a value like any other.
    check(
        ToGraphNormalForm,
        "def @main(%n: int32) { let %g = fn (%i: int32) -> int32 { %i + %n }; %g(%n) }",
        "def @main(%n: int32) { fn (%i: int32) -> int32 { %i + %n }(%n) }",
    );
    // A then G is the identity up to structure.
    let m = parse(&f("%0 = exp(%x); %1 = add(%0, %0); (%1, %0)"));
    let back = run(ToGraphNormalForm, run(ToANormalForm, m.clone()));
    assert!(back.structurally_equal(&m), "{back}");
}

// ---------------------------------------------------------------- module passes

#[test]
fn inline_replaces_calls_of_inline_functions_and_removes_them() {
    check(
        Inline,
        "def @sq(%y: float32, Inline=1) -> float32 { let %z = multiply(%y, %y); %z }
         def @main(%x: float32) { add(@sq(%x), @sq(exp(%x))) }",
        // The argument is computed once and shared by the parameter's two uses.
        "def @main(%x: float32) { add({ let %a = multiply(%x, %x); %a }, { %0 = exp(%x); let %b = multiply(%0, %0); %b }) }",
    );
    let keep = "def @f(%y: float32) -> float32 { exp(%y) } def @main(%x: float32) { @f(%x) }";
    check(Inline, keep, keep);
}

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

// ---------------------------------------------------------------- FuseOps

#[test]
fn fuse_ops_fuses_elementwise_ops_into_a_convolution() {
    let ty = "Tensor[(1, 2, 4, 4), float32]";
    check(
        FuseOps,
        &format!("def @main(%x: {ty}, %w: Tensor[(2, 2, 3, 3), float32], %b: Tensor[(2), float32]) {{
            %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
            %1 = nn.bias_add(%0, %b);
            nn.relu(%1) }}"),
        &format!("def @main(%x: {ty}, %w: Tensor[(2, 2, 3, 3), float32], %b: Tensor[(2), float32]) {{
            %0 = fn (%p0: {ty}, %p1: Tensor[(2, 2, 3, 3), float32], %p2: Tensor[(2), float32], Primitive=1) -> {ty} {{
              %1 = nn.conv2d(%p0, %p1, padding=[1, 1, 1, 1]);
              %2 = nn.bias_add(%1, %p2);
              nn.relu(%2)
            }};
            %0(%x, %w, %b) }}"),
    );
}

#[test]
fn fuse_ops_fuses_injective_ops_into_a_reduction_and_stops_after_it() {
    let out = run(
        FuseOps,
        parse(
            "def @main(%x: Tensor[(2, 3, 4), float32]) {
        %0 = transpose(%x, axes=[0, 2, 1]);
        %1 = sum(%0, axis=[2]);
        %2 = exp(%1);
        reshape(%2, newshape=[8]) }",
        ),
    );
    let text = out.to_string();
    assert_eq!(text.matches("Primitive=1").count(), 2, "{text}");
    // The outer call is the reshape's own function; its argument is the fused transpose-sum-exp.
    let (body, root) = main_of(&out);
    let Node::Call { args, .. } = body.node(root) else {
        panic!("{text}")
    };
    let Node::Call { callee, .. } = body.node(body.list(*args)[0]) else {
        panic!("{text}")
    };
    let Node::Closure(c) = body.node(*callee) else {
        panic!("{text}")
    };
    let ops: Vec<&str> = post_order(body, body.closure(*c).body)
        .into_iter()
        .filter_map(|id| body.op_call(id))
        .map(|(o, _, _)| o.name())
        .collect();
    assert!(ops.contains(&"transpose") && ops.contains(&"exp"), "{text}");
}

#[test]
fn fuse_ops_does_not_fuse_a_value_with_two_consumers_and_level_0_isolates_every_op() {
    let out = run(
        FuseOps,
        parse(&f("%0 = exp(%x); %1 = add(%0, %0); tanh(%1)")),
    );
    assert_eq!(out.to_string().matches("Primitive=1").count(), 2, "{out}");
    let ctx = PassContext::builder()
        .opt_level(3)
        .config(&FUSE_OPT_LEVEL, 0)
        .build()
        .unwrap();
    let out = irpass::Pass::from(FuseOps)
        .run_in(parse(&f("tanh(exp(negative(%x)))")), &ctx)
        .unwrap();
    assert_eq!(out.to_string().matches("Primitive=1").count(), 3, "{out}");
    same_values(&parse(&f("tanh(exp(negative(%x)))")), &out, 2);
    let out = run(FuseOps, parse(&f("tanh(exp(negative(%x)))")));
    assert_eq!(out.to_string().matches("Primitive=1").count(), 1, "{out}");
}

// ---------------------------------------------------------------- ConvertLayout

#[test]
fn convert_layout_converts_a_conv_region_with_transforms_only_at_its_edges() {
    let x = "Tensor[(1, 2, 4, 4), float32]";
    check(
        ConvertLayout::default(),
        &format!("def @main(%x: {x}, %w: Tensor[(3, 2, 3, 3), float32], %b: Tensor[(1, 3, 1, 1), float32]) {{
            %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
            %1 = add(%0, %b);
            %2 = nn.relu(%1);
            %3 = multiply(%2, 2f);
            sum(%3, axis=[1]) }}"),
        &format!("def @main(%x: {x}, %w: Tensor[(3, 2, 3, 3), float32], %b: Tensor[(1, 3, 1, 1), float32]) {{
            %0 = layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NHWC\");
            %1 = layout_transform(%w, src_layout=\"OIHW\", dst_layout=\"HWIO\");
            %2 = nn.conv2d(%0, %1, padding=[1, 1, 1, 1], data_layout=\"NHWC\", kernel_layout=\"HWIO\");
            %3 = layout_transform(%b, src_layout=\"NCHW\", dst_layout=\"NHWC\");
            %4 = add(%2, %3);
            %5 = nn.relu(%4);
            %6 = multiply(%5, 2f);
            %7 = layout_transform(%6, src_layout=\"NHWC\", dst_layout=\"NCHW\");
            sum(%7, axis=[1]) }}"),
    );
}

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
fn dead_code_elimination_removes_an_unused_recursive_closure_and_keeps_a_used_one() {
    let rec = "let %f: fn (int32) -> int32 = fn (%i: int32) -> int32 { if (%i > 0) { %f(%i - 1) } else { %i } };";
    check(
        DeadCodeElimination,
        &format!("def @main(%n: int32) {{ {rec} %n }}"),
        "def @main(%n: int32) { %n }",
    );
    let used = format!("def @main(%n: int32) {{ {rec} %f(%n) }}");
    check(DeadCodeElimination, &used, &used);
}

#[test]
fn dead_code_elimination_handles_nested_lets_and_projections() {
    check(
        DeadCodeElimination,
        &f("let %t = (exp(%x), tanh(%x)); let %u = %t.0; let %v = %t.1; %u"),
        &f("let %t = (exp(%x), tanh(%x)); let %u = %t.0; %u"),
    );
    check(
        DeadCodeElimination,
        &f("let %a = { let %b = exp(%x); let %c = tanh(%x); %b }; %a"),
        &f("let %a = { let %b = exp(%x); %b }; %a"),
    );
}

#[test]
fn fold_constant_folds_concatenate_of_constants_and_split_projections() {
    check(
        FoldConstant,
        "def @main() { concatenate((Tensor[(2), float32]{1, 2}, Tensor[(1), float32]{3})) }",
        "def @main() { Tensor[(3), float32]{1, 2, 3} }",
    );
    check(
        FoldConstant,
        "def @main(%x: Tensor[(2), float32]) { %0 = split(Tensor[(4), float32]{1, 2, 3, 4}, indices_or_sections=2); add(%x, %0.1) }",
        "def @main(%x: Tensor[(2), float32]) { add(%x, Tensor[(2), float32]{3, 4}) }",
    );
}

#[test]
fn cse_merges_projections_of_one_tuple() {
    let out = run(
        EliminateCommonSubexpr,
        parse(&f("%0 = (exp(%x), %x); add(%0.0, %0.0)")),
    );
    let (body, root) = main_of(&out);
    let args = operands(body, root);
    assert_eq!(args[0], args[1], "{out}");
}

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
fn inline_flattens_chains_of_inline_functions() {
    check(
        Inline,
        "def @a(%y: float32, Inline=1) -> float32 { exp(%y) }
         def @b(%y: float32, Inline=1) -> float32 { @a(%y) }
         def @main(%x: float32) { @b(%x) }",
        "def @main(%x: float32) { exp(%x) }",
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
fn remove_unused_functions_keeps_functions_referenced_as_values() {
    let text =
        "def @f(%y: float32) -> float32 { %y } def @main(%x: float32) { let %g = @f; %g(%x) }";
    check(RemoveUnusedFunctions, text, text);
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
