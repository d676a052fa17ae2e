//! The pipeline the chain benchmarks measure, shared by `pipeline.rs` (timed) and
//! `chain_once.rs` (counted).

use irpass::{Pass, Sequential};
use irpass_passes::arena;
use irpass_passes::ir::Module;
use irpass_passes::ir::arena::{ArenaFunction, FunctionInput, Idx, Node, infer_types};
use irpass_passes::{DeadCodeElimination, EliminateCommonSubexpr, FoldConstant};

/// `FoldConstant, EliminateCommonSubexpr, DeadCodeElimination` as one Sequential.
pub fn pipeline() -> Pass<Module> {
    Sequential::named(
        "fold_cse_dce",
        [
            Pass::from(FoldConstant),
            EliminateCommonSubexpr.into(),
            DeadCodeElimination.into(),
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

/// The same pipeline on the arena IR, through the ported passes (`irpass_passes::arena`), with
/// full type inference on the folded function where `InferType` stands in the registered
/// pipeline (CSE requires it).
#[inline(never)]
pub fn run_arena_pipeline(f: ArenaFunction) -> ArenaFunction {
    let out = arena::fold_constant(&f, irpass_passes::DEFAULT_FOLD_MAX_ELEMENTS);
    let f = arena::apply(f, out);
    let input = FunctionInput {
        name: "main",
        body: &f.body,
        params: &f.params,
        root: f.root,
        ret_type: None,
        span: None,
    };
    std::hint::black_box(infer_types(&[input], &|_| None).expect("the chain is well typed"));
    let out = arena::eliminate_common_subexpr(&f, false);
    let f = arena::apply(f, out);
    let out = arena::dead_code_elimination(&f);
    arena::apply(f, out)
}

/// [`assert_optimised`] for the arena pipeline's output.
pub fn assert_arena_optimised(out: &ArenaFunction, k: usize) {
    let live = out.body.reachable(out.root);
    let lets: usize = out
        .body
        .ids()
        .filter(|id| live[id.index()])
        .map(|id| match out.body.node(id) {
            Node::Let { bindings, .. } => bindings.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(lets, 4 * k, "K = {k}: 4 lets per layer are left");
}
