//! A downstream crate's view: it depends on `irpass-passes` through Cargo, names it with
//! `use irpass_passes as _;` (without that line the linker drops the crate and its
//! registrations), and finds every pass in the registry.
//!
//! Run: `cargo run -p irpass-examples --example downstream_registry`

use irpass::registry;
use irpass_passes as _;
use irpass_passes::ir::Module;

fn main() {
    let passes = registry::passes::<Module>();
    for reg in &passes {
        println!(
            "{:<24} {:<10} {}",
            reg.info.name,
            format!("opt {}", reg.info.opt_level),
            reg.info.summary()
        );
    }
    for wanted in [
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
    ] {
        assert!(
            passes.iter().any(|r| r.info.name == wanted),
            "{wanted} is not registered"
        );
    }
    println!("{} passes registered for the reference IR", passes.len());
}
