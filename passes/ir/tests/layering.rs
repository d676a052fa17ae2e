//! The crate's modules import one way: the graph of which top-level module names which
//! (parsed with `syn`, test code left out) has no cycle, and each module sits in the layer the
//! crate's documentation gives it.

use irpass_layering::ModuleGraph;

/// The layers, lowest first: a module may name modules of its own layer or below, never above.
const LAYERS: &[&[&str]] = &[
    &[
        "dtype", "span", "error", "literal", "ty", "tensor", "attrs", "value", "layout",
    ],
    &["op"],
    &["body"],
    &["infer", "rewrite", "structural", "text"],
    &["function", "bind", "verify", "module", "pattern"],
    &["eval", "dot", "models", "random"],
];

#[test]
fn the_modules_of_the_crate_import_one_way_in_their_stated_layers() {
    let graph =
        ModuleGraph::of_crate(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let mut wrong = graph.layer_errors(LAYERS);
    if let Some(cycle) = graph.cycle() {
        wrong.push(format!("a cycle among {cycle:?}"));
    }
    assert!(wrong.is_empty(), "{}\n{graph:#?}", wrong.join("\n"));
    // The check sees real imports: the representation is named by the algorithms.
    assert!(graph.has_edge("infer", "body") && graph.has_edge("module", "text"));
}

#[test]
fn the_pattern_files_import_one_way() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/pattern");
    let graph = ModuleGraph::of_module(&dir);
    assert_eq!(graph.cycle(), None, "{graph:#?}");
    // The grammar builds templates; the template module does not call back into the parser.
    assert!(graph.has_edge("parse", "template") && !graph.has_edge("template", "parse"));
}
