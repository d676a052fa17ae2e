//! The pass library's registrations are seen by code that names the crate.

use irpass::registry;
use irpass_passes as _;
use irpass_passes::ir::Module;

const PASSES: &[&str] = &[
    "InferType",
    "FoldConstant",
    "DeadCodeElimination",
    "EliminateCommonSubexpr",
    "SimplifyExpr",
    "SimplifyInference",
    "CanonicalizeOps",
    "ToANormalForm",
    "ToGraphNormalForm",
    "LambdaLift",
    "Inline",
    "RemoveUnusedFunctions",
    "FuseOps",
    "PrintIR",
    "O0",
    "O1",
    "O2",
    "O3",
];

#[test]
fn every_pass_and_pipeline_is_registered_for_the_reference_ir_with_a_description() {
    let registered = registry::passes::<Module>();
    for name in PASSES {
        let reg = registered
            .iter()
            .find(|r| r.info.name == *name)
            .unwrap_or_else(|| panic!("{name} is not registered"));
        assert!(
            !reg.info.description.is_empty(),
            "{name} has no description"
        );
        assert!(
            registry::lookup::<Module>(name).is_ok(),
            "{name} cannot be built"
        );
    }
    assert!(registry::check().is_ok(), "{:?}", registry::check());
}

#[test]
fn levels_follow_relay_and_types_are_an_analysis_not_a_requirement() {
    let info = |n: &str| registry::lookup::<Module>(n).unwrap().info().clone();
    assert_eq!(info("FoldConstant").opt_level, 2);
    assert_eq!(info("EliminateCommonSubexpr").opt_level, 3);
    assert_eq!(info("DeadCodeElimination").opt_level, 1);
    assert_eq!(info("CanonicalizeOps").opt_level, 3);
    // TVM's passes require `InferType`; these ask the context for the `Types` analysis.
    for reg in registry::passes::<Module>() {
        assert_eq!(
            reg.info.required_names().count(),
            0,
            "{} requires {:?}",
            reg.info.name,
            reg.info.required_names().collect::<Vec<_>>()
        );
    }
    assert!(
        irpass::analysis::registered()
            .iter()
            .any(|a| a.name == "Types"),
        "the Types analysis is registered"
    );
}

#[test]
fn the_standard_list_at_opt_level_n_is_the_pipeline_on() {
    use irpass::{PassContext, Sequential};
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/models/mlp.relay"
    ))
    .unwrap();
    let module = Module::parse(&text).unwrap();
    for n in 0..=3u32 {
        let ctx = PassContext::builder().opt_level(n).build().unwrap();
        let standard = Sequential::new(irpass_passes::standard_passes()).unwrap();
        let by_level = standard.run_in(module.clone(), &ctx).unwrap();
        let named = registry::lookup::<Module>(&format!("O{n}"))
            .unwrap()
            .run_in(module.clone(), &ctx)
            .unwrap();
        assert!(by_level.structurally_equal(&named), "O{n}");
    }
    // The levels differ: O3 folds the bias adds into adds (CanonicalizeOps), O0 does not.
    let run = |n: u32| {
        let ctx = PassContext::builder().opt_level(n).build().unwrap();
        registry::lookup::<Module>(&format!("O{n}"))
            .unwrap()
            .run_in(module.clone(), &ctx)
            .unwrap()
            .to_string()
    };
    assert!(run(0).contains("nn.bias_add") && !run(3).contains("nn.bias_add"));
}

#[test]
fn the_pass_librarys_statistics_are_registered_under_its_passes() {
    let stats: Vec<(&str, &str)> = irpass::stats::registered()
        .into_iter()
        .map(|s| (s.pass, s.description))
        .collect();
    for (pass, description) in [
        ("DeadCodeElimination", "unused bindings removed"),
        (
            "EliminateCommonSubexpr",
            "expressions merged with an equal earlier one",
        ),
        ("FoldConstant", "operator calls folded into constants"),
    ] {
        assert!(stats.contains(&(pass, description)), "{pass}: {stats:?}");
        assert!(PASSES.contains(&pass));
    }
}
