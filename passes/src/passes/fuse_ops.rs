//! `FuseOps`.

use irpass::{PassContext, function_pass, pass_config_option};
use irpass_ir::{Function, Module};

use crate::analyses::{PostDominators, types};
use crate::rewrites::FuseOptions;

pass_config_option! {
    /// The fusion level of `FuseOps`: 0 puts every operator in a function of its own, 1 and
    /// above fuse (default: the context's opt level).
    pub FUSE_OPT_LEVEL: i64 = "relay.FuseOps.fuse_opt_level";
    /// The most operators one fused function may hold (default 256).
    pub FUSE_MAX_DEPTH: usize = "relay.FuseOps.max_depth";
    /// Keep the constants a fused function uses inside it instead of passing them as
    /// arguments (default false, as TVM).
    pub FUSE_LINK_PARAMS: bool = "relay.FuseOps.link_params";
}

/// Groups operators into `Primitive=1` functions, each a unit a backend compiles as one
/// kernel, by TVM's post-dominator fusion. An operator joins the group of its immediate
/// post-dominator (the closest operation all its values flow through) when every operation on
/// the way allows it: elementwise and broadcast operators fuse into the output of a
/// convolution, dense layer or pooling (out-elementwise-fusable) and into injective
/// operators and reductions after them, diamonds included; injective operators (reshape,
/// transpose, concatenate, split and its projections) fuse with each other, into tuples that
/// feed a later injective operator, and into reductions. A group holds at most one anchor
/// (convolution, dense, pooling) and `relay.FuseOps.max_depth` operators (default 256).
/// Scalar constants fuse into their users; other constants and every other value become
/// arguments of the fused function (`relay.FuseOps.link_params` keeps constants inside).
/// Opaque operators stay alone; `annotation.stop_fusion` is a boundary and is removed; `let`
/// values, `if`s and closures are boundaries, and a function already marked `Primitive=1` is
/// left as it is (so the pass is idempotent). `relay.FuseOps.fuse_opt_level` 0 makes one
/// function per operator.
#[function_pass(opt_level = 0, name = "FuseOps")]
pub fn fuse_ops(func: Function, module: &Module, ctx: &PassContext) -> irpass::Result<Function> {
    if func.has_attr("Primitive") {
        return Ok(func);
    }
    let level = ctx
        .get(&FUSE_OPT_LEVEL)
        .copied()
        .unwrap_or(i64::from(ctx.opt_level()));
    let options = FuseOptions {
        fuse: level > 0,
        max_depth: ctx.get(&FUSE_MAX_DEPTH).copied().unwrap_or(256).max(1),
        link_params: ctx.get(&FUSE_LINK_PARAMS).copied().unwrap_or(false),
    };
    let types = types(&func, module, ctx)?;
    let tree = ctx.function_analysis(&PostDominators, &func, module);
    Ok(func.with_code(crate::rewrites::fuse_ops(
        &func.code, &types, &tree, options,
    )))
}
