//! The passes ported to the arena give what the registered passes give: the same text (so the
//! same nodes, sharing included, and the same names), on every model, on the MLP chain, and on
//! random well-typed programs.

mod support;

use irpass::PassContext;
use irpass_passes as _;
use irpass_passes::DEFAULT_FOLD_MAX_ELEMENTS;
use irpass_passes::arena::{
    apply, canonicalize_ops, dead_code_elimination, eliminate_common_subexpr, fold_constant,
    simplify_inference, to_graph_normal_form,
};
use irpass_passes::ir::arena::ArenaFunction;
use irpass_passes::ir::{Module, models, random};
use proptest::prelude::*;
use support::{MODELS, model};

/// The registered pipeline `pipeline` on `m`.
fn registered(pipeline: &str, m: &Module) -> Module {
    let ctx = PassContext::builder().opt_level(3).build().unwrap();
    let spec = irpass::pipeline::parse(pipeline).unwrap_or_else(|e| panic!("{e}"));
    let pass = spec.build::<Module>().unwrap_or_else(|e| panic!("{e}"));
    pass.run_in(m.clone(), &ctx)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The arena port of each pass named in `passes`, in order, on every function of `m`.
fn ported(passes: &[&str], m: &Module) -> Module {
    let funcs = m.iter().map(|(name, f)| {
        let mut a = ArenaFunction::from_function(f);
        for p in passes {
            let out = match *p {
                "FoldConstant" => fold_constant(&a, DEFAULT_FOLD_MAX_ELEMENTS),
                "EliminateCommonSubexpr" => eliminate_common_subexpr(&a, false),
                "DeadCodeElimination" => dead_code_elimination(&a),
                "CanonicalizeOps" => canonicalize_ops(&a),
                "ToGraphNormalForm" => to_graph_normal_form(&a),
                "SimplifyInference" => simplify_inference(&a),
                other => panic!("{other} is not ported"),
            };
            a = apply(a, out);
        }
        (name.to_string(), a.to_function_like(f))
    });
    Module::from_functions(funcs.collect::<Vec<_>>())
}

const PIPELINES: [&[&str]; 8] = [
    &["FoldConstant"],
    &["EliminateCommonSubexpr"],
    &["DeadCodeElimination"],
    &[
        "FoldConstant",
        "EliminateCommonSubexpr",
        "DeadCodeElimination",
    ],
    &["CanonicalizeOps"],
    &["ToGraphNormalForm"],
    &["SimplifyInference"],
    &["SimplifyInference", "FoldConstant", "DeadCodeElimination"],
];

fn same_as_registered(what: &str, m: &Module) {
    for passes in PIPELINES {
        // The registered CSE requires InferType; the ports read no recorded type.
        let text = format!("InferType,{}", passes.join(","));
        let want = registered(&text, m).to_string();
        let got = ported(passes, m).to_string();
        assert_eq!(got, want, "{what}: {passes:?}");
    }
}

#[test]
fn the_ports_give_the_registered_passes_text_on_every_model() {
    for name in MODELS {
        same_as_registered(name, &model(name));
    }
}

#[test]
fn the_ports_give_the_registered_passes_text_on_the_mlp_chain() {
    let m = models::mlp_chain(30);
    same_as_registered("mlp_chain(30)", &m);
    let out = ported(PIPELINES[3], &m).to_string();
    assert_eq!(
        out.matches("let ").count(),
        4 * 30,
        "4 lets per layer are left"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn the_ports_give_the_registered_passes_text_on_random_programs(
        choices in proptest::collection::vec(any::<u32>(), 64..256)
    ) {
        let m = random::program(&choices);
        same_as_registered("random program", &m);
    }
}
