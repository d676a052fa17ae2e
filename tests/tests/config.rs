//! The semantics of config (`core/src/guide/semantics.md`, "Config and the registry"): typed keys, text/JSON values, errors, listing.

use irpass::{ConfigError, PassContext, registry};
use irpass_tests::*;

#[test]
fn an_unregistered_key_is_an_error_naming_it_and_the_closest_keys() {
    let err = PassContext::builder()
        .config_text("tiny.Limt", "{}")
        .build()
        .unwrap_err();
    let ConfigError::UnknownKey { key, suggestions } = &err else {
        panic!("{err}")
    };
    assert_eq!(key, "tiny.Limt");
    assert_eq!(suggestions[0], "tiny.Limit");
    assert!(
        err.to_string()
            .starts_with("unknown config key `tiny.Limt` (did you mean `tiny.Limit`"),
        "{err}"
    );
    // A typed key that nobody registered is refused too.
    let err = PassContext::builder()
        .config(&UNREGISTERED, 3)
        .build()
        .unwrap_err();
    assert!(matches!(err, ConfigError::UnknownKey { .. }), "{err}");
}

#[test]
fn a_value_of_the_wrong_type_is_an_error_naming_key_expected_type_and_given_value() {
    let err = PassContext::builder()
        .config_text("tiny.Level", "high")
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "config `tiny.Level` expects a value of type `u32`, but was given `high`: invalid type: string \"high\", expected u32"
    );
    let err = PassContext::builder()
        .config_json("tiny.Limit", serde_json::json!({"max": "ten"}))
        .build()
        .unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("config `tiny.Limit` expects a value of type `LimitConfig`, but was given `{\"max\":\"ten\"}`"), "{msg}");
}

#[test]
fn values_are_decoded_from_text_or_json_missing_fields_take_defaults_unknown_fields_are_errors() {
    let ctx = PassContext::builder()
        .config_text("tiny.Level", "4")
        .config_text("tiny.Limit", r#"{"verbose": true}"#)
        .build()
        .unwrap();
    assert_eq!(ctx.get(&LEVEL), Some(&4));
    assert_eq!(
        ctx.get(&LIMIT),
        Some(&LimitConfig {
            max: 10,
            verbose: true
        })
    );
    // LimitConfig does not deny unknown fields itself: the framework does.
    let err = PassContext::builder()
        .config_text("tiny.Limit", r#"{"maxx": 3}"#)
        .build()
        .unwrap_err();
    assert!(
        err.to_string().ends_with(
            ": unknown field `maxx` (did you mean `max`?); the fields are `max`, `verbose`"
        ),
        "{err}"
    );
}

#[test]
fn a_pass_reads_its_config_value_typed() {
    let pass = function_pass("UsesLimit", 0, |f, _, ctx| {
        let limit = ctx.get_or_default(&LIMIT);
        let mut body = f.body.clone();
        body.push(i64::from(limit.max));
        Ok(std::sync::Arc::new(Func { body, skip: false }))
    })
    .pass();
    let ctx = PassContext::builder()
        .config(
            &LIMIT,
            LimitConfig {
                max: 3,
                verbose: false,
            },
        )
        .build()
        .unwrap();
    assert_eq!(
        pass.run_in(Tiny::main(), &ctx)
            .unwrap()
            .body("main")
            .unwrap(),
        [3]
    );
    // Unset: the type's default.
    assert_eq!(
        pass.run_in(Tiny::main(), &PassContext::default())
            .unwrap()
            .body("main")
            .unwrap(),
        [10]
    );
}

#[test]
fn typed_values_keep_a_json_form_for_printing_and_reproducers() {
    let ctx = PassContext::builder()
        .config(&LEVEL, 5)
        .config(&LIMIT, LimitConfig::default())
        .build()
        .unwrap();
    assert_eq!(
        ctx.config().to_json(),
        serde_json::json!({"tiny.Level": 5, "tiny.Limit": {"max": 10, "verbose": false}})
    );
}

#[test]
fn list_configs_lists_every_key_with_its_type_and_doc() {
    let list = registry::list_configs();
    let limit = list.iter().find(|o| o.name == "tiny.Limit").unwrap();
    assert_eq!(limit.type_name, "LimitConfig");
    assert_eq!(limit.doc, "Limits for the tests.");
    let names: Vec<&str> = list.iter().map(|o| o.name).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
}
