//! Strict decoding of JSON values (config values, pass options): a field the target type does
//! not have is an error that names the closest field, not a value silently dropped.

use serde::de::DeserializeOwned;

use crate::suggest::{closest, did_you_mean};

/// Decodes `value` as `T`; fields that `T` would silently ignore are an error.
pub(crate) fn decode_strict<T: DeserializeOwned>(value: &serde_json::Value) -> Result<T, String> {
    let mut unknown = Vec::new();
    // serde_path_to_error names the field whose value is wrong (`max_depth: invalid value ...`).
    let mut record = |path: serde_ignored::Path<'_>| unknown.push(path.to_string());
    let ignoring = serde_ignored::Deserializer::new(value, &mut record);
    let decoded: T = serde_path_to_error::deserialize(ignoring).map_err(|e| {
        let path = e.path().to_string();
        let message = e.into_inner().to_string();
        // A type with `#[serde(deny_unknown_fields)]` refuses the field itself: the same
        // message as for the fields serde_ignored records, with the closest field.
        let refused = message
            .strip_prefix("unknown field `")
            .and_then(|rest| rest.split_once('`'))
            .map(|(name, _)| name.to_string());
        match refused {
            // (The path names the refused field itself, at the top level.)
            Some(name) if path == "." || path == name => unknown_fields(
                &[name],
                serde_aux::serde_introspection::serde_introspect::<T>(),
            ),
            _ if path == "." => message,
            _ => format!("`{path}`: {message}"),
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
            format!("`{p}`{}", did_you_mean(&close))
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

#[cfg(test)]
mod tests {
    use super::decode_strict;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)] // (read by the decoding only)
    #[serde(deny_unknown_fields)]
    struct Strict {
        layout: String,
        strict: bool,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Lenient {
        layout: String,
    }

    #[test]
    fn an_unknown_field_names_the_closest_one_whether_or_not_serde_refuses_it() {
        let value = serde_json::json!({"layot": "NHWC", "strict": true});
        let err = decode_strict::<Strict>(&value).unwrap_err();
        assert_eq!(
            err,
            "unknown field `layot` (did you mean `layout`?); the fields are `layout`, `strict`"
        );
        let err = decode_strict::<Lenient>(&serde_json::json!({"layot": "NHWC", "layout": "x"}))
            .unwrap_err();
        assert_eq!(
            err,
            "unknown field `layot` (did you mean `layout`?); the only field is `layout`"
        );
    }
}
