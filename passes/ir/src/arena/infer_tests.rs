//! Type inference on bodies: the same types and the same errors as the `Expr` type checker on
//! every model, on random programs and on ill-typed ones; input nested far deeper than any
//! stack.

use rustc_hash::FxHashMap;

use super::*;
use crate::error::IrError;
use crate::module::Module;
use crate::visit::post_order;
use crate::{Attrs, DType, Op, Type};

struct Typed {
    name: String,
    arena: ArenaFunction,
    nodes: FxHashMap<usize, ExprId>,
    vars: FxHashMap<u64, VarId>,
}

/// Every function of `m` as an arena, typed together by [`infer_types`].
fn arena_types(m: &Module) -> Result<(Vec<Typed>, Vec<BodyTypes>), IrError> {
    let typed: Vec<Typed> = m
        .iter()
        .map(|(name, f)| {
            let (arena, nodes, vars) = ArenaFunction::from_function_mapped(f);
            Typed {
                name: name.to_string(),
                arena,
                nodes,
                vars,
            }
        })
        .collect();
    let inputs: Vec<FunctionInput<'_>> = typed
        .iter()
        .map(|t| {
            let f = m.get(&t.name).unwrap();
            FunctionInput {
                name: &t.name,
                body: &t.arena.body,
                params: &t.arena.params,
                root: t.arena.root,
                ret_type: f.ret_type.as_ref(),
                span: f.span,
            }
        })
        .collect();
    let types = infer_types(&inputs, &|_| None)?;
    drop(inputs);
    Ok((typed, types))
}

/// Types `text` both ways and checks that every node, variable and function got the same type.
fn same_types_as_the_expr_checker(m: &Module) -> Result<(), String> {
    m.infer_types()
        .map_err(|e| format!("the Expr checker: {e}"))?;
    let (typed, types) = arena_types(m).map_err(|e| format!("infer_types: {e}"))?;
    for (t, types) in typed.iter().zip(&types) {
        let f = m.get(&t.name).unwrap();
        let want = f.checked_type().unwrap();
        if types.function_type() != want {
            return Err(format!(
                "@{}: function type {} vs {want}",
                t.name,
                types.function_type()
            ));
        }
        let mut bad = None;
        post_order(&f.body, &mut |e| {
            let id = match e.as_var() {
                Some(v) => t.arena.body.var_node(t.vars[&v.id()]).unwrap(),
                None => t.nodes[&e.addr()],
            };
            let want = e.checked_type().unwrap();
            if bad.is_none() && types.of(id) != want {
                bad = Some(format!("@{}: `{e}` is {} vs {want}", t.name, types.of(id)));
            }
            if let Some(v) = e.as_var() {
                let vt = types.var(t.vars[&v.id()]);
                if bad.is_none() && Some(vt) != v.checked_type() {
                    bad = Some(format!(
                        "@{}: %{} is {vt} vs {:?}",
                        t.name,
                        v.name,
                        v.checked_type()
                    ));
                }
            }
        });
        if let Some(bad) = bad {
            return Err(bad);
        }
    }
    Ok(())
}

fn models() -> Vec<(std::path::PathBuf, String)> {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/models");
    let mut out: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "relay"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect();
    out.sort();
    assert!(out.len() >= 5);
    out
}

