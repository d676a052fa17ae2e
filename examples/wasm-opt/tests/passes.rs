//! The example's passes on the corpus (`data/corpus.wat`): each pipeline writes valid
//! WebAssembly (wasmparser's validator) whose exports compute what the input's did (run with
//! wasmi), with fewer instructions; each pass does what its description says.

use std::sync::Arc;

use irpass::{FunctionPass, IrModule, Pass, PassContext, PassInfo, PassKind, registry};
use irpass_wasm_opt::check::compare;
use irpass_wasm_opt::passes::{
    DeadFunctions, FoldConstants, KEEP_FUNCTIONS, LocalCse, StrengthReduce, Vacuum,
};
use irpass_wasm_opt::{Body, Wasm, pipelines};

const CORPUS: &str = include_str!("data/corpus.wat");

fn corpus() -> Wasm {
    irpass_wasm_opt::parse(CORPUS).expect("the corpus parses")
}

/// Instructions in the module's function bodies, counted in its binary form.
fn instructions(bytes: &[u8]) -> usize {
    let mut count = 0;
    for payload in wasmparser::Parser::new(0).parse_all(bytes) {
        if let Ok(wasmparser::Payload::CodeSectionEntry(body)) = payload {
            let ops = body.get_operators_reader().expect("a body");
            count += ops
                .into_iter()
                .filter(|op| !matches!(op, Ok(wasmparser::Operator::End)))
                .count();
        }
    }
    count
}

fn function_names(m: &Wasm) -> Vec<String> {
    m.functions().map(|(k, _)| k.to_string()).collect()
}

/// The exports' outcomes must be equal wherever both ran to the end.
fn assert_same_results(before: &[u8], after: &[u8]) {
    let agreement = compare(before, after, 48).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        agreement.compared > 400,
        "only {} calls compared",
        agreement.compared
    );
}

#[test]
fn every_pipeline_writes_valid_wasm_that_computes_the_same_with_fewer_instructions() {
    let input = corpus();
    let original = input.write().unwrap();
    let mut counts = Vec::new();
    for n in 0..=3 {
        let out = Pass::from(pipelines::pipeline(n))
            .run(input.clone())
            .unwrap();
        let bytes = out.write().unwrap();
        wasmparser::Validator::new()
            .validate_all(&bytes)
            .unwrap_or_else(|e| panic!("O{n}: {e}"));
        assert!(out.verify().is_ok());
        assert_same_results(&original, &bytes);
        counts.push(instructions(&bytes));
    }
    let before = instructions(&original);
    assert_eq!(counts[0], before, "O0 runs nothing");
    assert!(
        counts[1] < before && counts[2] < counts[1] && counts[3] <= counts[2],
        "{before} then {counts:?}"
    );
}

#[test]
fn folding_evaluates_constant_operators_and_leaves_what_traps() {
    let out = Pass::from(FoldConstants).run(corpus()).unwrap().to_string();
    assert!(out.contains("i32.const 5\n"), "2 + 3");
    assert!(out.contains("i32.const 10\n"), "(1 << 4) - 6");
    assert!(
        out.contains("i64.const 12884901888\n"),
        "0x100000000 * 3 at 64 bits"
    );
    assert!(out.contains("i32.div_u"), "1 / 0 traps: left to trap");
}

#[test]
fn strength_reduction_uses_shifts_and_masks_and_its_options_keep_operators() {
    let out = Pass::from(StrengthReduce::default())
        .run(corpus())
        .unwrap()
        .to_string();
    for (gone, new) in [
        ("i32.mul", "i32.shl"),
        ("i32.div_u", "i32.shr_u"),
        ("i32.rem_u", "i32.and"),
        ("i64.mul", "i64.shl"),
    ] {
        assert!(out.contains(new), "{new}");
        assert!(
            !function_text(&out, "strength").contains(gone),
            "{gone} left in `strength`"
        );
    }
    assert!(
        function_text(&out, "signed_kept").contains("i32.div_s"),
        "signed division is not a shift"
    );
    let keep_mul = registry::lookup_with_options::<Wasm>(
        "StrengthReduce",
        &serde_json::json!({"keep_mul": true}),
    )
    .unwrap();
    let kept = keep_mul.run(corpus()).unwrap().to_string();
    assert!(function_text(&kept, "strength").contains("i32.mul"));
    assert!(!function_text(&kept, "strength").contains("i32.div_u"));
}

/// The body of the exported function `name` in printed text.
fn function_text(text: &str, name: &str) -> String {
    let index = text
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix(&format!("(export \"{name}\" (func "))?
                .strip_suffix("))")
                .map(str::to_string)
        })
        .unwrap_or_else(|| panic!("no export {name}"));
    let header = if index.starts_with('$') {
        format!("(func {index} ")
    } else {
        format!("(;{index};)")
    };
    let start = text
        .lines()
        .position(|l| l.trim_start().starts_with("(func ") && l.contains(&header))
        .unwrap();
    text.lines()
        .skip(start + 1)
        .take_while(|l| l.trim() != ")")
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn vacuum_removes_dropped_values_without_effects() {
    let out = Pass::from(Vacuum).run(corpus()).unwrap().to_string();
    assert!(!function_text(&out, "vacuum").contains("drop"));
    assert_eq!(function_text(&out, "vacuum").trim(), "local.get 0");
}

