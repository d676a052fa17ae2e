//! `ConvertLayout`.

use irpass::{PassContext, function_pass};
use irpass_ir::{Function, Module};
use serde::Deserialize;

use crate::analyses::types;

/// Converts convolutions between NCHW and NHWC (`layout`, default `"NHWC"`; `"NCHW"` converts
/// the other way), or into a split layout (`layout="NCHW4c"` with `kernel_layout="OIHW4o"`),
/// and the operators around them that can follow — elementwise operators,
/// broadcasts (an operand of lower rank is given leading axes and transformed, as TVM does),
/// `nn.bias_add` (as the broadcast add it stands for), batch norm, pooling, `concatenate`
/// (its axis moved), `split` (its axis moved, its indices in blocks), tuples and their
/// projections — so that `layout_transform`s appear only at
/// the edges of converted regions: where a value enters (inputs, weights) and where an
/// operator that cannot follow needs the old layout. A `transpose` of a converted value takes
/// it as it is, with the permutation that gives the same result.
#[derive(Clone, Debug, Deserialize)]
#[serde(default)]
pub struct ConvertLayout {
    /// The desired data layout of `nn.conv2d`: `"NHWC"`, `"NCHW"`, or a split layout of either
    /// (`"NCHW4c"`).
    pub layout: String,
    /// The desired kernel layout (TVM's second desired layout); `None` or `"default"`: `"HWIO"`
    /// for NHWC, `"OIHW"` for NCHW. A split data layout needs one (`"OIHW4o"`).
    pub kernel_layout: Option<String>,
}

impl Default for ConvertLayout {
    fn default() -> Self {
        ConvertLayout {
            layout: "NHWC".to_string(),
            kernel_layout: None,
        }
    }
}

/// Converts conv2d regions to the desired data layout, transforms only at the edges.
impl irpass::registry::PassOptions for ConvertLayout {
    fn options() -> Vec<irpass::registry::OptionDoc> {
        vec![
            irpass::registry::OptionDoc {
                name: "layout",
                type_name: "\"NHWC\" | \"NCHW\" | split (\"NCHW4c\")",
                default: "NHWC".to_string(),
                doc: "the desired data layout of nn.conv2d",
            },
            irpass::registry::OptionDoc {
                name: "kernel_layout",
                type_name: "string",
                default: "default".to_string(),
                doc: "the desired kernel layout (HWIO for NHWC, OIHW for NCHW; OIHW4o, ...)",
            },
        ]
    }
}

#[function_pass(opt_level = 3, default, options)]
impl ConvertLayout {
    fn transform_function(
        &self,
        func: Function,
        module: &Module,
        ctx: &PassContext,
    ) -> irpass::Result<Function> {
        let types = types(&func, module, ctx)?;
        let kernel = self.kernel_layout.as_deref();
        let out = crate::rewrites::convert_layout(&func.code, &types, &self.layout, kernel)
            .map_err(irpass::BoxError::from)?;
        Ok(func.with_code(out))
    }
}
