//! Semantic preservation: every pass and every pipeline leaves the values `@main` computes
//! unchanged (up to float rounding), on every model of `examples/models/` and on random
//! well-typed programs (`irpass_passes::ir::random`).

mod support;

use irpass::{Pass, PassContext, registry};
use irpass_passes as _;
use irpass_passes::ir::{Module, eval_function, random};
use proptest::prelude::*;
use support::{MODELS, close, inputs, model, registered_passes};

fn passes() -> Vec<String> {
    registered_passes()
}

fn pass(name: &str) -> Pass<Module> {
    registry::lookup::<Module>(name).unwrap_or_else(|e| panic!("{e}"))
}

fn optimise(name: &str, m: &Module) -> Module {
    let ctx = PassContext::builder().opt_level(3).build().unwrap();
    pass(name)
        .run_in(m.clone(), &ctx)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn every_pass_and_pipeline_preserves_every_models_outputs() {
    for name in MODELS {
        let m = model(name);
        let args = inputs(&m, 7);
        let expected = eval_function(&m, "main", args.clone()).unwrap();
        for p in &passes() {
            let out = optimise(p, &m);
            // From scratch: the types recorded by the incremental inferences inside the
            // pipeline must be the ones a full inference finds.
            out.check_types()
                .unwrap_or_else(|e| panic!("{p} on {name} gives an ill-typed module: {e}\n{out}"));
            let got = eval_function(&out, "main", args.clone())
                .unwrap_or_else(|e| panic!("{p} on {name}: {e}"));
            assert!(close(&got, &expected), "{p} changed the outputs of {name}");
        }
    }
}

#[test]
fn o3_really_optimises_the_models() {
    // Not a vacuous check: on the ResNet block, O3 removes batch norm and bias adds altogether.
    let out = optimise("O3", &model("resnet_block"));
    let text = out.to_string();
    assert!(!text.contains("nn.batch_norm"), "{text}");
    let out = optimise("O3", &model("mlp"));
    assert!(!out.to_string().contains("nn.bias_add"), "{out}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_pass_preserves_random_programs(choices in proptest::collection::vec(any::<u32>(), 0..90), seed in 1u64..1000) {
        let m = random::program(&choices);
        let args = random::inputs(&m, seed);
        let expected = eval_function(&m, "main", args.clone()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        for p in &passes() {
            let out = optimise(p, &m);
            let typed = out.check_types();
            prop_assert!(typed.is_ok(), "{} gives an ill-typed module: {:?}\n{}", p, typed.err(), out);
            let got = eval_function(&out, "main", args.clone()).map_err(|e| TestCaseError::fail(format!("{p}: {e}")))?;
            prop_assert!(close(&got, &expected), "{} changed the outputs\nbefore:\n{}\nafter:\n{}", p, m, out);
        }
    }
}