#[test]
fn every_model_gets_the_types_the_expr_checker_gives() {
    for (path, text) in models() {
        let m = Module::parse(&text).unwrap();
        same_types_as_the_expr_checker(&m).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

#[test]
fn closures_globals_recursion_and_unknowns_get_the_types_the_expr_checker_gives() {
    let programs = [
        "def @main(%x: Tensor[(3), float32]) { let %f = fn (%y) { exp(%y) }; let %g = fn (%a, %b) { (%a, %b) }; %g(%f(%x), 1) }",
        "def @f(%x) { %x }\ndef @main(%y: float32) { @f(%y) }",
        "def @even(%n: int32) -> bool { if (equal(%n, 0)) { True } else { @odd(subtract(%n, 1)) } }\n\
         def @odd(%n: int32) -> bool { if (equal(%n, 0)) { False } else { @even(subtract(%n, 1)) } }\n\
         def @main() { @even(4) }",
        "def @main(%x: float32) { let %loop: fn (int32, float32) -> float32 = fn (%i: int32, %acc: float32) -> float32 { if (less(%i, 3)) { %loop(add(%i, 1), multiply(%acc, %x)) } else { %acc } }; %loop(0, 1f) }",
        "def @main(%x: Tensor[(?, 4), float32], %w: Tensor[(8, 4), float32]) { nn.dense(%x, %w) }",
        "def @main(%t: (Tensor[(2), float32], _)) { let %u = (%t.0, %t.0); %u.1 }",
        "def @main(%x: Tensor[(2, 3), float32]) { let %y = transpose(%x); let %t = (%y, %x); (%t.1, %t.0) }",
        "def @main(%x: Tensor[(4), float32]) { let %s = split(%x, indices_or_sections=2); (%s.0, %s.1) }",
        "def @main(%x: float32) { let %f = fn (%a) { %a }; (%f(%x), %f) }",
        "def @id(%x) { %x }",
    ];
    for text in programs {
        let m = Module::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        same_types_as_the_expr_checker(&m).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, failure_persistence: None, ..Default::default() })]

    #[test]
    fn random_programs_get_the_types_the_expr_checker_gives(
        choices in proptest::collection::vec(proptest::prelude::any::<u32>(), 64..256)
    ) {
        let m = crate::random::expr_program(&choices);
        let text = m.to_string();
        let m = Module::parse(&text).unwrap();
        if let Err(e) = same_types_as_the_expr_checker(&m) {
            proptest::prop_assert!(false, "{}\n{}", e, text);
        }
    }
}

/// Ill-typed programs: each problem of the `Expr` checker, and one more per kind of mistake.
const ILL_TYPED: &[&str] = &[
    "def @main(%x: Tensor[(2), float32]) -> Tensor[(3), float32] {\n  exp(%x)\n}",
    "def @main(%c: float32, %x: float32) {\n  if (%c) { %x } else { %x }\n}",
    "def @main(%c: bool, %x: float32) {\n  if (%c) { %x } else { 1 }\n}",
    "def @main(%x: float32) {\n  let %y: int32 = %x;\n  %y\n}",
    "def @f(%x: float32) -> float32 { %x }\ndef @main() {\n  @f(1, 2)\n}",
    "def @f(%x: float32) -> float32 { %x }\ndef @main() {\n  @f(1)\n}",
    "def @main(%x: float32) {\n  %x(1f)\n}",
    "def @main(%t: (float32, float32)) {\n  %t.2\n}",
    "def @main(%x: float32) {\n  %x.0\n}",
    "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(3, 2), float32]) {\n  %0 = add(%x, %x);\n  add(%0, %y)\n}",
    "def @main() {\n  @missing(1f)\n}",
    "def @main() {\n  let %f = fn (%a) { exp(%a) };\n  1f\n}",
    "def @a(%x: float32) -> int32 { %x }\ndef @b(%x: int32) -> float32 { %x }",
    "def @main(%x: float32) { let %f = fn (%a) -> int32 { %a }; %f(%x) }",
    "def @main(%x: (float32, int32)) -> (float32, float32) { %x }",
    "def @main(%x: float32) { let %f = fn (%a: float32) { %a }; %f(%x, %x) }",
    "def @main(%x: float32) { let %f = fn (%a) { %a(%a) }; %f }",
    "def @main(%x: Tensor[(2), float32]) { (add(%x, 1i64), add(%x, 1i64)) }",
];

#[test]
fn ill_typed_programs_get_the_problems_the_expr_checker_reports_at_the_same_places() {
    for text in ILL_TYPED {
        let m = Module::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let old = m.infer_types().expect_err(text);
        let new = arena_types(&m).map(|_| ()).expect_err(text);
        let show = |e: &IrError| {
            e.problems
                .iter()
                .map(|p| (p.message.clone(), p.span.map(|s| (s.start, s.end))))
                .collect::<Vec<_>>()
        };
        assert_eq!(show(&new), show(&old), "{text}");
    }
}

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
