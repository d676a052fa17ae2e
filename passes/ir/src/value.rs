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

/// A value: a tensor, a tuple, or a closure.
#[derive(Clone)]
pub enum Value {
    /// A tensor.
    Tensor(Arc<Tensor>),
    /// A tuple.
    Tuple(Vec<Value>),
    /// A function value.
    Closure(Arc<Closure>),
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

    /// The tuple's fields, if this is one.
    pub fn as_tuple(&self) -> Option<&[Value]> {
        match self {
            Value::Tuple(v) => Some(v),
            _ => None,
        }
    }

    /// Whether both are equal tensors/tuples (bit-exact); closures are never equal.
    pub fn bit_eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Tensor(a), Value::Tensor(b)) => a.bit_eq(b),
            (Value::Tuple(a), Value::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.bit_eq(y))
            }
            _ => false,
        }
    }

    /// Whether both are tensors/tuples of the same shapes whose elements differ by at most
    /// `atol + rtol * |b|`.
    pub fn all_close(&self, other: &Value, rtol: f64, atol: f64) -> bool {
        match (self, other) {
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
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
