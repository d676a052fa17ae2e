//! The pitfall the link idiom exists for: this test binary depends on `irpass-test-plugin`
//! (it is a dev-dependency of the crate) but never names it, so the linker leaves it out and
//! its registrations are not there. `linked_crate.rs` is the same check with the crate named.

use irpass::doc_toy::Toy;
use irpass::registry;

#[test]
fn a_crate_that_code_never_names_registers_nothing_and_the_error_says_how_to_link_it() {
    let err = registry::lookup::<Toy>("PluginPass").unwrap_err();
    assert!(err.to_string().contains("use irpass_passes as _;"), "{err}");
    assert!(registry::lookup_instrument("PluginInstrument").is_err());
}
