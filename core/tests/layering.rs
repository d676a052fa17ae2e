//! The framework's foundation modules import one way (parsed with `syn`, test code left out):
//! where a registered item is defined (`location`), strict decoding (`decode`), suggestions,
//! errors, the declaration of a config key (`config_key`), the registry and the config store
//! form no cycle, and the driver's files (a module directory of their own) form none either.

use std::path::{Path, PathBuf};

use irpass_layering::ModuleGraph;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn the_foundation_modules_import_one_way() {
    let graph = ModuleGraph::of_crate(&src());
    let foundation = graph.among(&[
        "location",
        "decode",
        "suggest",
        "error",
        "config_key",
        "registry",
        "config",
    ]);
    assert_eq!(foundation.cycle(), None, "{foundation:#?}");
    // The check sees real imports: the store looks keys up in the registry, which holds their
    // descriptors.
    assert!(graph.has_edge("config", "registry") && graph.has_edge("registry", "config_key"));
}

#[test]
fn the_driver_files_import_one_way() {
    let graph = ModuleGraph::of_module(&src().join("driver"));
    assert_eq!(graph.cycle(), None, "{graph:#?}");
    assert!(graph.has_edge("run", "failure") && graph.has_edge("input", "failure"));
}
