//! Well-formedness: scopes, double bindings, free variables and missing globals are reported
//! with the function's name; every model is well formed; deep input is checked without recursion.

use irpass_ir::body::{ArenaFunction, BodyBuilder, ClosureData, ExprId, VarId};
use irpass_ir::{Attrs, DType, Function, Module, Op, Type};

fn module(build: impl FnOnce(&mut BodyBuilder, VarId) -> ExprId) -> Module {
    let mut b = BodyBuilder::new();
    let x = b.var("x", Some(Type::scalar(DType::Float32)), None);
    let root = build(&mut b, x);
    let code = ArenaFunction {
        body: b.finish(),
        params: vec![x],
        root,
    };
    Module::from_functions([("main", Function::new(code, None, Attrs::new(), None))])
}

fn message(m: &Module) -> String {
    m.check_well_formed()
        .map(|()| String::new())
        .unwrap_or_else(|e| e.message().to_string())
}

#[test]
fn every_model_and_every_parsed_closure_is_well_formed() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/models");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "relay") {
            let m = Module::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
            m.check_well_formed()
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            m.verify().unwrap();
        }
    }
}

#[test]
fn a_variable_used_outside_its_scope_bound_twice_or_free_and_a_missing_global_are_reported() {
    let exp = Op::get("exp").unwrap();
    // `let %y = exp(%x); %y` used again after the block.
    let m = module(|b, x| {
        let y = b.var("y", None, None);
        let xe = b.use_var(x);
        let v = b.call_op(exp, &[xe], Attrs::new());
        let ye = b.use_var(y);
        let block = b.lets(&[(y, v)], ye);
        b.tuple(&[block, ye])
    });
    assert!(message(&m).contains("`%y` is used outside the scope of its binding in `@main`"));
    // The same variable bound by two blocks.
    let m = module(|b, x| {
        let y = b.var("y", None, None);
        let xe = b.use_var(x);
        let ye = b.use_var(y);
        let one = b.lets(&[(y, xe)], ye);
        let v = b.call_op(exp, &[xe], Attrs::new());
        let two = b.lets(&[(y, v)], ye);
        b.tuple(&[one, two])
    });
    assert!(
        message(&m).contains("`%y` is bound twice"),
        "{}",
        message(&m)
    );
    // A variable nothing binds, and a closure parameter used outside the closure.
    let m = module(|b, _| {
        let z = b.var("z", None, None);
        b.use_var(z)
    });
    assert!(message(&m).contains("`%z` is not bound (a free variable)"));
    let m = module(|b, _| {
        let p = b.var("p", None, None);
        let pe = b.use_var(p);
        let c = b.closure(ClosureData {
            params: vec![p],
            ret_type: None,
            attrs: Attrs::new(),
            body: pe,
        });
        b.tuple(&[c, pe])
    });
    assert!(
        message(&m).contains("`%p` is used outside the scope"),
        "{}",
        message(&m)
    );
    let m = module(|b, _| b.global("missing"));
    assert!(message(&m).contains("`@missing` is not defined in the module"));
}

#[test]
fn a_million_nested_blocks_are_checked_without_recursion() {
    let m = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let m = module(|b, x| {
                let mut e = b.use_var(x);
                for i in 0..1_000_000 {
                    let v = b.var(&format!("v{i}"), None, None);
                    let ve = b.use_var(v);
                    e = b.lets(&[(v, e)], ve);
                }
                e
            });
            message(&m)
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(m, "");
}
