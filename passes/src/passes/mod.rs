//! The passes, one file per pass (or family).

pub mod canonicalize_ops;
pub mod convert_layout;
pub mod cse;
pub mod dead_code;
pub mod fold_constant;
pub mod fold_scale_axis;
pub mod fuse_layer_norm;
pub mod fuse_ops;
pub mod infer_type;
pub mod module_passes;
pub mod normal_form;
pub mod print_ir;
pub mod simplify_expr;
pub mod simplify_inference;
