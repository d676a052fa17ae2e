//! Declaring a config key: the typed key a pass reads ([`ConfigKey`]) and the descriptor
//! `pass_config_option!` registers for it ([`ConfigOption`]).

use std::any::{Any, TypeId};
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use serde::de::DeserializeOwned;

use crate::decode::decode_strict;
use crate::location::Location;

/// A typed config key: its name, and the Rust type of its value.
///
/// Declare keys with `pass_config_option!`, which also registers them; a key must be registered
/// (as a [`ConfigOption`]) before a context accepts a value for it.
pub struct ConfigKey<T> {
    name: &'static str,
    _type: PhantomData<fn() -> T>,
}

impl<T> ConfigKey<T> {
    /// A key with this name (`"namespace.Key"`).
    pub const fn new(name: &'static str) -> Self {
        ConfigKey {
            name,
            _type: PhantomData,
        }
    }

    /// The key's name.
    pub const fn name(&self) -> &'static str {
        self.name
    }
}

impl<T> Clone for ConfigKey<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for ConfigKey<T> {}

impl<T> fmt::Debug for ConfigKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ConfigKey({})", self.name)
    }
}

/// A decoded config value.
pub type AnyValue = Arc<dyn Any + Send + Sync>;

/// A registered config key: name, value type, doc, and how to decode a value from JSON.
/// This is the item `pass_config_option!` submits to the registry.
pub struct ConfigOption {
    /// The key (`"namespace.Key"`).
    pub name: &'static str,
    /// The value type as written in the declaration.
    pub type_name: &'static str,
    /// The key's doc comment.
    pub doc: &'static str,
    /// The `TypeId` of the value type.
    pub type_id: fn() -> TypeId,
    /// Decodes a JSON value into the value type; unknown fields are an error.
    pub decode: fn(&serde_json::Value) -> Result<AnyValue, String>,
    /// Where the key is declared.
    pub location: Location,
}

impl ConfigOption {
    /// The descriptor of a key whose values are of type `T`.
    pub const fn new<T: DeserializeOwned + Send + Sync + 'static>(
        name: &'static str,
        type_name: &'static str,
        doc: &'static str,
        location: Location,
    ) -> Self {
        ConfigOption {
            name,
            type_name,
            doc,
            type_id: TypeId::of::<T>,
            decode: decode_value::<T>,
            location,
        }
    }
}

impl fmt::Debug for ConfigOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConfigOption")
            .field("name", &self.name)
            .field("type", &self.type_name)
            .field("location", &self.location)
            .finish()
    }
}

/// Decodes `value` as `T`, rejecting fields that `T` does not have.
fn decode_value<T: DeserializeOwned + Send + Sync + 'static>(
    value: &serde_json::Value,
) -> Result<AnyValue, String> {
    Ok(Arc::new(decode_strict::<T>(value)?))
}
