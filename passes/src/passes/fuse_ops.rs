//! `FuseOps`.

use irpass::{PassContext, function_pass, pass_config_option};
use irpass_ir::{Function, Module};

use crate::analyses::{UseCounts, types};

pass_config_option! {
    /// The fusion level of `FuseOps`: 0 puts every operator in a function of its own, 1 and
    /// above fuse (default: the context's opt level).
    pub FUSE_OPT_LEVEL: i64 = "relay.FuseOps.fuse_opt_level";
    /// The most operators one fused function may hold (default 256).
    pub FUSE_MAX_DEPTH: usize = "relay.FuseOps.max_depth";
}

/// Groups operators into `Primitive=1` functions, each a unit a backend compiles as one
/// kernel: elementwise and broadcast operators fuse into the output of a convolution or dense
/// layer (out-elementwise-fusable), injective operators (reshape, transpose, ...) fuse with
/// each other and into the inputs of a reduction, elementwise operators follow a reduction.
/// Only a value with a single consumer is fused into it, so each group has one output and
/// nothing is computed twice; a group holds at most one anchor (convolution, dense or
/// reduction). Opaque operators stay alone; `let`s, `if`s, tuples and closures are
/// boundaries, and a function already marked `Primitive=1` is left as it is (so the pass is
/// idempotent). `relay.FuseOps.fuse_opt_level` 0 makes one function per operator.
#[function_pass(opt_level = 0, name = "FuseOps")]
pub fn fuse_ops(func: Function, module: &Module, ctx: &PassContext) -> irpass::Result<Function> {
    if func.has_attr("Primitive") {
        return Ok(func);
    }
    let level = ctx
        .get(&FUSE_OPT_LEVEL)
        .copied()
        .unwrap_or(i64::from(ctx.opt_level()));
    let max_depth = ctx.get(&FUSE_MAX_DEPTH).copied().unwrap_or(256).max(1);
    let types = types(&func, module, ctx)?;
    let uses = ctx.function_analysis(&UseCounts, &func, module);
    Ok(func.with_code(crate::rewrites::fuse_ops(
        &func.code,
        &types,
        &uses,
        level > 0,
        max_depth,
    )))
}
