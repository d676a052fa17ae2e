//! The crate's modules import one way: parsing every source file of `src/` (with `syn`), the
//! graph of which top-level module names which (through `crate::`, `super::` from a top-level
//! file, or the crate root's re-exports, in paths, `use` trees and macro arguments) has no cycle, and each module sits in the layer the crate's
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

/// Whether an item is test code (`#[cfg(test)]`).
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test")
    })
}

/// The module names a file's code reaches through `crate::NAME` (and `super::NAME` when
/// `super` is the crate root), in paths, `use` trees and macro arguments, outside test code.
struct Named {
    top_level: bool,
    out: Vec<String>,
}

impl Named {
    fn after(&mut self, first: &syn::Ident, second: Option<&syn::Ident>) {
        let root = first == "crate" || (self.top_level && first == "super");
        if let (true, Some(name)) = (root, second) {
            self.out.push(name.to_string());
        }
    }

    /// `crate::a`, `crate::{a, b::c}`: the first name under the root, each branch.
    fn use_tree(&mut self, tree: &syn::UseTree, under_root: bool) {
        match tree {
            syn::UseTree::Path(p) if under_root => self.out.push(p.ident.to_string()),
            syn::UseTree::Path(p) => {
                let root = p.ident == "crate" || (self.top_level && p.ident == "super");
                self.use_tree(&p.tree, root);
            }
            syn::UseTree::Name(n) if under_root => self.out.push(n.ident.to_string()),
            syn::UseTree::Rename(r) if under_root => self.out.push(r.ident.to_string()),
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| self.use_tree(t, under_root)),
            _ => {}
        }
    }

    /// `crate :: name` in a macro's tokens (which the parser leaves unparsed).
    fn tokens(&mut self, tokens: proc_macro2::TokenStream) {
        let tokens: Vec<_> = tokens.into_iter().collect();
        for (i, t) in tokens.iter().enumerate() {
            match t {
                proc_macro2::TokenTree::Group(g) => self.tokens(g.stream()),
                proc_macro2::TokenTree::Ident(first) => {
                    if let (
                        Some(proc_macro2::TokenTree::Punct(a)),
                        Some(proc_macro2::TokenTree::Punct(b)),
                        Some(proc_macro2::TokenTree::Ident(second)),
                    ) = (tokens.get(i + 1), tokens.get(i + 2), tokens.get(i + 3))
                        && a.as_char() == ':'
                        && b.as_char() == ':'
                    {
                        self.after(first, Some(second));
                    }
                }
                _ => {}
            }
        }
    }
}

impl<'a> syn::visit::Visit<'a> for Named {
    fn visit_path(&mut self, p: &'a syn::Path) {
        let mut segments = p.segments.iter().map(|s| &s.ident);
        if let Some(first) = segments.next() {
            self.after(first, segments.next());
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_item_use(&mut self, u: &'a syn::ItemUse) {
        if !is_test(&u.attrs) {
            self.use_tree(&u.tree, false);
        }
    }

    fn visit_item_mod(&mut self, m: &'a syn::ItemMod) {
        if !is_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_fn(&mut self, f: &'a syn::ItemFn) {
        if !is_test(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }

    fn visit_item_impl(&mut self, i: &'a syn::ItemImpl) {
        if !is_test(&i.attrs) {
            syn::visit::visit_item_impl(self, i);
        }
    }

    fn visit_macro(&mut self, m: &'a syn::Macro) {
        self.tokens(m.tokens.clone());
        syn::visit::visit_macro(self, m);
    }
}

fn parse(path: &Path) -> syn::File {
    let text = std::fs::read_to_string(path).unwrap();
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The root's re-exports (`pub use module::{a, b}`): name → the module it comes from.
fn root_names(lib: &syn::File) -> BTreeMap<String, String> {
    fn leaves(tree: &syn::UseTree, module: &str, out: &mut BTreeMap<String, String>) {
        match tree {
            syn::UseTree::Path(p) => leaves(&p.tree, module, out),
            syn::UseTree::Name(n) => {
                out.insert(n.ident.to_string(), module.to_string());
            }
            syn::UseTree::Rename(r) => {
                out.insert(r.rename.to_string(), module.to_string());
            }
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| leaves(t, module, out)),
            syn::UseTree::Glob(_) => {}
        }
    }
    let mut names = BTreeMap::new();
    for item in &lib.items {
        if let syn::Item::Use(u) = item
            && let (syn::Visibility::Public(_), syn::UseTree::Path(p)) = (&u.vis, &u.tree)
        {
            leaves(&p.tree, &p.ident.to_string(), &mut names);
        }
    }
    names
}

#[test]
fn the_modules_of_the_crate_import_one_way_in_their_stated_layers() {
    let root = root_names(&parse(&src().join("lib.rs")));
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
        let mut named = Named {
            top_level: rel.components().count() == 1,
            out: Vec::new(),
        };
        syn::visit::Visit::visit_file(&mut named, &parse(path));
        for name in named.out {
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
