//! Incremental inference: what a second inference visits, and what it must still see.

use super::{check_module, infer_module, type_functions};
use crate::expr::Function;
use crate::models::mlp_chain;
use crate::module::Module;
use crate::visit::{MapMutator, Mutator};
use crate::{Expr, ExprKind};

fn parse(text: &str) -> Module {
    Module::parse(text).unwrap_or_else(|e| panic!("{e}"))
}

/// Types `m` (incrementally, or from scratch) and returns how many nodes were visited.
fn visits(m: &Module, incremental: bool) -> usize {
    let inf = type_functions(m, incremental);
    let n = inf.visited;
    inf.finish().unwrap_or_else(|e| panic!("{e}"));
    n
}

/// `m` with `main`'s body replaced.
fn with_main(m: &Module, body: Expr) -> Module {
    let mut out = m.clone();
    let main = m.get("main").expect("a @main").with_body(body);
    out.add("main", main);
    out
}

#[test]
fn a_second_inference_of_a_typed_module_visits_no_node() {
    let m = parse(&mlp_chain(50).to_string());
    let first = visits(&m, true);
    assert!(
        first > 50 * 7,
        "the first inference visits every node: {first}"
    );
    assert_eq!(visits(&m, true), 0);
    // From scratch, every node again, and a variable at each of its uses (the first
    // inference reads a use of a variable typed at its binding without visiting it).
    let scratch = visits(&m, false);
    assert!(
        scratch > first,
        "{scratch} visits from scratch, {first} the first time"
    );
    assert_eq!(visits(&m, false), scratch);
}

#[test]
fn after_a_rewrite_only_the_new_nodes_and_the_block_are_visited() {
    let m = parse(&mlp_chain(50).to_string());
    visits(&m, true);
    // Each `nn.relu` call becomes a new node with the same (typed) arguments.
    let mut fresh = MapMutator::new(|e: Expr| match &e.kind {
        ExprKind::Call(c) if matches!(&c.callee, crate::Callee::Op(op) if op.name() == "nn.relu") => {
            Expr::op("nn.relu", c.args.clone(), c.attrs.clone()).expect("relu")
        }
        _ => e,
    });
    let body = fresh.mutate(&m.get("main").unwrap().body);
    let out = with_main(&m, body);
    // The 50 new calls and the rebuilt block; their operands and every other binding keep
    // their types.
    assert_eq!(visits(&out, true), 50 + 1);
    assert_eq!(visits(&out, false), visits(&m, false));
    check_module(&out).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_changed_global_signature_is_seen_at_its_call_sites() {
    let m = parse(
        "def @g(%x: Tensor[(2), float32]) -> Tensor[(2), float32] { nn.relu(%x) }
         def @main(%a: Tensor[(2), float32]) { let %b = @g(%a); %b }",
    );
    infer_module(&m).unwrap();
    // `@main` is unchanged and typed, but it calls `@g`, whose parameter now differs.
    let g3 = parse("def @g(%x: Tensor[(3), float32]) -> Tensor[(3), float32] { nn.relu(%x) }");
    let mut changed = m.clone();
    changed.add("g", g3.get("g").unwrap().clone());
    let err = infer_module(&changed).expect_err("the call passes a (2) tensor to a (3) parameter");
    assert!(err.to_string().contains("(3)"), "{err}");
}

#[test]
fn rebinding_a_typed_variable_to_a_value_of_another_type_is_an_error() {
    let m = parse("def @main(%x: Tensor[(2, 3), float32]) { let %y = nn.relu(%x); %y }");
    infer_module(&m).unwrap();
    let main = m.get("main").unwrap();
    let ExprKind::Let(bindings, _) = &main.body.kind else {
        panic!("a block")
    };
    let (y, _) = &bindings[0];
    let x = Expr::var(&main.params[0]);
    let transposed = Expr::op("transpose", vec![x], Default::default()).unwrap();
    let changed = with_main(&m, Expr::let_(y, transposed, Expr::var(y)));
    for (how, result) in [
        ("incrementally", infer_module(&changed)),
        ("from scratch", check_module(&changed)),
    ] {
        let err = result.expect_err(how).to_string();
        assert!(
            err.contains("`%y` was typed `Tensor[(2, 3), float32]` before and is now `Tensor[(3, 2), float32]`"),
            "{how}: {err}"
        );
    }
}

#[test]
fn typed_nodes_are_not_trusted_in_a_function_whose_parameter_has_no_type() {
    let m = parse(
        "def @main(%x: Tensor[(2), float32]) {
           add(Tensor[(2), float32]{1, 2}, Tensor[(2), float32]{3, 4})
         }",
    );
    infer_module(&m).unwrap();
    assert_eq!(visits(&m, true), 0);
    // The same typed body under a new parameter with neither annotation nor recorded type:
    // its type comes from the uses, so every node is visited.
    let main = m.get("main").unwrap();
    let untyped = crate::Var::new("x", None);
    let f = Function::new(vec![untyped], None, main.body.clone(), main.attrs.clone());
    let mut changed = m.clone();
    changed.add("main", f);
    assert_eq!(visits(&changed, true), 3, "the add and its two constants");
}

#[test]
fn a_closure_with_an_untyped_parameter_sees_the_types_of_variables_bound_outside_it() {
    use crate::{Attrs, DType, Type, Var};
    let m = parse(
        "def @main(%x: Tensor[(2), float32]) { let %a = add(%x, %x); let %b = nn.relu(%a); %b }",
    );
    infer_module(&m).unwrap();
    let main = m.get("main").unwrap();
    let ExprKind::Let(bindings, _) = &main.body.kind else {
        panic!("a block")
    };
    let a = bindings[0].0.clone();
    // A pass appends a closure over `%a` whose parameter has no type, and a call of it: the
    // typed bindings are taken as they are, so `%a` is known only by its recorded type, and
    // the parameter's type comes from `%a`'s through `multiply`.
    let q = Var::new("q", None);
    let product = Expr::op("multiply", vec![Expr::var(&q), Expr::var(&a)], Attrs::new());
    let closure = Function::new(vec![q.clone()], None, product.unwrap(), Attrs::new());
    let (f, r) = (Var::new("f", None), Var::new("r", None));
    let mut block = bindings.clone();
    block.push((f.clone(), Expr::function(closure)));
    block.push((r.clone(), Expr::call(Expr::var(&f), vec![Expr::var(&a)])));
    let changed = with_main(&m, Expr::lets(block, Expr::var(&r)));
    let visited = visits(&changed, true);
    assert!(
        visited < visits(&changed, false),
        "the typed bindings were visited again: {visited}"
    );
    let vector = Type::tensor(&[2], DType::Float32);
    assert_eq!(q.checked_type(), Some(&vector));
    assert_eq!(r.checked_type(), Some(&vector));
    check_module(&changed).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_typed_binding_keeps_its_type_for_new_uses_in_an_expression_inferred_alone() {
    use super::infer_expr;
    use crate::Attrs;
    let m = parse("def @main(%x: Tensor[(2), float32]) { let %a = nn.relu(%x); %a }");
    let body = &m.get("main").unwrap().body;
    let first = infer_expr(body).unwrap_or_else(|e| panic!("{e}"));
    // The binding is typed now; a new (untyped) use of `%a` must still get its type.
    let ExprKind::Let(bindings, _) = &body.kind else {
        panic!("a block")
    };
    let a = Expr::var(&bindings[0].0);
    let sum = Expr::op("add", vec![a.clone(), a], Attrs::new()).unwrap();
    let again = infer_expr(&Expr::lets(bindings.clone(), sum)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again, first);
}
