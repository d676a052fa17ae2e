//! ONNX's tensors of strings at run time. The IR's tensors hold numbers, so a tensor of
//! strings is a value of an opaque type (`tensor(string)[2,3]`, [`crate::value_type`]), and in
//! the interpreter a [`Strings`]: only the operators defined on strings
//! ([`crate::native`]) make or read one.

use std::fmt;

use irpass_ir::{Dim, OpaqueValue, Symbol, Type, Value};
use ndarray::{ArrayD, IxDyn};

use crate::error::{OnnxError, Result};
use crate::proto::TensorProto;
use crate::proto::tensor_proto::DataType;

/// A tensor of strings, the run-time value of an opaque `tensor(string)` type.
///
/// ```
/// use irpass_onnx::Strings;
/// use ndarray::{ArrayD, IxDyn};
///
/// let words = Strings(ArrayD::from_shape_vec(IxDyn(&[2]), vec!["a".into(), "b".into()]).unwrap());
/// let proto = words.proto("words");
/// assert_eq!(Strings::of_proto(&proto).unwrap(), words);
/// assert_eq!(words.to_string(), r#"tensor(string)[2]{"a", "b"}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Strings(pub ArrayD<String>);

impl Strings {
    /// The strings a `TensorProto` of element type `STRING` holds (UTF-8; other bytes are
    /// replaced).
    ///
    /// # Errors
    /// Another element type, or a count of strings other than the dimensions give.
    pub fn of_proto(t: &TensorProto) -> Result<Strings> {
        if t.data_type != Some(DataType::String as i32) {
            return Err(OnnxError::Invalid(format!(
                "tensor `{}` does not hold strings",
                t.name()
            )));
        }
        let shape = t
            .dims
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|_| OnnxError::Invalid(format!("tensor `{}`: a negative size", t.name())))?;
        let items = t
            .string_data
            .iter()
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect();
        ArrayD::from_shape_vec(IxDyn(&shape), items)
            .map(Strings)
            .map_err(|_| {
                OnnxError::Invalid(format!(
                    "tensor `{}`: {} strings for dimensions {shape:?}",
                    t.name(),
                    t.string_data.len()
                ))
            })
    }

    /// A `TensorProto` named `name` holding the strings.
    pub fn proto(&self, name: &str) -> TensorProto {
        TensorProto {
            name: Some(name.to_string()),
            dims: self.0.shape().iter().map(|&d| d as i64).collect(),
            data_type: Some(DataType::String as i32),
            string_data: self.0.iter().map(|s| s.as_bytes().to_vec()).collect(),
            ..TensorProto::default()
        }
    }

    /// The opaque type of a tensor of strings of dimensions `dims`.
    pub fn type_of(dims: &[Dim]) -> Type {
        Type::Opaque(Symbol::new(&format!(
            "tensor(string){}",
            crate::dims::dims_text(dims)
        )))
    }

    /// The value of `v`, which must be a tensor of strings (`what` names it in the error).
    pub(crate) fn of_value<'a>(
        v: &'a Value,
        what: &str,
    ) -> std::result::Result<&'a Strings, String> {
        v.as_opaque::<Strings>()
            .ok_or_else(|| format!("{what} is `{v}`, not a tensor of strings"))
    }
}

impl fmt::Display for Strings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<Dim> = self
            .0
            .shape()
            .iter()
            .map(|&d| Dim::Static(d as i64))
            .collect();
        write!(f, "tensor(string){}{{", crate::dims::dims_text(&dims))?;
        for (i, s) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{s:?}")?;
        }
        f.write_str("}")
    }
}

impl OpaqueValue for Strings {
    fn same(&self, other: &dyn OpaqueValue) -> bool {
        other.as_any().downcast_ref::<Strings>() == Some(self)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The dimensions of a tensor of strings of type `t`, if it is one.
pub(crate) fn dims_of(t: &Type) -> Option<Vec<Dim>> {
    match t {
        Type::Opaque(name) if name.as_str().starts_with("tensor(string)") => {
            crate::value_type::opaque_tensor_dims(*name)
        }
        _ => None,
    }
}
