//! Registrations of another crate are seen when the program names that crate.

use irpass::doc_toy::Toy;
use irpass::{PassContext, registry};
// Named only to be linked: its passes, instrument and key register themselves.
use irpass_test_plugin as _;

#[test]
fn a_named_crates_pass_instrument_and_config_key_are_in_the_registry() {
    let pass = registry::lookup::<Toy>("PluginPass").unwrap();
    assert_eq!(pass.info().description, "Adds a function `plugin = [7]`.");
    assert_eq!(
        pass.run(Toy::default()).unwrap().to_string(),
        "plugin = [7]\n"
    );
    let location = registry::passes::<Toy>()
        .into_iter()
        .find(|r| r.info.name == "PluginPass")
        .unwrap()
        .location;
    assert_eq!(location.module_path, "irpass_test_plugin");
    assert!(registry::lookup_instrument("PluginInstrument").is_ok());
    assert!(
        PassContext::builder()
            .config_text("plugin.Depth", "2")
            .build()
            .is_ok()
    );
}
