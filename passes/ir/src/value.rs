//! Run-time values: what operator kernels take and give and what the interpreter
//! ([`crate::eval`]) computes with.

use std::any::Any;
use std::fmt;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::Arc;

use crate::Tensor;

/// A function value: a closure of a function's code with the values of the variables it uses
/// from outside. Only the interpreter makes and reads them (operators never see one), so its
/// contents are the interpreter's own.
pub struct Closure(Box<dyn Any + Send + Sync + UnwindSafe + RefUnwindSafe>);

impl Closure {
    /// A closure holding the interpreter's representation of it.
    pub(crate) fn new<T: Any + Send + Sync + UnwindSafe + RefUnwindSafe>(inner: T) -> Closure {
        Closure(Box::new(inner))
    }

    /// The interpreter's representation, if it is a `T`.
    pub(crate) fn inner<T: Any>(&self) -> Option<&T> {
        let any: &dyn Any = &*self.0;
        any.downcast_ref()
    }
}

/// The run-time value of an opaque type ([`crate::Type::Opaque`]): defined by the crate whose
/// operators make and take it (an ONNX tensor of strings, an optional), which the
/// interpreter passes along without reading.
///
/// ```
/// use std::fmt;
/// use irpass_ir::{OpaqueValue, Value};
///
/// #[derive(PartialEq)]
/// struct Word(String);
/// impl fmt::Display for Word {
///     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
///         write!(f, "{:?}", self.0)
///     }
/// }
/// impl OpaqueValue for Word {
///     fn same(&self, other: &dyn OpaqueValue) -> bool {
///         other.as_any().downcast_ref::<Word>() == Some(self)
///     }
///     fn as_any(&self) -> &dyn std::any::Any {
///         self
///     }
/// }
/// let v = Value::opaque(Word("hi".into()));
/// assert_eq!(v.to_string(), "\"hi\"");
/// assert!(v.bit_eq(&Value::opaque(Word("hi".into()))));
/// assert_eq!(v.as_opaque::<Word>().map(|w| w.0.as_str()), Some("hi"));
/// ```
pub trait OpaqueValue: fmt::Display + Send + Sync + UnwindSafe + RefUnwindSafe + 'static {
    /// Whether `other` is the same value, exactly.
    fn same(&self, other: &dyn OpaqueValue) -> bool;
    /// The value as `Any`, to read it as its own type.
    fn as_any(&self) -> &dyn Any;
}

/// A value: a tensor, a tuple, a closure, or a value of an opaque type.
#[derive(Clone)]
pub enum Value {
    /// A tensor.
    Tensor(Arc<Tensor>),
    /// A tuple.
    Tuple(Vec<Value>),
    /// A function value.
    Closure(Arc<Closure>),
    /// A value of an opaque type.
    Opaque(Arc<dyn OpaqueValue>),
}

impl Value {
    /// A tensor value.
    pub fn tensor(t: Tensor) -> Value {
        Value::Tensor(Arc::new(t))
    }

    /// The tensor, if this is one.
    pub fn as_tensor(&self) -> Option<&Tensor> {
        match self {
            Value::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// A value of an opaque type.
    pub fn opaque(v: impl OpaqueValue) -> Value {
        Value::Opaque(Arc::new(v))
    }

    /// The opaque value, if this is one of type `T`.
    pub fn as_opaque<T: OpaqueValue>(&self) -> Option<&T> {
        match self {
            Value::Opaque(v) => v.as_any().downcast_ref(),
            _ => None,
        }
    }

    /// The tuple's fields, if this is one.
    pub fn as_tuple(&self) -> Option<&[Value]> {
        match self {
            Value::Tuple(v) => Some(v),
            _ => None,
        }
    }

    /// Whether both are equal tensors/tuples/opaque values (bit-exact); closures are never
    /// equal.
    pub fn bit_eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Tensor(a), Value::Tensor(b)) => a.bit_eq(b),
            (Value::Opaque(a), Value::Opaque(b)) => a.same(&**b),
            (Value::Tuple(a), Value::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.bit_eq(y))
            }
            _ => false,
        }
    }

    /// Whether both are tensors/tuples of the same shapes whose elements differ by at most
    /// `atol + rtol * |b|` (opaque values: the same).
    pub fn all_close(&self, other: &Value, rtol: f64, atol: f64) -> bool {
        match (self, other) {
            (Value::Opaque(a), Value::Opaque(b)) => a.same(&**b),
            (Value::Tensor(a), Value::Tensor(b)) => {
                a.shape() == b.shape()
                    && a.values().iter().zip(b.values()).all(|(x, y)| {
                        (x.is_nan() && y.is_nan())
                            || x == &y
                            || (x - y).abs() <= atol + rtol * y.abs()
                    })
            }
            (Value::Tuple(a), Value::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.all_close(y, rtol, atol))
            }
            _ => false,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Tensor(t) => write!(f, "{t}"),
            Value::Tuple(fields) => {
                f.write_str("(")?;
                for (i, v) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str(")")
            }
            Value::Closure(_) => f.write_str("<closure>"),
            Value::Opaque(v) => write!(f, "{v}"),
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
