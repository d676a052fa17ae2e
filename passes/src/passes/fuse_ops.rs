//! `FuseOps`.

use irpass::registry::{OptionDoc, PassOptions};
use irpass::{PassContext, function_pass, pass_config_option};
use irpass_ir::{Function, Module};
use serde::Deserialize;

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

/// `FuseOps` and its options (each overrides its config key for this pass).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct FuseOps {
    /// The fusion level (default: the config key, else the context's opt level).
    pub fuse_opt_level: Option<i64>,
    /// The most operators in one fused function (default: the config key, else 256).
    pub max_depth: Option<usize>,
    /// Keep constants inside the fused functions (default: the config key, else false).
    pub link_params: Option<bool>,
}

impl PassOptions for FuseOps {
    fn options() -> Vec<OptionDoc> {
        vec![
            OptionDoc {
                name: "fuse_opt_level",
                type_name: "i64",
                default: "relay.FuseOps.fuse_opt_level, else the context's opt level".to_string(),
                doc: "0 puts every operator in a function of its own; 1 and above fuse",
            },
            OptionDoc {
                name: "max_depth",
                type_name: "usize",
                default: "relay.FuseOps.max_depth, else 256".to_string(),
                doc: "the most operators one fused function may hold",
            },
            OptionDoc {
                name: "link_params",
                type_name: "bool",
                default: "relay.FuseOps.link_params, else false".to_string(),
                doc: "keep the constants a fused function uses inside it",
            },
        ]
    }
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
/// function per operator. The options (`FuseOps{fuse_opt_level=0,max_depth=8}`) override the
/// config keys for this pass.
#[function_pass(opt_level = 0, default, options)]
impl FuseOps {
    fn transform_function(
        &self,
        func: Function,
        module: &Module,
        ctx: &PassContext,
    ) -> irpass::Result<Function> {
        if func.has_attr("Primitive") {
            return Ok(func);
        }
        let level = self
            .fuse_opt_level
            .or_else(|| ctx.get(&FUSE_OPT_LEVEL).copied())
            .unwrap_or(i64::from(ctx.opt_level()));
        let options = FuseOptions {
            fuse: level > 0,
            max_depth: self
                .max_depth
                .or_else(|| ctx.get(&FUSE_MAX_DEPTH).copied())
                .unwrap_or(256)
                .max(1),
            link_params: self
                .link_params
                .or_else(|| ctx.get(&FUSE_LINK_PARAMS).copied())
                .unwrap_or(false),
        };
        let types = types(&func, module, ctx)?;
        let tree = ctx.function_analysis(&PostDominators, &func, module);
        Ok(func.with_code(crate::rewrites::fuse_ops(
            &func.code, &types, &tree, options,
        )))
    }
}
