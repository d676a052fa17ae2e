//! Reading a node's attributes.

use crate::proto::{AttributeProto, NodeProto, TensorProto};

/// A node's attributes by name.
pub(crate) struct NodeAttrs<'a>(pub(crate) &'a NodeProto);

impl<'a> NodeAttrs<'a> {
    fn get(&self, name: &str) -> Option<&'a AttributeProto> {
        self.0.attribute.iter().find(|a| a.name() == name)
    }

    /// Whether the attribute is given.
    pub(crate) fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// An integer attribute.
    pub(crate) fn int(&self, name: &str) -> Option<i64> {
        self.get(name).and_then(|a| a.i)
    }

    /// An integer attribute, or `default`.
    pub(crate) fn int_or(&self, name: &str, default: i64) -> i64 {
        self.int(name).unwrap_or(default)
    }

    /// A float attribute, or `default`.
    pub(crate) fn float_or(&self, name: &str, default: f64) -> f64 {
        self.get(name).and_then(|a| a.f).map_or(default, f64::from)
    }

    /// A list of integers.
    pub(crate) fn ints(&self, name: &str) -> Option<&'a [i64]> {
        self.get(name).map(|a| a.ints.as_slice())
    }

    /// A list of floats.
    pub(crate) fn floats(&self, name: &str) -> Option<&'a [f32]> {
        self.get(name).map(|a| a.floats.as_slice())
    }

    /// A string attribute.
    pub(crate) fn string(&self, name: &str) -> Option<String> {
        self.get(name)
            .and_then(|a| a.s.as_ref())
            .map(|s| String::from_utf8_lossy(s).into_owned())
    }

    /// A tensor attribute.
    pub(crate) fn tensor(&self, name: &str) -> Option<&'a TensorProto> {
        self.get(name).and_then(|a| a.t.as_ref())
    }

    pub(crate) fn type_proto(&self, name: &str) -> Option<&'a crate::proto::TypeProto> {
        self.get(name).and_then(|a| a.tp.as_ref())
    }
}