#[test]
fn dead_functions_keeps_what_is_reachable_and_what_the_config_names() {
    let out = Pass::from(DeadFunctions).run(corpus()).unwrap();
    let names = function_names(&out);
    for kept in ["init", "via_table", "via_global", "helper", "folds"] {
        assert!(names.iter().any(|n| n == kept), "{kept} kept: {names:?}");
    }
    for dead in ["dead_a", "dead_b", "kept_by_config"] {
        assert!(!names.iter().any(|n| n == dead), "{dead} removed");
    }
    assert_eq!(
        out.declarations()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["tick"],
        "imports stay"
    );
    let ctx = PassContext::builder()
        .config(&KEEP_FUNCTIONS, vec!["kept_by_config".to_string()])
        .build()
        .unwrap();
    let kept = ctx
        .scope(|| Pass::from(DeadFunctions).run(corpus()))
        .unwrap()
        .unwrap();
    assert!(function_names(&kept).iter().any(|n| n == "kept_by_config"));
    assert!(!function_names(&kept).iter().any(|n| n == "dead_a"));
    assert_same_results(&corpus().write().unwrap(), &out.write().unwrap());
}

#[test]
fn an_older_module_value_is_still_written_whole_after_functions_are_dropped() {
    let input = corpus();
    let out = Pass::from(DeadFunctions).run(input.clone()).unwrap();
    let (old, new) = (input.write().unwrap(), out.write().unwrap());
    let old_again = irpass_wasm_opt::read(&old).unwrap();
    assert_eq!(old_again.function_count(), input.function_count());
    assert_eq!(
        irpass_wasm_opt::read(&new).unwrap().function_count(),
        input.function_count() - 3
    );
    wasmparser::Validator::new().validate_all(&old).unwrap();
}

#[test]
fn local_cse_adds_locals_through_module_edits_the_same_at_any_thread_count() {
    let run = |threads: usize| {
        let ctx = PassContext::builder().threads(threads).build().unwrap();
        ctx.scope(|| Pass::from(LocalCse).run(corpus()))
            .unwrap()
            .unwrap()
    };
    let (one, two) = (run(1), run(2));
    assert_eq!(one.to_string(), two.to_string());
    let text = one.to_string();
    let square = function_text(&text, "square");
    assert!(
        square.contains("(local i32)") && square.contains("local.tee 1"),
        "{square}"
    );
    assert!(function_text(&text, "square64").contains("(local i64)"));
    assert!(instructions(&one.write().unwrap()) < instructions(&corpus().write().unwrap()));
    assert_same_results(&corpus().write().unwrap(), &one.write().unwrap());
}

/// Fails on the function with the most sequences (`nested`).
struct FailOnLoops(PassInfo);

impl FunctionPass<Wasm> for FailOnLoops {
    fn info(&self) -> &PassInfo {
        &self.0
    }
    fn transform_function(
        &self,
        f: Arc<Body>,
        _: &Wasm,
        _: &PassContext,
    ) -> irpass::Result<Arc<Body>> {
        if f.seqs.len() > 3 {
            return Err("loops are not handled".into());
        }
        Ok(f)
    }
}

#[test]
fn functions_are_keyed_by_walrus_ids_and_a_failing_pass_names_its_function() {
    let m = corpus();
    let keys: Vec<_> = m.functions().map(|(k, _)| k.clone()).collect();
    assert!(keys.windows(2).all(|w| w[0].index < w[1].index));
    assert_eq!(keys.iter().filter(|k| k.to_string() == "folds").count(), 1);
    let unnamed = keys
        .iter()
        .find(|k| k.to_string().starts_with('#'))
        .expect("unnamed functions print their index");
    assert_eq!(unnamed.to_string(), format!("#{}", unnamed.index));
    let fail = Pass::function(FailOnLoops(PassInfo::new(
        "FailOnLoops",
        0,
        PassKind::Function,
    )));
    let err = fail.run(m.clone()).unwrap_err();
    let nested = keys
        .iter()
        .find(|k| {
            m.shell()
                .exports
                .get_exported_func(k.id)
                .is_some_and(|e| e.name == "nested")
        })
        .unwrap();
    assert!(err.to_string().contains(&nested.to_string()), "{err}");
    assert!(
        err.module().same_as(&m),
        "the module the pass was given is kept"
    );
}

#[test]
fn the_registry_sees_the_example_passes_and_pipelines() {
    for name in [
        "FoldConstants",
        "Vacuum",
        "StrengthReduce",
        "DeadFunctions",
        "LocalCse",
        "O0",
        "O1",
        "O2",
        "O3",
    ] {
        assert!(registry::lookup::<Wasm>(name).is_ok(), "{name}");
    }
    let text = irpass::pipeline::parse(
        "fixpoint<4>(FoldConstants,StrengthReduce{keep_div=true}),DeadFunctions",
    )
    .unwrap()
    .build::<Wasm>()
    .unwrap();
    let out = text.run(corpus()).unwrap();
    assert!(out.verify().is_ok());
}
