//! The pass library's registrations are seen by code that names the crate.

use irpass::registry;
use irpass_passes as _;
use irpass_passes::ir::Module;

/// The pass library's own registrations (by where they are defined), for the reference IR.
fn library_passes() -> Vec<&'static registry::PassRegistration> {
    registry::passes::<Module>()
        .into_iter()
        .filter(|r| r.location.module_path.starts_with("irpass_passes"))
        .collect()
}

#[test]
fn every_pass_and_pipeline_is_registered_for_the_reference_ir_with_a_description() {
    let ours = library_passes();
    // What the library runs and exports is registered: every pass of the standard list, the
    // pipelines O0..O3, FoldScaleAxis, and the passes no pipeline runs.
    let mut expected: Vec<String> = irpass_passes::standard_passes()
        .iter()
        .map(|p| p.info().name.to_string())
        .collect();
    expected.extend((0..=3).map(|n| format!("O{n}")));
    for name in [
        "FoldScaleAxis",
        "BackwardFoldScaleAxis",
        "ForwardFoldScaleAxis",
        "InferType",
        "ToANormalForm",
        "ToGraphNormalForm",
        "LambdaLift",
        "ConvertLayout",
        "PrintIR",
    ] {
        expected.push(name.to_string());
    }
    expected.sort();
    expected.dedup();
    for name in &expected {
        assert!(
            ours.iter().any(|r| r.info.name == name.as_str()),
            "{name} is not registered by the pass library"
        );
    }
    // Every registration of the library, whatever the list above says: described, and built
    // by name (with its default options where it takes options).
    assert!(
        ours.len() >= expected.len() - 1,
        "{} registrations",
        ours.len()
    );
    for reg in &ours {
        let name = reg.info.name.as_ref();
        assert!(
            !reg.info.description.is_empty(),
            "{name} has no description"
        );
        assert!(
            registry::lookup::<Module>(name).is_ok()
                || registry::lookup_with_options::<Module>(name, &serde_json::json!({})).is_ok(),
            "{name} cannot be built by name"
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
        assert!(library_passes().iter().any(|r| r.info.name == pass));
    }
}
