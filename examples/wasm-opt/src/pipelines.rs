//! The pipelines `O0`–`O3`, registered for [`Wasm`] so that `-O<n>` and pipeline text find
//! them.

use irpass::{Pass, PassInfo, PassKind, Sequential, register_pass};

use crate::Wasm;
use crate::passes::{DeadFunctions, FoldConstants, LocalCse, StrengthReduce, Vacuum};

/// The most rounds `O3` repeats its function passes for.
pub const O3_ROUNDS: u32 = 8;

/// The pipeline `On`: the passes whose opt level is at most `n`, in order; at 3 the function
/// passes repeat until nothing changes (at most [`O3_ROUNDS`] rounds).
pub fn pipeline(n: u32) -> Sequential<Wasm> {
    let at_most = |passes: Vec<Pass<Wasm>>| -> Vec<Pass<Wasm>> {
        passes
            .into_iter()
            .filter(|p| p.info().opt_level <= n)
            .collect()
    };
    let function_passes = at_most(vec![
        FoldConstants.into(),
        StrengthReduce::default().into(),
        LocalCse.into(),
        Vacuum.into(),
    ]);
    let body = if n >= 3 {
        let fixpoint = Sequential::fixpoint(function_passes, O3_ROUNDS);
        vec![
            fixpoint
                .expect("a fixpoint of function passes builds")
                .into(),
        ]
    } else {
        function_passes
    };
    let passes = body.into_iter().chain(at_most(vec![DeadFunctions.into()]));
    Sequential::named(format!("O{n}"), passes).expect("the standard pipeline builds")
}

macro_rules! register_pipeline {
    ($n:literal, $info:ident, $create:ident) => {
        static $info: PassInfo = PassInfo::new_static(
            concat!("O", $n),
            0,
            PassKind::Sequential,
            &[],
            concat!("The standard pipeline at opt level ", $n, "."),
        );
        fn $create() -> Sequential<Wasm> {
            pipeline($n)
        }
        register_pass!(Wasm, $info, $create);
    };
}

register_pipeline!(0, O0_INFO, o0);
register_pipeline!(1, O1_INFO, o1);
register_pipeline!(2, O2_INFO, o2);
register_pipeline!(3, O3_INFO, o3);
