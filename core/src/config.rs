//! The validated config values of a context ([`Config`]), and (re-exported from where they
//! are declared) the typed keys ([`ConfigKey`]) and their registered descriptors
//! ([`ConfigOption`]).

use std::any::TypeId;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use crate::error::ConfigError;
use crate::registry;

pub use crate::config_key::{AnyValue, ConfigKey, ConfigOption};

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
