//! The Cranelift example: the passes keep what every function computes (run before and after
//! with Cranelift's interpreter), Cranelift's verifier accepts the result, and there are fewer
//! instructions.

use cranelift_codegen::data_value::DataValue;
use cranelift_interpreter::environment::FunctionStore;
use cranelift_interpreter::interpreter::{Interpreter, InterpreterState};
use cranelift_interpreter::step::ControlFlow;
use irpass::{IrModule, Pass, Sequential, registry};
use irpass_clif_opt::{Clif, DeadCode, FoldConstants};

const CORPUS: &str = "
function %chain(i32) -> i32 {
block0(v0: i32):
    v1 = iconst.i32 2
    v2 = iconst.i32 3
    v3 = iadd v1, v2
    v4 = imul v3, v3
    v5 = iadd v0, v4
    v6 = isub v5, v5
    v7 = imul v0, v0
    return v5
}

function %narrow(i8) -> i8 {
block0(v0: i8):
    v1 = iconst.i8 200
    v2 = iconst.i8 100
    v3 = iadd v1, v2
    v4 = bxor v0, v3
    return v4
}

function %wide(i64) -> i64 {
block0(v0: i64):
    v1 = iconst.i64 -1
    v2 = iconst.i64 0x7fff_ffff_ffff_ffff
    v3 = band v1, v2
    v4 = bor v0, v3
    return v4
}

function %loop(i32) -> i32 {
block0(v0: i32):
    v1 = iconst.i32 0
    jump block1(v0, v1)

block1(v2: i32, v3: i32):
    v4 = iconst.i32 1
    v5 = iconst.i32 1
    v6 = iadd v4, v5
    v7 = iadd v3, v6
    v8 = isub v2, v4
    v9 = imul v8, v8
    brif v8, block1(v8, v7), block2(v7)

block2(v10: i32):
    return v10
}

function %effects(i64) -> i32 {
    ss0 = explicit_slot 8
block0(v0: i64):
    v1 = iconst.i32 7
    v2 = iconst.i32 9
    v3 = imul v1, v2
    stack_store v3, ss0
    v4 = stack_load.i32 ss0
    v5 = stack_load.i32 ss0
    v6 = udiv v4, v4
    return v4
}
";

fn instructions(m: &Clif) -> usize {
    m.functions()
        .map(|(_, f)| {
            f.layout
                .blocks()
                .map(|b| f.layout.block_insts(b).count())
                .sum::<usize>()
        })
        .sum()
}

/// Every function's results (or trap) on each argument.
fn run(m: &Clif, args: &[i64]) -> Vec<String> {
    let mut store = FunctionStore::default();
    for (name, f) in m.functions() {
        store.add(format!("%{name}"), f);
    }
    let mut out = Vec::new();
    for (name, f) in m.functions() {
        let ty = f.signature.params[0].value_type;
        for &a in args {
            let arg = DataValue::from_integer(i128::from(a), ty).unwrap();
            let state = InterpreterState::default().with_function_store(store.clone());
            let mut interpreter = Interpreter::new(state).with_fuel(Some(100_000));
            let result = match interpreter.call_by_name(&format!("%{name}"), &[arg]) {
                Ok(ControlFlow::Return(values)) => format!("{values:?}"),
                Ok(ControlFlow::Trap(trap)) => format!("trap: {trap}"),
                Ok(_) => "unexpected control flow".to_string(),
                Err(e) => format!("error: {e}"),
            };
            out.push(format!("%{name}({a}) = {result}"));
        }
    }
    out
}

const ARGS: &[i64] = &[0, 1, 2, 7, 100, -1, -128, 127, 1 << 20];

#[test]
fn folding_and_dead_code_keep_every_result_and_the_verifier_accepts_them() {
    let input = Clif::parse(CORPUS).unwrap();
    assert!(input.verify().is_ok());
    let pipeline = Sequential::new([FoldConstants.into(), DeadCode.into()]).unwrap();
    let out = Pass::from(pipeline).run(input.clone()).unwrap();
    assert!(out.verify().is_ok(), "{:?}", out.verify());
    let (before, after) = (run(&input, ARGS), run(&out, ARGS));
    let stopped = |o: &String| o.ends_with("error: fuel exhausted");
    let other_errors =
        |o: &&String| !stopped(o) && (o.contains("error") || o.contains("unexpected"));
    assert!(
        !before.iter().chain(&after).any(|o| other_errors(&o)),
        "{before:#?}\n{after:#?}"
    );
    assert!(
        before.contains(&"%loop(100) = [I32(200)]".to_string()),
        "{before:#?}"
    );
    let mut compared = 0;
    for (b, a) in before.iter().zip(&after) {
        if !stopped(b) && !stopped(a) {
            assert_eq!(b, a);
            compared += 1;
        }
    }
    assert!(compared >= 40, "only {compared} calls compared");
    assert!(
        instructions(&out) < instructions(&input),
        "{} -> {}",
        instructions(&input),
        instructions(&out)
    );
}

#[test]
fn folding_wraps_at_the_operation_width() {
    let out = Pass::from(FoldConstants)
        .run(Clif::parse(CORPUS).unwrap())
        .unwrap()
        .to_string();
    assert!(
        out.contains("v3 = iconst.i8 44"),
        "200 + 100 in 8 bits:\n{out}"
    );
    assert!(
        out.contains("v3 = iconst.i64 0x7fff_ffff_ffff_ffff"),
        "{out}"
    );
    assert!(
        out.contains("v4 = iconst.i32 25"),
        "(2 + 3) * (2 + 3), chained:\n{out}"
    );
}

#[test]
fn dead_code_keeps_effects_and_removes_unused_pure_values() {
    let out = Pass::from(DeadCode)
        .run(Clif::parse(CORPUS).unwrap())
        .unwrap()
        .to_string();
    assert!(
        !out.contains("v6 = isub v5, v5") && !out.contains("v7 = imul v0, v0"),
        "{out}"
    );
    assert!(!out.contains("v9 = imul v8, v8"), "in a loop too");
    assert!(out.contains("stack_store v3, ss0"), "a store stays");
    assert!(
        out.contains("v5 = stack_load.i32 ss0"),
        "a load may trap: it stays"
    );
    assert!(
        out.contains("v6 = udiv v4, v4"),
        "a division may trap: it stays"
    );
}

#[test]
fn the_registry_sees_the_passes() {
    for name in ["FoldConstants", "DeadCode"] {
        assert!(registry::lookup::<Clif>(name).is_ok(), "{name}");
    }
}

#[test]
fn a_broken_function_fails_verification_naming_it() {
    let bad = "function %bad(i32) -> i32 {\nblock0(v0: i32):\n    v1 = iconst.i32 1\n    return v1, v1\n}";
    let m = Clif::parse(bad).unwrap();
    let err = m.verify().unwrap_err().to_string();
    assert!(err.contains("%bad"), "{err}");
}
