//! ONNX's optionals at run time: a value of an opaque `optional(...)` type
//! ([`crate::value_type`]) is, in the interpreter, an [`Optional`] — a tensor or a sequence,
//! or nothing. Only the optional operators ([`crate::native`]) make or read one.

use std::fmt;

use irpass_ir::{OpaqueValue, Value};

/// An optional value: `Some` element, or none.
///
/// ```
/// use irpass_ir::{DType, Tensor, Value};
/// use irpass_onnx::Optional;
///
/// let empty = Value::opaque(Optional(None));
/// let one = Value::opaque(Optional(Some(Value::tensor(Tensor::scalar(DType::Float32, 1.0)))));
/// assert!(!empty.bit_eq(&one));
/// assert_eq!(empty.to_string(), "optional(none)");
/// ```
#[derive(Clone, Debug)]
pub struct Optional(pub Option<Value>);

impl fmt::Display for Optional {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(v) => write!(f, "optional({v})"),
            None => f.write_str("optional(none)"),
        }
    }
}

impl OpaqueValue for Optional {
    fn same(&self, other: &dyn OpaqueValue) -> bool {
        match (other.as_any().downcast_ref::<Optional>(), &self.0) {
            (Some(Optional(Some(a))), Some(b)) => a.bit_eq(b),
            (Some(Optional(None)), None) => true,
            _ => false,
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
