//! The pipeline the chain benchmarks measure, shared by `pipeline.rs` (timed) and
//! `chain_once.rs` (counted).

use irpass::{Pass, Sequential};
use irpass_passes::ir::Module;
use irpass_passes::{DeadCodeElimination, EliminateCommonSubexpr, FoldConstant};

/// `FoldConstant, EliminateCommonSubexpr, DeadCodeElimination` as one Sequential.
pub fn pipeline() -> Pass<Module> {
    Sequential::named(
        "fold_cse_dce",
        [
            Pass::from(FoldConstant::default()),
            EliminateCommonSubexpr::default().into(),
            DeadCodeElimination::default().into(),
        ],
    )
    .expect("a valid pipeline")
    .into()
}

/// Checks that the pipeline did its job on `mlp_chain(k)`: `b` folded, `t2` merged into `t1`,
/// the dead multiply removed, so 4 `let`s per layer are left (`h`, `t1`, `s`, `x'`).
pub fn assert_optimised(out: &Module, k: usize) {
    let lets = out.to_string().matches("let ").count();
    assert_eq!(lets, 4 * k, "K = {k}: 4 lets per layer are left");
}
