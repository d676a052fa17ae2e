//! A pass library in miniature: a pass, an instrument and a config key for the doc toy IR,
//! registered with the macros. Code that wants them must name this crate
//! (`use irpass_test_plugin as _;`), or the linker drops it and its registrations.

use irpass::doc_toy::Toy;
use irpass::{ModuleView, PassInfo, module_pass, pass_config_option, pass_instrument};

/// Adds a function `plugin = [7]`.
#[module_pass(opt_level = 0)]
pub fn plugin_pass(mut module: Toy) -> Toy {
    module.insert("plugin", vec![7]);
    module
}

/// Counts nothing; exists to be found by name.
#[derive(Default)]
pub struct PluginInstrument;

/// An instrument from another crate.
#[pass_instrument(default)]
impl PluginInstrument {
    fn should_run(&self, _module: &dyn ModuleView, _info: &PassInfo) -> bool {
        true
    }
}

pass_config_option! {
    /// A key from another crate.
    pub PLUGIN_DEPTH: u32 = "plugin.Depth";
}
