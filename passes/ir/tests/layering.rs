//! The crate's modules import one way: reading every source file of `src/`, the graph of
//! which top-level module names which (through `crate::`, `super::` from a top-level file, or
//! the crate root's re-exports) has no cycle, and each module sits in the layer the crate's
//! documentation gives it. Test code (`tests.rs`, `#[cfg(test)]` blocks) is left out: a test
//! may use anything.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first: a module may name modules of its own layer or below, never above.
const LAYERS: &[&[&str]] = &[
    &[
        "dtype", "span", "error", "ty", "tensor", "attrs", "value", "layout",
    ],
    &["op"],
    &["body"],
    &["infer", "rewrite", "structural", "text"],
    &["function", "verify", "module", "pattern"],
    &["eval", "dot", "models", "random"],
];

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without comments and test modules.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests {") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The identifiers named right after `prefix` (`prefix::a`, `prefix::{a, b::c}`).
fn named_after(code: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let id: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.push(id);
            }
        } else {
            out.push(
                rest.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect(),
            );
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

/// The root's re-exports: name → the module it comes from.
fn root_names(lib: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for stmt in code(lib).split(';') {
        let Some(rest) = stmt.trim().strip_prefix("pub use ") else {
            continue;
        };
        let (module, items) = rest.split_once("::").unwrap();
        for item in named_after(&format!("x::{items}"), "x::") {
            names.insert(item, module.to_string());
        }
    }
    names
}

#[test]
fn the_modules_of_the_crate_import_one_way_in_their_stated_layers() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let root = root_names(&lib);
    let layer_of: BTreeMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(i, l)| l.iter().map(move |m| (*m, i)))
        .collect();
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in &files {
        let rel = path.strip_prefix(src()).unwrap();
        if rel == Path::new("lib.rs") || rel.file_name().unwrap() == "tests.rs" {
            continue;
        }
        let module = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        assert!(
            layer_of.contains_key(module.as_str()),
            "`{module}` is in no layer: add it to LAYERS"
        );
        let text = code(&std::fs::read_to_string(path).unwrap());
        let mut named = named_after(&text, "crate::");
        if rel.components().count() == 1 {
            named.extend(named_after(&text, "super::"));
        }
        for name in named {
            let target = if layer_of.contains_key(name.as_str()) {
                name
            } else if let Some(m) = root.get(&name) {
                m.clone()
            } else {
                continue;
            };
            if target != module {
                edges.entry(module.clone()).or_default().insert(target);
            }
        }
    }
    let mut wrong = Vec::new();
    for (from, tos) in &edges {
        for to in tos {
            if layer_of[to.as_str()] > layer_of[from.as_str()] {
                wrong.push(format!("`{from}` names `{to}`, a layer above it"));
            }
        }
    }
    // No cycle: removing, again and again, the modules that name no module left leaves none.
    let mut left = edges.clone();
    while let Some(leaf) = left
        .iter()
        .find(|(_, tos)| tos.iter().all(|t| !left.contains_key(t)))
        .map(|(m, _)| m.clone())
    {
        left.remove(&leaf);
    }
    if !left.is_empty() {
        wrong.push(format!(
            "a cycle among {:?}",
            left.keys().collect::<Vec<_>>()
        ));
    }
    assert!(wrong.is_empty(), "{}\nedges: {edges:#?}", wrong.join("\n"));
    // The check sees real imports: the representation is named by the algorithms.
    assert!(edges["infer"].contains("body") && edges["module"].contains("text"));
}
