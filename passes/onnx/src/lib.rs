//! ONNX in and out for the reference IR ([`irpass_ir`]): a model is imported into a module
//! whose `@main` computes the graph ([`import_file`]), optimised by any pipeline of the pass
//! library, and written back as a model.
//!
//! The protobuf messages come from the ONNX project's `onnx.proto` ([`proto`]), compiled at
//! build time without a `protoc` binary.

mod coverage;
mod dims;
mod elements;
mod error;
mod export;
mod import;
mod native;
mod opaque;
mod opset;
mod optional;
mod same;
mod slots;
mod strings;
mod tensor;
mod value_type;
mod versions;

#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod proto {
    //! The ONNX protobuf messages, generated from the ONNX project's `onnx.proto`.
    include!(concat!(env!("OUT_DIR"), "/onnx.rs"));
}

pub use coverage::{Coverage, coverage, coverage_table};
pub use error::{OnnxError, Result, Unsupported};
pub use export::{
    DEFAULT_THRESHOLD, ExportOptions, FUNCTION_DOMAIN, ModelFiles, PROTOBUF_LIMIT, encode_model,
    encode_model_pieces, export_module, model_files, move_to_external,
};
pub use import::{
    ImportOptions, Imported, ModelInfo, decode_model, decode_model_shared, import_bytes,
    import_bytes_from, import_file, import_model,
};
pub use opset::{IMPLEMENTED, OPSETS, check as check_operator, version_at};
pub use optional::Optional;
pub use strings::Strings;
pub use tensor::{DataDir, dtype_of, elem_type_of, proto_of, tensor_of};
