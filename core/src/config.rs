//! Typed config keys ([`ConfigKey`]), their registered descriptors ([`ConfigOption`]) and the
//! validated values of a context ([`Config`]).

use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::ConfigError;
use crate::registry::{self, Location};
use crate::suggest::closest;

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

/// Decodes `value` as `T`; fields that `T` would silently ignore are an error.
pub(crate) fn decode_strict<T: DeserializeOwned>(value: &serde_json::Value) -> Result<T, String> {
    let mut unknown = Vec::new();
    // serde_path_to_error names the field whose value is wrong (`max_depth: invalid value ...`).
    let mut record = |path: serde_ignored::Path<'_>| unknown.push(path.to_string());
    let ignoring = serde_ignored::Deserializer::new(value, &mut record);
    let decoded: T = serde_path_to_error::deserialize(ignoring).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            e.into_inner().to_string()
        } else {
            format!("`{path}`: {}", e.into_inner())
        }
    })?;
    if !unknown.is_empty() {
        return Err(unknown_fields(
            &unknown,
            serde_aux::serde_introspection::serde_introspect::<T>(),
        ));
    }
    Ok(decoded)
}

/// "unknown field `layot` (did you mean `layout`?); the fields are `layout`, `strict`": each
/// unknown field with the closest known one, then the list of fields `T` has (when it is a
/// struct with named fields).
fn unknown_fields(unknown: &[String], fields: &[&str]) -> String {
    let names: Vec<String> = unknown
        .iter()
        .map(|p| {
            // A nested path (`inner.field`) is not one of `T`'s own fields.
            let close = if p.contains('.') {
                Vec::new()
            } else {
                closest(p, fields.iter().copied())
            };
            format!("`{p}`{}", crate::suggest::did_you_mean(&close))
        })
        .collect();
    let plural = if unknown.len() == 1 { "" } else { "s" };
    let mut msg = format!("unknown field{plural} {}", names.join(", "));
    match fields {
        [] => {}
        [one] => msg.push_str(&format!("; the only field is `{one}`")),
        _ => {
            let known: Vec<String> = fields.iter().map(|f| format!("`{f}`")).collect();
            msg.push_str(&format!("; the fields are {}", known.join(", ")));
        }
    }
    msg
}

#[derive(Clone)]
struct Entry {
    value: AnyValue,
    json: serde_json::Value,
}

/// The validated config values of a context, keyed by registered key.
#[derive(Clone, Default)]
pub struct Config {
    values: BTreeMap<&'static str, Entry>,
}

impl Config {
    /// The value of `key`, if set.
    pub fn get<T: 'static>(&self, key: &ConfigKey<T>) -> Option<&T> {
        self.values
            .get(key.name())
            .and_then(|e| e.value.downcast_ref::<T>())
    }

    /// The value of the key called `name`, as JSON, if set.
    pub fn get_json(&self, name: &str) -> Option<&serde_json::Value> {
        self.values.get(name).map(|e| &e.json)
    }

    /// The keys set, with their values as JSON, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &serde_json::Value)> {
        self.values.iter().map(|(k, e)| (*k, &e.json))
    }

    /// The whole config as one JSON object.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::Value::Object(
            self.iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    /// Whether no key is set.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    pub(crate) fn set<T>(&mut self, key: &ConfigKey<T>, value: T) -> Result<(), ConfigError>
    where
        T: Serialize + Send + Sync + 'static,
    {
        let option = registry::config_option(key.name())?;
        if (option.type_id)() != TypeId::of::<T>() {
            return Err(ConfigError::TypeMismatch {
                key: key.name().to_string(),
                registered: option.type_name,
                used: std::any::type_name::<T>(),
            });
        }
        let json = serde_json::to_value(&value).map_err(|e| ConfigError::InvalidValue {
            key: key.name().to_string(),
            expected: option.type_name,
            given: std::any::type_name::<T>().to_string(),
            reason: e.to_string(),
        })?;
        self.values.insert(
            option.name,
            Entry {
                value: Arc::new(value),
                json,
            },
        );
        Ok(())
    }

    pub(crate) fn set_text(&mut self, key: &str, text: &str) -> Result<(), ConfigError> {
        let json = serde_json::from_str(text.trim())
            .unwrap_or_else(|_| serde_json::Value::String(text.to_string()));
        self.insert_json(key, json, text)
    }

    pub(crate) fn set_json(
        &mut self,
        key: &str,
        json: serde_json::Value,
    ) -> Result<(), ConfigError> {
        let given = json.to_string();
        self.insert_json(key, json, &given)
    }

    fn insert_json(
        &mut self,
        key: &str,
        json: serde_json::Value,
        given: &str,
    ) -> Result<(), ConfigError> {
        let option = registry::config_option(key)?;
        let value = (option.decode)(&json).map_err(|reason| ConfigError::InvalidValue {
            key: key.to_string(),
            expected: option.type_name,
            given: given.to_string(),
            reason,
        })?;
        self.values.insert(option.name, Entry { value, json });
        Ok(())
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.iter().map(|(k, v)| (k, v.to_string())))
            .finish()
    }
}
