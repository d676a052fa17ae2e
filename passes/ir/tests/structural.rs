//! Structural equality and hashing of modules, and a rewrite on a block nested in body
//! position.

use irpass_ir::body::{ArenaFunction, BodyBuilder, ExprId, Node, post_order};

use irpass_ir::rewrite::{OldId, Rewrite, RewriteCx};
use irpass_ir::{Attrs, DType, Function, Module, Type};

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
    // Sharing counts: a node used twice is not the same computation written twice (so a
    // missing CSE shows in a test that compares structurally).
    let shared = module("def @main(%x: float32) { %0 = exp(%x); add(%0, %0) }");
    let twice = module("def @main(%x: float32) { add(exp(%x), exp(%x)) }");
    assert!(!shared.structurally_equal(&twice) && !twice.structurally_equal(&shared));
    assert_ne!(shared.structural_hash(), twice.structural_hash());
    let renamed = module("def @main(%y: float32) { %7 = exp(%y); add(%7, %7) }");
    assert!(shared.structurally_equal(&renamed));
    assert_eq!(shared.structural_hash(), renamed.structural_hash());
}

#[test]
fn free_variables_match_up_to_renaming_as_bound_ones_do() {
    let a = module("def @main() { free_var %w: float32; exp(%w) }");
    let b = module("def @main() { free_var %v: float32; exp(%v) }");
    let c = module("def @main() { free_var %v: int32; exp(%v) }");
    assert!(a.structurally_equal(&b));
    assert!(!a.structurally_equal(&c), "annotations count");
}

#[test]
fn equality_and_hashing_are_linear_on_a_dag_whose_tree_is_exponential() {
    let mut text = String::from("def @main(%x: float32) {\n  %0 = add(%x, %x);\n");
    for i in 1..200 {
        text.push_str(&format!("  %{i} = add(%{}, %{});\n", i - 1, i - 1));
    }
    text.push_str("  %199\n}");
    let m = module(&text);
    let f = m.get("main").unwrap();
    assert_eq!(
        post_order(&f.code.body, f.code.root).len(),
        201,
        "200 additions and %x"
    );
    let again = module(&text);
    assert!(m.structurally_equal(&again));
    assert_eq!(m.structural_hash(), again.structural_hash());
}

/// `let %a = exp(%x); let %b = tanh(%a); add(%a, %b)` with the bindings in one block, or as
/// blocks of one binding each nested in body position.
fn flat_and_nested() -> (Module, Module) {
    let build = |nested: bool| {
        let mut bb = BodyBuilder::new();
        let x = bb.var("x", Some(Type::tensor(&[3], DType::Float32)), None);
        let (a, b) = (bb.var("a", None, None), bb.var("b", None, None));
        let xe = bb.use_var(x);
        let va = bb.op("exp", &[xe], Attrs::new()).unwrap();
        let ae = bb.use_var(a);
        let vb = bb.op("tanh", &[ae], Attrs::new()).unwrap();
        let be = bb.use_var(b);
        let result = bb.op("add", &[ae, be], Attrs::new()).unwrap();
        let root = if nested {
            let inner = bb.lets(&[(b, vb)], result);
            bb.lets(&[(a, va)], inner)
        } else {
            bb.lets(&[(a, va), (b, vb)], result)
        };
        let code = ArenaFunction {
            body: bb.finish(),
            params: vec![x],
            root,
        };
        Module::from_functions([("main", Function::new(code, None, Attrs::new(), None))])
    };
    (build(false), build(true))
}

/// How many bindings the block at the result of `@main` holds.
fn block_len(m: &Module) -> usize {
    let f = m.get("main").unwrap();
    match f.code.body.node(f.code.root) {
        Node::Let { bindings, .. } => bindings.len(),
        other => panic!("a block: {other:?}"),
    }
}

#[test]
fn a_block_nested_in_body_position_means_the_two_blocks_joined() {
    let (flat, nested) = flat_and_nested();
    assert_eq!(block_len(&flat), 2);
    assert!(flat.structurally_equal(&nested) && nested.structurally_equal(&flat));
    assert_eq!(flat.structural_hash(), nested.structural_hash());
    assert_eq!(flat.to_string(), nested.to_string());
    // Parsed back, the text is one block again.
    let parsed = module(&nested.to_string());
    assert_eq!(block_len(&parsed), 2);
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
        irpass_ir::Tensor::from_vec(DType::Float32, &[3], vec![0.5, -1.0, 2.0]).unwrap(),
    ));
    let run = |m: &Module| {
        irpass_ir::eval_function(m, "main", vec![input.clone()])
            .unwrap()
            .to_string()
    };
    assert_eq!(run(&flat), run(&nested));
}

/// Replaces `exp` by `sqrt`.
struct ExpToSqrt;

impl Rewrite for ExpToSqrt {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, _old: OldId, new: ExprId) -> Option<ExprId> {
        let (op, args, attrs) = cx.new.body().op_call(new)?;
        let (args, attrs) = (args.to_vec(), attrs.clone());
        (op.name() == "exp").then(|| cx.new.op("sqrt", &args, attrs).unwrap())
    }
}

#[test]
fn a_rewrite_of_nested_blocks_keeps_their_meaning_and_an_unchanged_body_is_reported_as_such() {
    let (_, nested) = flat_and_nested();
    let f = nested.get("main").unwrap();
    let code = &f.code;
    struct Nothing;
    impl Rewrite for Nothing {}
    assert!(code.rewrite(&mut Nothing).is_none());
    let out = f.with_code(code.rewrite(&mut ExpToSqrt));
    let out = Module::from_functions([("main", out)]);
    let expected = module(
        "def @main(%x: Tensor[(3), float32]) { let %a = sqrt(%x); let %b = tanh(%a); add(%a, %b) }",
    );
    assert!(out.structurally_equal(&expected), "{out}");
}
