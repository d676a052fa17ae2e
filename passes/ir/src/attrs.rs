//! Attributes of operator calls and functions (`padding=[1, 1]`, `Primitive=1`).

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// One attribute value.
#[derive(Clone, Debug)]
pub enum AttrValue {
    /// An integer (`units=128`).
    Int(i64),
    /// A float (`epsilon=1e-05f`).
    Float(f64),
    /// A boolean (`keepdims=True`).
    Bool(bool),
    /// A string (`data_layout="NCHW"`).
    Str(String),
    /// A list (`padding=[1, 1, 1, 1]`).
    List(Vec<AttrValue>),
    /// No value (`axis=None`).
    Null,
}

impl AttrValue {
    /// The integer, if this is one.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            AttrValue::Int(v) => Some(*v),
            _ => None,
        }
    }

    /// The value as a float (integers convert).
    pub fn as_float(&self) -> Option<f64> {
        match self {
            AttrValue::Float(v) => Some(*v),
            AttrValue::Int(v) => Some(*v as f64),
            _ => None,
        }
    }

    /// The boolean, if this is one (integers 0/1 convert).
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            AttrValue::Bool(b) => Some(*b),
            AttrValue::Int(0) => Some(false),
            AttrValue::Int(1) => Some(true),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            AttrValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The list of integers, if this is one (a single integer is a list of one).
    pub fn as_int_list(&self) -> Option<Vec<i64>> {
        match self {
            AttrValue::List(items) => items.iter().map(AttrValue::as_int).collect(),
            AttrValue::Int(v) => Some(vec![*v]),
            _ => None,
        }
    }

    /// The value as a list of floats (a single number is a list of one; integers convert).
    pub fn as_float_list(&self) -> Option<Vec<f64>> {
        match self {
            AttrValue::List(items) => items.iter().map(AttrValue::as_float).collect(),
            v => v.as_float().map(|f| vec![f]),
        }
    }
}

impl PartialEq for AttrValue {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (AttrValue::Int(a), AttrValue::Int(b)) => a == b,
            (AttrValue::Float(a), AttrValue::Float(b)) => a.to_bits() == b.to_bits(),
            (AttrValue::Bool(a), AttrValue::Bool(b)) => a == b,
            (AttrValue::Str(a), AttrValue::Str(b)) => a == b,
            (AttrValue::List(a), AttrValue::List(b)) => a == b,
            (AttrValue::Null, AttrValue::Null) => true,
            _ => false,
        }
    }
}

impl Eq for AttrValue {}

impl Hash for AttrValue {
    fn hash<H: Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            AttrValue::Int(v) => v.hash(state),
            AttrValue::Float(v) => v.to_bits().hash(state),
            AttrValue::Bool(v) => v.hash(state),
            AttrValue::Str(v) => v.hash(state),
            AttrValue::List(v) => v.hash(state),
            AttrValue::Null => {}
        }
    }
}

impl fmt::Display for AttrValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttrValue::Int(v) => write!(f, "{v}"),
            AttrValue::Float(v) => write!(f, "{}f", super::tensor::float_text(*v)),
            AttrValue::Bool(true) => f.write_str("True"),
            AttrValue::Bool(false) => f.write_str("False"),
            AttrValue::Str(s) => write!(f, "{}", crate::literal::quote(s)),
            AttrValue::List(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            AttrValue::Null => f.write_str("None"),
        }
    }
}

/// Named attributes, in a fixed order (an operator's schema order, or as written).
///
/// Shared: cloning is a count increment (every rebuilt call clones its attributes), and no
/// attributes take no allocation. One pointer wide, which keeps expression nodes small.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Attrs(Option<Arc<Vec<(String, AttrValue)>>>);

impl Attrs {
    /// No attributes.
    pub fn new() -> Self {
        Attrs(None)
    }

    /// Attributes from pairs, in this order.
    pub fn from_pairs<I, S>(pairs: I) -> Self
    where
        I: IntoIterator<Item = (S, AttrValue)>,
        S: Into<String>,
    {
        let pairs: Vec<(String, AttrValue)> =
            pairs.into_iter().map(|(k, v)| (k.into(), v)).collect();
        // Invariant: `Some` only when non-empty, so that equal attributes compare equal.
        Attrs((!pairs.is_empty()).then(|| Arc::new(pairs)))
    }

    fn pairs(&self) -> &[(String, AttrValue)] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }

    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<&AttrValue> {
        self.pairs().iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// Sets `name` (replacing, or appending at the end).
    pub fn set(&mut self, name: &str, value: AttrValue) {
        let pairs = Arc::make_mut(self.0.get_or_insert_with(Default::default));
        match pairs.iter_mut().find(|(k, _)| k == name) {
            Some(slot) => slot.1 = value,
            None => pairs.push((name.to_string(), value)),
        }
    }

    /// Whether `name` is set.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Whether `name` is set to a true value (`Primitive=1`; a value other than a boolean,
    /// 0 or 1 counts as set).
    pub fn is_true(&self, name: &str) -> bool {
        self.get(name).is_some_and(|v| v.as_bool().unwrap_or(true))
    }

    /// The pairs, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &AttrValue)> {
        self.pairs().iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.pairs().len()
    }
}
