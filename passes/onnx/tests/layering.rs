//! The crate's modules import one way (parsed with `syn`, test code left out): the crate's
//! top-level modules, the exporter's files and the importer's files each form no cycle; and
//! its functions stay short.

use std::path::{Path, PathBuf};

use irpass_layering::ModuleGraph;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn the_crate_modules_import_one_way() {
    let graph = ModuleGraph::of_crate(&src());
    assert_eq!(graph.cycle(), None, "{graph:#?}");
    assert!(graph.has_edge("export", "import") && graph.has_edge("import", "tensor"));
}

#[test]
fn the_exporter_files_import_one_way() {
    // The graph being built (`graph`) sits below both the walk and the operator emitters.
    let graph = ModuleGraph::of_module(&src().join("export"));
    assert_eq!(graph.cycle(), None, "{graph:#?}");
    assert!(graph.has_edge("walk", "ops") && graph.has_edge("ops", "graph"));
}

#[test]
fn the_importer_files_import_one_way() {
    let graph = ModuleGraph::of_module(&src().join("import"));
    assert_eq!(graph.cycle(), None, "{graph:#?}");
    assert!(graph.has_edge("ops", "attrs"));
}

#[test]
fn no_function_is_longer_than_120_lines() {
    // A function that long does several things; each is its own function, named for it.
    let long = irpass_layering::functions_longer_than(&src(), 120);
    assert!(long.is_empty(), "{long:#?}");
}
