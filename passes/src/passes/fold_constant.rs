//! `FoldConstant`.

use irpass::registry::{OptionDoc, PassOptions};
use irpass::{PassContext, function_pass, pass_config_option};
use irpass_ir::{Function, Module};
use serde::Deserialize;

pass_config_option! {
    /// `FoldConstant` leaves a call unfolded when its result would have more elements than
    /// this (default 1 048 576), so that folding never bloats a module with a huge constant.
    pub FOLD_MAX_ELEMENTS: u64 = "relay.FoldConstant.max_elements";
}

pass_config_option! {
    /// `FoldConstant` leaves a `full`, `zeros`, `ones` or `broadcast_to` (and their `_like`
    /// forms) unfolded when its result would have more elements than this (default 1024): a
    /// model that describes a large tensor by its shape (ONNX's ConstantOfShape, Expand)
    /// keeps the description instead of growing by the tensor's bytes.
    pub FOLD_MAX_GENERATED_ELEMENTS: u64 = "relay.FoldConstant.max_generated_elements";
}

irpass::statistic! {
    /// Operator calls `FoldConstant` evaluated into constants.
    pub static CALLS_FOLDED: "FoldConstant", "operator calls folded into constants";
}

/// The default of [`FOLD_MAX_ELEMENTS`].
pub const DEFAULT_FOLD_MAX_ELEMENTS: u64 = 1 << 20;

/// The default of [`FOLD_MAX_GENERATED_ELEMENTS`].
pub const DEFAULT_FOLD_MAX_GENERATED_ELEMENTS: u64 = 1024;

/// `FoldConstant` and its options (each overrides its config key for this pass).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct FoldConstant {
    /// The most elements a folded result may have (default: `relay.FoldConstant.max_elements`).
    pub max_elements: Option<u64>,
    /// The most elements a folded `full`/`zeros`/`ones`/`broadcast_to` may have (default:
    /// `relay.FoldConstant.max_generated_elements`).
    pub max_generated_elements: Option<u64>,
}

impl PassOptions for FoldConstant {
    fn options() -> Vec<OptionDoc> {
        vec![
            OptionDoc {
                name: "max_elements",
                type_name: "u64",
                default: format!(
                    "relay.FoldConstant.max_elements, else {DEFAULT_FOLD_MAX_ELEMENTS}"
                ),
                doc: "the most elements a folded result may have",
            },
            OptionDoc {
                name: "max_generated_elements",
                type_name: "u64",
                default: format!(
                    "relay.FoldConstant.max_generated_elements, else {DEFAULT_FOLD_MAX_GENERATED_ELEMENTS}"
                ),
                doc: "the most elements a folded full, zeros, ones or broadcast_to may have",
            },
        ]
    }
}

/// Evaluates operator calls whose arguments are all constants, with the interpreter's
/// reference kernels, and replaces them by the result (dtypes exact: the kernel computes in the
/// operator's output dtype). Also folds projections of literal tuples, `if` on a constant
/// condition, `let`s bound to constants, and `shape_of`/`ndarray_size` of any value whose
/// shape is static (TVM's shape folding). A call whose result would be larger than
/// `relay.FoldConstant.max_elements` elements (`relay.FoldConstant.max_generated_elements`
/// for `full`, `zeros`, `ones` and `broadcast_to`, which describe a large tensor in a few
/// bytes), or whose evaluation fails (an integer division by zero), is left as it is, and so is a call of an operator TVM marks stateful
/// (`nn.dropout`: its value is a random draw, not a constant).
///
/// Options (`FoldConstant{max_elements=4096}`) override the config keys for this pass.
#[function_pass(opt_level = 2, default, options)]
impl FoldConstant {
    fn transform_function(&self, func: Function, _module: &Module, ctx: &PassContext) -> Function {
        let limits = crate::rewrites::FoldLimits {
            limit: self
                .max_elements
                .or_else(|| ctx.get(&FOLD_MAX_ELEMENTS).copied())
                .unwrap_or(DEFAULT_FOLD_MAX_ELEMENTS),
            generated: self
                .max_generated_elements
                .or_else(|| ctx.get(&FOLD_MAX_GENERATED_ELEMENTS).copied())
                .unwrap_or(DEFAULT_FOLD_MAX_GENERATED_ELEMENTS),
        };
        func.with_code(crate::rewrites::fold_constant(&func.code, limits))
    }
}
