//! The semantics of the registry (`core/src/guide/semantics.md`, "Config and the registry"): lookup, duplicates, suggestions, listings.

use irpass::doc_toy::Toy;
use irpass::{LINK_HINT, PassKind, RegistryError, Sequential, registry};
use irpass_tests::*;

#[test]
fn the_registry_sees_the_passes_instruments_and_config_keys_a_linked_crate_registers() {
    let names: Vec<&str> = registry::passes::<Tiny>()
        .iter()
        .map(|r| r.info.name.as_ref())
        .collect();
    for expected in ["Analyze", "Canon", "NeedsCanon", "Scaled", "Shared"] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    assert!(registry::instruments().iter().any(|r| r.name == "Quiet"));
    assert!(
        registry::list_configs()
            .iter()
            .any(|o| o.name == "tiny.Limit")
    );
}

#[test]
fn lookup_by_name_builds_the_registered_pass_for_its_ir() {
    let canon = registry::lookup::<Tiny>("Canon").unwrap();
    assert_eq!(canon.info().kind, PassKind::Function);
    assert_eq!(
        canon.info().required_names().collect::<Vec<_>>(),
        ["Analyze"]
    );
    let out = Sequential::new([canon])
        .unwrap()
        .run_in(Tiny::main(), &Default::default())
        .unwrap();
    assert_eq!(out.body("main").unwrap(), [100]);
}

#[test]
fn one_name_may_be_registered_for_two_irs() {
    assert!(registry::lookup::<Tiny>("Shared").is_ok());
    assert!(registry::lookup::<Toy>("Shared").is_ok());
    // ... and each IR sees only its own passes.
    assert!(registry::lookup::<Toy>("Canon").is_err());
}

#[test]
fn two_passes_with_one_name_for_one_ir_are_an_error_naming_both_definitions() {
    let err = registry::lookup::<Tiny>("Duplicated").unwrap_err();
    let RegistryError::Duplicate(dup) = &err else {
        panic!("{err}")
    };
    assert_eq!(dup.name, "Duplicated");
    assert!(
        dup.first
            .module_path
            .starts_with("irpass_tests::registered::duplicated::")
    );
    assert_ne!(dup.first.module_path, dup.second.module_path);
    assert!(
        dup.first.file.ends_with("registered.rs") && dup.second.file.ends_with("registered.rs")
    );
    assert_ne!(dup.first.line, dup.second.line);
    let msg = err.to_string();
    assert!(msg.starts_with("pass for IR `tiny` `Duplicated` is defined twice: at irpass_tests::registered::duplicated::"), "{msg}");
    let all = registry::check().unwrap_err();
    assert!(all.iter().any(|e| e.to_string().contains("`Duplicated`")));
}

#[test]
fn an_unknown_pass_name_gets_the_closest_names_or_else_the_link_hint() {
    // A near miss is a typo: the closest names, and no lecture about linking.
    let err = registry::lookup::<Tiny>("Canonn").unwrap_err();
    assert_eq!(
        err.to_string(),
        "no pass named `Canonn` is registered for IR `tiny` (did you mean `Canon`?)"
    );
    // Nothing close: the name may live in a library the program never named.
    let err = registry::lookup::<Tiny>("VectorizeLoops").unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("no pass named `VectorizeLoops` is registered for IR `tiny`; {LINK_HINT}")
    );
    assert!(LINK_HINT.contains("use irpass_passes as _;"));
    // A driver that links its library drops the hint.
    assert_eq!(
        err.without_link_hint().to_string(),
        "no pass named `VectorizeLoops` is registered for IR `tiny`"
    );
    let err = registry::lookup_instrument("NoSuchInstrumentAtAll")
        .err()
        .unwrap();
    assert!(err.to_string().ends_with(LINK_HINT), "{err}");
    let err = registry::lookup_instrument("PassTimng").err().unwrap();
    assert!(
        err.to_string().ends_with("(did you mean `PassTiming`?)"),
        "{err}"
    );
}

#[test]
fn listing_gives_every_pass_with_its_description_sorted() {
    let list = registry::passes::<Tiny>();
    let names: Vec<&str> = list.iter().map(|r| r.info.name.as_ref()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    let canon = list.iter().find(|r| r.info.name == "Canon").unwrap();
    assert_eq!(canon.info.summary(), "Appends 100 to every function.");
    assert_eq!((canon.ir_name)(), "tiny");
    assert!(
        registry::all_passes().len() > list.len(),
        "all_passes covers the other IR too"
    );
}

#[test]
fn a_pass_is_built_from_options_and_bad_options_are_an_error() {
    let pass =
        registry::lookup_with_options::<Tiny>("Scaled", &serde_json::json!({"value": 7})).unwrap();
    assert_eq!(pass.run(Tiny::main()).unwrap().body("main").unwrap(), [7]);
    let err = registry::lookup_with_options::<Tiny>("Scaled", &serde_json::json!({"valeu": 7}))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "pass `Scaled` cannot be built: unknown field `valeu` (did you mean `value`?); \
         the only field is `value`"
    );
    let err = registry::lookup_with_options::<Tiny>("Analyze", &serde_json::json!({})).unwrap_err();
    assert_eq!(
        err.to_string(),
        "pass `Analyze` cannot be built: it takes no options"
    );
}

#[test]
fn instruments_are_looked_up_by_name_with_suggestions() {
    let quiet = registry::lookup_instrument("Quiet").unwrap();
    assert_eq!(quiet.name(), "Quiet");
    let err = registry::lookup_instrument("Quite").err().unwrap();
    assert!(
        err.to_string()
            .starts_with("no instrument named `Quite` is registered (did you mean `Quiet`?)"),
        "{err}"
    );
}

#[test]
fn the_built_in_instruments_without_arguments_are_registered_by_name() {
    for name in ["PassTiming", "PrintBeforeAll", "PrintAfterAll"] {
        let instrument = registry::lookup_instrument(name).unwrap();
        assert_eq!(instrument.name(), name);
    }
    let timing = registry::lookup_instrument("PassTiming").unwrap();
    let any: std::sync::Arc<dyn std::any::Any + Send + Sync> = timing;
    assert!(any.downcast::<irpass::instrument::PassTiming>().is_ok());
    let listed: Vec<&str> = registry::instruments().iter().map(|r| r.name).collect();
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(listed, sorted);
    assert!(
        registry::instruments()
            .iter()
            .all(|r| !r.description.is_empty())
    );
}
