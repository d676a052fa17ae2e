//! What can go wrong reading or writing a model.

use std::fmt;

/// One operator use the importer cannot convert.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    /// The node's operator type (`LSTM`), with its domain when not the default one.
    pub op_type: String,
    /// The opset version the model imports for the operator's domain.
    pub opset: i64,
    /// The node's name (or `#index` when it has none).
    pub node: String,
    /// Why, when the operator is known but this use of it is not (an attribute value).
    pub reason: Option<String>,
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (opset {}) at node `{}`",
            self.op_type, self.opset, self.node
        )?;
        if let Some(r) = &self.reason {
            write!(f, ": {r}")?;
        }
        Ok(())
    }
}

/// An error reading, converting or writing an ONNX model.
#[derive(Debug, thiserror::Error)]
pub enum OnnxError {
    /// The bytes are not a protobuf `ModelProto` (truncated, random, another message).
    #[error("not an ONNX model: {0}")]
    Decode(String),
    /// The model is well formed protobuf but not a valid model.
    #[error("invalid ONNX model: {0}")]
    Invalid(String),
    /// Operators or attribute values the importer does not convert: every one in the model.
    #[error("the model uses {} operator use(s) irpass cannot import:\n{}", .0.len(), list(.0))]
    Unsupported(Vec<Unsupported>),
    /// A file could not be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
    /// The module cannot be written as ONNX.
    #[error("cannot write the module as ONNX: {0}")]
    Export(String),
}

fn list(u: &[Unsupported]) -> String {
    u.iter()
        .map(|u| format!("  {u}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A result of this crate.
pub type Result<T, E = OnnxError> = std::result::Result<T, E>;
