//! Structural equality and hashing, the visitor and the memoising mutator.

use std::collections::HashMap;

use irpass::IrModule;
use irpass_ir::structural::exprs_equal;
use irpass_ir::visit::{MapMutator, Mutator, count_nodes, post_order};
use irpass_ir::{Expr, ExprKind, Module};

fn module(text: &str) -> Module {
    Module::parse(text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn bound_variables_are_equal_up_to_renaming() {
    let a = module("def @main(%x: float32) { let %y = exp(%x); fn (%z: float32) { %z + %y } }");
    let b = module("def @main(%a: float32) { let %b = exp(%a); fn (%c: float32) { %c + %b } }");
    assert!(a.structurally_equal(&b));
    assert_eq!(a.structural_hash(), b.structural_hash());
    // Swapping which variable is used is a different program.
    let c = module("def @main(%a: float32) { let %b = exp(%a); fn (%c: float32) { %b + %c } }");
    assert!(!a.structurally_equal(&c));
}

#[test]
fn attributes_constants_annotations_and_sharing_are_compared_as_they_should_be() {
    let base = module("def @main(%x: Tensor[(2, 3), float32]) { nn.softmax(%x, axis=0) }");
    assert!(!base.structurally_equal(&module(
        "def @main(%x: Tensor[(2, 3), float32]) { nn.softmax(%x, axis=1) }"
    )));
    // An attribute written with its default value is the same as leaving it out.
    assert!(
        module("def @main(%x: Tensor[(2, 3), float32]) { nn.softmax(%x, axis=-1) }")
            .structurally_equal(&module(
                "def @main(%x: Tensor[(2, 3), float32]) { nn.softmax(%x) }"
            ))
    );
    assert!(!base.structurally_equal(&module(
        "def @main(%x: Tensor[(2, 4), float32]) { nn.softmax(%x, axis=0) }"
    )));
    assert!(
        !module("def @main() { 0f }").structurally_equal(&module("def @main() { -0f }")),
        "bit-exact"
    );
    assert!(
        module("def @main() { float32{nan} }")
            .structurally_equal(&module("def @main() { float32{nan} }"))
    );
    // A shared node equals the same computation written twice (sharing is not semantics).
    let shared = module("def @main(%x: float32) { %0 = exp(%x); add(%0, %0) }");
    let twice = module("def @main(%x: float32) { add(exp(%x), exp(%x)) }");
    assert!(shared.structurally_equal(&twice));
    assert_eq!(shared.structural_hash(), twice.structural_hash());
}

#[test]
fn free_variables_match_by_name() {
    let a = module("def @main() { free_var %w: float32; exp(%w) }");
    let b = module("def @main() { free_var %w: float32; exp(%w) }");
    let c = module("def @main() { free_var %v: float32; exp(%v) }");
    assert!(a.structurally_equal(&b));
    assert!(!a.structurally_equal(&c));
}

#[test]
fn post_order_visits_each_shared_node_once_children_first() {
    let m = module(
        "def @main(%x: float32) { %0 = exp(%x); %1 = add(%0, %0); %2 = multiply(%1, %1); (%2, %0) }",
    );
    let body = &m.get("main").unwrap().body;
    let mut seen = Vec::new();
    post_order(body, &mut |e| seen.push(e.clone()));
    assert_eq!(seen.len(), 5, "x, exp, add, multiply, tuple");
    assert!(matches!(seen.last().unwrap().kind, ExprKind::Tuple(_)));
    let pos = |e: &Expr| seen.iter().position(|s| Expr::ptr_eq(s, e)).unwrap();
    post_order(body, &mut |e| {
        for c in e.children() {
            assert!(pos(c) < pos(e));
        }
    });
}

#[test]
fn post_order_visits_the_body_of_a_function_object_two_closures_share_once() {
    let m = module("def @main(%x: float32) { fn (%y: float32) { exp(%y) } }");
    let ExprKind::Function(f) = &m.get("main").unwrap().body.kind else {
        panic!("a closure")
    };
    // Two closure nodes holding the same function object: its body has one parent node (the
    // function), reached twice.
    let pair = Expr::tuple(vec![Expr::function(f.clone()), Expr::function(f.clone())]);
    let mut exps = 0;
    let mut all = 0;
    post_order(&pair, &mut |e| {
        all += 1;
        if matches!(&e.kind, ExprKind::Call(_)) {
            exps += 1;
        }
    });
    assert_eq!(exps, 1, "the body's call once");
    assert_eq!(all, 5, "the tuple, two closures, the call and %y");
    assert_eq!(count_nodes(&pair), 5);
}

#[test]
fn the_mutator_rewrites_each_shared_node_once_and_keeps_sharing_and_identity() {
    let m = module(
        "def @main(%x: float32) { %0 = exp(%x); %1 = add(%0, %0); %2 = multiply(%1, %1); (%2, %0) }",
    );
    let body = m.get("main").unwrap().body.clone();
    let mut calls: HashMap<&'static str, usize> = HashMap::new();
    let mut rewrite_exp = MapMutator::new(|e: Expr| {
        let ExprKind::Call(call) = &e.kind else {
            return e;
        };
        let name = match &call.callee {
            irpass_ir::Callee::Op(op) => op.name(),
            _ => return e,
        };
        *calls.entry(name).or_default() += 1;
        if name == "exp" {
            Expr::op("tanh", call.args.clone(), call.attrs.clone()).unwrap()
        } else {
            e
        }
    });
    let out = rewrite_exp.mutate(&body);
    assert_eq!(calls.get("exp"), Some(&1));
    assert_eq!(calls.get("add"), Some(&1));
    assert_eq!(calls.get("multiply"), Some(&1));
    assert_eq!(count_nodes(&out), count_nodes(&body), "sharing kept");
    let text = format!("{out}");
    assert!(
        text.contains("tanh(%x)") && !text.contains("exp("),
        "{text}"
    );

    // A mutator that changes nothing returns the very same node.
    let mut identity = MapMutator::new(|e| e);
    assert!(Expr::ptr_eq(&identity.mutate(&body), &body));
}

#[test]
fn the_mutator_is_linear_on_a_dag_whose_tree_is_exponential() {
    let mut text = String::from("def @main(%x: float32) {\n  %0 = add(%x, %x);\n");
    for i in 1..200 {
        text.push_str(&format!("  %{i} = add(%{}, %{});\n", i - 1, i - 1));
    }
    text.push_str("  %199\n}");
    let m = module(&text);
    let mut n = 0;
    let mut counting = MapMutator::new(|e| {
        n += 1;
        e
    });
    counting.mutate(&m.get("main").unwrap().body);
    assert_eq!(n, 202, "200 additions and %x at each of its two uses");
    // Equality and hashing of the 2^200-node tree are linear too.
    let again = module(&text);
    assert!(m.structurally_equal(&again));
    assert_eq!(m.structural_hash(), again.structural_hash());
}

/// `let %a = exp(%x); let %b = tanh(%a); add(%a, %b)` with the bindings in one block, or as
/// blocks of one binding each nested in body position (as `Expr::let_` builds them).
fn flat_and_nested() -> (Module, Module) {
    use irpass_ir::{Attrs, DType, Function, Type, Var};
    let build = |nested: bool| {
        let x = Var::new("x", Some(Type::tensor(&[3], DType::Float32)));
        let (a, b) = (Var::new("a", None), Var::new("b", None));
        let call = |op: &str, args: Vec<Expr>| Expr::op(op, args, Attrs::new()).unwrap();
        let va = call("exp", vec![Expr::var(&x)]);
        let vb = call("tanh", vec![Expr::var(&a)]);
        let result = call("add", vec![Expr::var(&a), Expr::var(&b)]);
        let body = if nested {
            Expr::let_(&a, va, Expr::let_(&b, vb, result))
        } else {
            Expr::lets(vec![(a.clone(), va), (b.clone(), vb)], result)
        };
        Module::from_functions([("main", Function::new(vec![x], None, body, Attrs::new()))])
    };
    (build(false), build(true))
}

#[test]
fn a_block_nested_in_body_position_means_the_two_blocks_joined() {
    let (flat, nested) = flat_and_nested();
    let ExprKind::Let(bindings, _) = &flat.get("main").unwrap().body.kind else {
        panic!("a block")
    };
    assert_eq!(bindings.len(), 2);
    assert!(flat.structurally_equal(&nested) && nested.structurally_equal(&flat));
    assert_eq!(flat.structural_hash(), nested.structural_hash());
    assert_eq!(flat.to_string(), nested.to_string());
    // Parsed back, the text is one block again.
    let parsed = module(&nested.to_string());
    let ExprKind::Let(bindings, _) = &parsed.get("main").unwrap().body.kind else {
        panic!("a block")
    };
    assert_eq!(bindings.len(), 2);
    assert!(parsed.structurally_equal(&nested));
    // A different binding is told apart however the blocks are cut.
    let other = module(
        "def @main(%x: Tensor[(3), float32]) { let %a = exp(%x); let %b = exp(%a); add(%a, %b) }",
    );
    assert!(!other.structurally_equal(&nested) && !nested.structurally_equal(&other));
    // Types and values are the same.
    flat.infer_types().unwrap();
    nested.infer_types().unwrap();
    let input = irpass_ir::Value::Tensor(std::sync::Arc::new(
        irpass_ir::Tensor::from_vec(irpass_ir::DType::Float32, &[3], vec![0.5, -1.0, 2.0]).unwrap(),
    ));
    let run = |m: &Module| {
        irpass_ir::eval_function(m, "main", vec![input.clone()])
            .unwrap()
            .to_string()
    };
    assert_eq!(run(&flat), run(&nested));
}

#[test]
fn the_mutator_joins_nested_blocks_and_returns_an_unchanged_block_as_is() {
    let (_, nested) = flat_and_nested();
    let body = nested.get("main").unwrap().body.clone();
    let mut identity = MapMutator::new(|e| e);
    assert!(Expr::ptr_eq(&identity.mutate(&body), &body));

    let mut exp_to_sqrt = MapMutator::new(|e: Expr| match &e.kind {
        ExprKind::Call(c) if matches!(&c.callee, irpass_ir::Callee::Op(op) if op.name() == "exp") => {
            Expr::op("sqrt", c.args.clone(), c.attrs.clone()).unwrap()
        }
        _ => e,
    });
    let out = exp_to_sqrt.mutate(&body);
    let ExprKind::Let(bindings, result) = &out.kind else {
        panic!("a block: {out}")
    };
    assert_eq!(bindings.len(), 2, "one block of both bindings: {out}");
    assert!(matches!(result.kind, ExprKind::Call(_)));
    let expected = module(
        "def @main(%x: Tensor[(3), float32]) { let %a = sqrt(%x); let %b = tanh(%a); add(%a, %b) }",
    );
    assert!(exprs_equal(&out, &expected.get("main").unwrap().body));
}
