//! Type inference on input nested far deeper than any stack (its types and errors on models,
//! constructs and ill-typed programs are recorded in `tests/snapshots/`).

use super::*;
use crate::body::*;
use crate::error::IrError;
use crate::rewrite::OldBody;
use crate::{Attrs, DType, Op, Type};

/// A function of one `float32` parameter whose body `wrap` nests `depth` deep.
fn deep(depth: usize, wrap: impl Fn(&mut BodyBuilder, ExprId, usize) -> ExprId) -> ArenaFunction {
    let mut b = BodyBuilder::new();
    let x = b.var("x", Some(Type::scalar(DType::Float32)), None);
    let mut e = b.use_var(x);
    for i in 0..depth {
        e = wrap(&mut b, e, i);
    }
    ArenaFunction {
        body: b.finish(),
        params: vec![x],
        root: e,
    }
}

fn infer_one(f: &ArenaFunction) -> Result<BodyTypes, IrError> {
    let input = FunctionInput {
        name: "main",
        body: &f.body,
        params: &f.params,
        root: f.root,
        ret_type: None,
        span: None,
    };
    infer_types(&[input], &|_| None).map(|mut v| v.remove(0))
}

/// On a thread with a small stack, so that a recursion as deep as the input would overflow.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn a_million_nested_operators_lets_and_ifs_are_typed_without_recursion() {
    on_small_stack(|| {
        let exp = Op::get("exp").unwrap();
        let f = deep(1_000_000, |b, e, i| match i % 3 {
            0 => b.call_op(exp, &[e], Attrs::new()),
            1 => {
                let v = b.var(&format!("v{i}"), None, None);
                let u = b.use_var(v);
                b.lets(&[(v, e)], u)
            }
            _ => {
                let c = b.constant(std::sync::Arc::new(crate::Tensor::scalar(DType::Bool, 1.0)));
                b.if_(c, e, e)
            }
        });
        let types = infer_one(&f).unwrap();
        assert_eq!(types.of(f.root).to_string(), "float32");
        assert_eq!(types.function_type().to_string(), "fn (float32) -> float32");
    });
}

#[test]
fn types_nested_past_the_limit_are_a_type_error_not_a_crash() {
    on_small_stack(|| {
        // A tuple nested a hundred thousand deep, of known and of unknown fields.
        for annotated in [true, false] {
            let mut b = BodyBuilder::new();
            let ty = annotated.then(|| Type::scalar(DType::Float32));
            let x = b.var("x", ty, None);
            let mut e = b.use_var(x);
            for _ in 0..100_000 {
                e = b.tuple(&[e]);
            }
            let f = ArenaFunction {
                body: b.finish(),
                params: vec![x],
                root: e,
            };
            let err = infer_one(&f).expect_err("too deep");
            assert!(err.message().contains("nests deeper than 256"), "{err}");
        }
        // Closures returning closures, a hundred thousand deep.
        let mut b = BodyBuilder::new();
        let x = b.var("x", Some(Type::scalar(DType::Float32)), None);
        let mut e = b.use_var(x);
        for _ in 0..100_000 {
            e = b.closure(ClosureData {
                params: vec![],
                ret_type: None,
                attrs: Attrs::new(),
                body: e,
            });
        }
        let f = ArenaFunction {
            body: b.finish(),
            params: vec![x],
            root: e,
        };
        let err = infer_one(&f).expect_err("too deep");
        assert!(err.message().contains("nests deeper than 256"), "{err}");
        // Right at the limit is fine: the function's type is one level deeper than its result.
        let f = deep(MAX_TYPE_DEPTH - 1, |b, e, _| b.tuple(&[e]));
        assert!(infer_one(&f).is_ok());
    });
}

#[test]
fn a_typer_sharing_a_functions_types_seeds_rebuilt_nodes_with_their_old_types() {
    // `exp(x)` typed; a rewrite rebuilds it as `exp(x)` and adds `shape_of` on top.
    let f = deep(1, |b, e, _| {
        b.call_op(Op::get("exp").unwrap(), &[e], Attrs::new())
    });
    let types = infer_one(&f).unwrap();
    let mut typer = LocalTyper::sharing(&types);
    let mut b = BodyBuilder::for_rewrite_of(&f.body);
    let x = f.params[0];
    typer.var_from(&types, x);
    let v = b.use_var(x);
    let e = b.call_op(Op::get("exp").unwrap(), &[v], Attrs::new());
    let root = OldBody::of(&f.body).at(f.root);
    typer.seed_from(&types, root, e);
    assert_eq!(typer.of(b.body(), e), Some(types.of(f.root)));
    // A type the shared table lacks is interned in the typer's own copy; the shared
    // table is untouched.
    let before = types.table().len();
    let t = b.call_op(Op::get("shape_of").unwrap(), &[e], Attrs::new());
    assert_eq!(
        typer.of(b.body(), t).map(ToString::to_string).as_deref(),
        Some("Tensor[(0), int32]")
    );
    assert_eq!(types.table().len(), before);
    // A typer not made from these types interns what it is seeded with.
    let mut other = LocalTyper::new();
    other.seed_from(&types, root, e);
    assert_eq!(other.of(b.body(), e), Some(types.of(f.root)));
}

#[test]
fn local_types_follow_blocks_ifs_annotated_closures_and_their_calls() {
    let m = crate::Module::parse(
        "def @main(%x: Tensor[(2, 3), float32], %c: bool) {
           let %f = fn (%y: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] { exp(%y) };
           let %u = %f(%x);
           let %k = if (%c) { %u } else { negative(%x) };
           transpose(%k)
         }",
    )
    .unwrap();
    let f = &m.get("main").unwrap().code;
    let b = &f.body;
    let types = local_types(b);
    let text = |e: ExprId| types.of(e).map(ToString::to_string);
    let find = |pred: &dyn Fn(&Node) -> bool| b.ids().find(|&e| pred(b.node(e))).unwrap();
    let call = find(&|n| matches!(n, Node::Call { .. }));
    let if_ = find(&|n| matches!(n, Node::If(..)));
    let closure = find(&|n| matches!(n, Node::Closure(_)));
    assert_eq!(text(call).as_deref(), Some("Tensor[(2, 3), float32]"));
    assert_eq!(text(if_).as_deref(), Some("Tensor[(2, 3), float32]"));
    assert!(matches!(types.of(closure), Some(Type::Func(_))));
    // The block's result, through all of them: a transpose of the if.
    assert_eq!(text(f.root).as_deref(), Some("Tensor[(3, 2), float32]"));
    // Branches that disagree give the if no type.
    let m = crate::Module::parse(
        "def @main(%x: Tensor[(2, 3), float32], %c: bool) { if (%c) { %x } else { transpose(%x) } }",
    )
    .unwrap();
    let f = &m.get("main").unwrap().code;
    assert!(local_types(&f.body).of(f.root).is_none());
}
