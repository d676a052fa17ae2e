//! The named pipelines `O0`..`O3`, registered like passes.

use irpass::{Pass, PassInfo, PassKind, Sequential};
use irpass_ir::Module;

use crate::*;

/// `FoldScaleAxis`: `BackwardFoldScaleAxis`, `ForwardFoldScaleAxis`, then `FoldConstant` to
/// compute the scaled weights, as one Sequential (opt level 3).
pub fn fold_scale_axis() -> Sequential<Module> {
    let info = PassInfo::new("FoldScaleAxis", 3, PassKind::Sequential)
        .with_description(FOLD_SCALE_AXIS_INFO.description.clone());
    Sequential::with_info(
        info,
        [
            Pass::from(BackwardFoldScaleAxis),
            ForwardFoldScaleAxis.into(),
            FoldConstant::default().into(),
        ],
    )
    .unwrap_or_else(|e| panic!("FoldScaleAxis does not build: {e}"))
}

static FOLD_SCALE_AXIS_INFO: PassInfo = PassInfo::new_static(
    "FoldScaleAxis",
    3,
    PassKind::Sequential,
    &[],
    "Folds constant per-channel scales into convolution and dense weights: BackwardFoldScaleAxis, ForwardFoldScaleAxis, then FoldConstant.",
);

irpass::register_pass!(Module, FOLD_SCALE_AXIS_INFO, fold_scale_axis);

/// The standard optimisation list, in order. A context at opt level `n` running it runs
/// exactly what `On` runs.
pub fn standard_passes() -> Vec<Pass<Module>> {
    vec![
        SimplifyInference.into(),
        Inline.into(),
        EliminateCommonSubexpr::default().into(),
        SimplifyExpr.into(),
        FoldConstant::default().into(),
        // Again, now that the folded scales and shifts are constants: a chain of them
        // (a batch norm followed by a scale layer) becomes one multiply and one add, which
        // FoldScaleAxis folds into the convolution before it.
        SimplifyExpr.into(),
        fold_scale_axis().into(),
        CanonicalizeOps.into(),
        CombineParallelDense::default().into(),
        SimplifyExpr.into(),
        FoldConstant::default().into(),
        FuseLayerNorm.into(),
        // After FuseLayerNorm, so that a projection reading a layer norm is seen reading one
        // (its reshape to rows merges with nothing) rather than elementwise work.
        FlattenMatMul.into(),
        SinkReshape.into(),
        SimplifyExpr.into(),
        DeadCodeElimination::default().into(),
        RemoveUnusedFunctions.into(),
        FuseOps::default().into(),
    ]
}

/// The pipeline `On`: the passes of [`standard_passes`] whose opt level is at most `n`, as a
/// Sequential named `On` (their requirements are resolved when it is built).
pub fn pipeline(n: u32) -> Sequential<Module> {
    let passes: Vec<Pass<Module>> = standard_passes()
        .into_iter()
        .filter(|p| p.info().opt_level <= n)
        .collect();
    Sequential::named(format!("O{n}"), passes)
        .unwrap_or_else(|e| panic!("the standard pipeline does not build: {e}"))
}

macro_rules! register_pipeline {
    ($n:literal, $info:ident, $create:ident) => {
        // What it runs is not written here: `--list-passes` reads it from the pipeline.
        static $info: PassInfo = PassInfo::new_static(
            concat!("O", $n),
            0,
            PassKind::Sequential,
            &[],
            concat!(
                "The standard pipeline at opt level ",
                $n,
                ": the standard passes whose opt level is at most ",
                $n,
                ", in order."
            ),
        );
        fn $create() -> Sequential<Module> {
            pipeline($n)
        }
        irpass::register_pass!(Module, $info, $create);
    };
}

register_pipeline!(0, O0_INFO, o0);
register_pipeline!(1, O1_INFO, o1);
register_pipeline!(2, O2_INFO, o2);
register_pipeline!(3, O3_INFO, o3);
