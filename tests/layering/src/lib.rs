//! The module graph of a crate (or of one module directory), read by parsing every source
//! file with `syn`: which top-level module names which, through `crate::` (at a crate root),
//! `super::` from a top-level file, or the root's re-exports, in paths, `use` trees and macro
//! arguments. Test code (`tests.rs`, `#[cfg(test)]` items) is left out: a test may use
//! anything.
//!
//! The crates' layering tests (`tests/layering.rs` in each) are built on it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Which top-level module of a directory names which.
#[derive(Clone, Debug, Default)]
pub struct ModuleGraph {
    modules: BTreeSet<String>,
    edges: BTreeMap<String, BTreeSet<String>>,
}

impl ModuleGraph {
    /// The graph of a crate's `src/` directory (root `lib.rs`): `crate::NAME` and, from a
    /// top-level file, `super::NAME` name the module `NAME`.
    pub fn of_crate(src: &Path) -> Self {
        Self::read(src, "lib.rs", true)
    }

    /// The graph of a module directory (root `mod.rs`): from a file directly in it,
    /// `super::NAME` names its sibling `NAME` (`crate::` paths leave the directory).
    pub fn of_module(dir: &Path) -> Self {
        Self::read(dir, "mod.rs", false)
    }

    fn read(dir: &Path, root_file: &str, crate_root: bool) -> Self {
        let root = root_names(&parse(&dir.join(root_file)));
        let mut files = Vec::new();
        rust_files(dir, &mut files);
        let mut graph = ModuleGraph::default();
        let mut named_by: Vec<(String, Vec<String>)> = Vec::new();
        for path in &files {
            let rel = path.strip_prefix(dir).unwrap();
            if rel == Path::new(root_file) || rel.file_name().unwrap() == "tests.rs" {
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
            let mut named = Named {
                top_level: rel.components().count() == 1,
                crate_root,
                out: Vec::new(),
            };
            syn::visit::Visit::visit_file(&mut named, &parse(path));
            graph.modules.insert(module.clone());
            named_by.push((module, named.out));
        }
        for (module, names) in named_by {
            for name in names {
                let target = if graph.modules.contains(&name) {
                    name
                } else if let Some(m) = root.get(&name) {
                    m.clone()
                } else {
                    continue;
                };
                if target != module {
                    graph
                        .edges
                        .entry(module.clone())
                        .or_default()
                        .insert(target);
                }
            }
        }
        graph
    }

    /// The top-level modules.
    pub fn modules(&self) -> impl Iterator<Item = &str> {
        self.modules.iter().map(String::as_str)
    }

    /// The modules `module` names.
    pub fn names(&self, module: &str) -> impl Iterator<Item = &str> {
        self.edges
            .get(module)
            .into_iter()
            .flatten()
            .map(String::as_str)
    }

    /// Whether `from` names `to`.
    pub fn has_edge(&self, from: &str, to: &str) -> bool {
        self.edges.get(from).is_some_and(|t| t.contains(to))
    }

    /// The graph restricted to `modules`.
    pub fn among(&self, modules: &[&str]) -> ModuleGraph {
        let keep: BTreeSet<String> = modules.iter().map(|m| m.to_string()).collect();
        ModuleGraph {
            edges: self
                .edges
                .iter()
                .filter(|(m, _)| keep.contains(*m))
                .map(|(m, t)| (m.clone(), t.intersection(&keep).cloned().collect()))
                .collect(),
            modules: self.modules.intersection(&keep).cloned().collect(),
        }
    }

    /// The modules left on cycles, if any: removing, again and again, the modules that name
    /// no module left leaves none when the graph has no cycle.
    pub fn cycle(&self) -> Option<Vec<String>> {
        let mut left = self.edges.clone();
        left.retain(|_, t| !t.is_empty());
        while let Some(leaf) = left
            .iter()
            .find(|(_, tos)| tos.iter().all(|t| !left.contains_key(t)))
            .map(|(m, _)| m.clone())
        {
            left.remove(&leaf);
        }
        (!left.is_empty()).then(|| left.into_keys().collect())
    }

    /// What breaks `layers` (lowest first; a module may name modules of its own layer or
    /// below): a module in no layer, or an edge upwards.
    pub fn layer_errors(&self, layers: &[&[&str]]) -> Vec<String> {
        let layer_of: BTreeMap<&str, usize> = layers
            .iter()
            .enumerate()
            .flat_map(|(i, l)| l.iter().map(move |m| (*m, i)))
            .collect();
        let mut wrong = Vec::new();
        for m in &self.modules {
            if !layer_of.contains_key(m.as_str()) {
                wrong.push(format!("`{m}` is in no layer"));
            }
        }
        for (from, tos) in &self.edges {
            for to in tos {
                if let (Some(f), Some(t)) = (layer_of.get(from.as_str()), layer_of.get(to.as_str()))
                    && t > f
                {
                    wrong.push(format!("`{from}` names `{to}`, a layer above it"));
                }
            }
        }
        wrong
    }
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

fn parse(path: &Path) -> syn::File {
    let text = std::fs::read_to_string(path).unwrap();
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Whether an item is test code (`#[cfg(test)]`).
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test")
    })
}

/// The module names a file's code reaches under the root, outside test code.
struct Named {
    top_level: bool,
    /// Whether `crate::` is the root (a crate's `src/`, not a module directory).
    crate_root: bool,
    out: Vec<String>,
}

impl Named {
    fn is_root(&self, first: &syn::Ident) -> bool {
        (self.crate_root && first == "crate") || (self.top_level && first == "super")
    }

    fn after(&mut self, first: &syn::Ident, second: Option<&syn::Ident>) {
        if let (true, Some(name)) = (self.is_root(first), second) {
            self.out.push(name.to_string());
        }
    }

    /// `crate::a`, `crate::{a, b::c}`: the first name under the root, each branch.
    fn use_tree(&mut self, tree: &syn::UseTree, under_root: bool) {
        match tree {
            syn::UseTree::Path(p) if under_root => self.out.push(p.ident.to_string()),
            syn::UseTree::Path(p) => {
                let root = self.is_root(&p.ident);
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

/// The root's re-exports (`pub use module::{a, b}`): name → the module it comes from.
fn root_names(root: &syn::File) -> BTreeMap<String, String> {
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
    for item in &root.items {
        if let syn::Item::Use(u) = item
            && let (syn::Visibility::Public(_), syn::UseTree::Path(p)) = (&u.vis, &u.tree)
        {
            leaves(&p.tree, &p.ident.to_string(), &mut names);
        }
    }
    names
}

/// A function (free, inherent, trait or trait-impl; test code left out) and how many lines
/// its item spans, doc comments not counted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionLength {
    /// The file, relative to the directory searched.
    pub file: PathBuf,
    /// The function's name.
    pub name: String,
    /// Its first line (the `fn` line or its first attribute after the doc comment).
    pub line: usize,
    /// Lines from its signature to its closing brace.
    pub lines: usize,
}

/// The functions under `dir` (every `.rs` file, recursively) longer than `max` lines, longest
/// first.
pub fn functions_longer_than(dir: &Path, max: usize) -> Vec<FunctionLength> {
    let mut files = Vec::new();
    rust_files(dir, &mut files);
    let mut out = Vec::new();
    for path in &files {
        if path.file_name().is_some_and(|f| f == "tests.rs") {
            continue;
        }
        let mut lengths = Lengths {
            file: path.strip_prefix(dir).unwrap_or(path).to_path_buf(),
            out: Vec::new(),
        };
        syn::visit::Visit::visit_file(&mut lengths, &parse(path));
        out.extend(lengths.out.into_iter().filter(|f| f.lines > max));
    }
    out.sort_by(|a, b| b.lines.cmp(&a.lines).then_with(|| a.file.cmp(&b.file)));
    out
}

struct Lengths {
    file: PathBuf,
    out: Vec<FunctionLength>,
}

impl Lengths {
    fn record(&mut self, attrs: &[syn::Attribute], sig: &syn::Signature, block: &syn::Block) {
        use syn::spanned::Spanned;
        // The item begins at its first attribute that is not a doc comment, or its signature.
        let start = attrs
            .iter()
            .filter(|a| !a.path().is_ident("doc"))
            .map(|a| a.span().start().line)
            .chain([sig.span().start().line])
            .min()
            .unwrap_or(0);
        let end = block.span().end().line;
        self.out.push(FunctionLength {
            file: self.file.clone(),
            name: sig.ident.to_string(),
            line: start,
            lines: end + 1 - start,
        });
    }
}

impl<'ast> syn::visit::Visit<'ast> for Lengths {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_test(&f.attrs) {
            self.record(&f.attrs, &f.sig, &f.block);
            syn::visit::visit_item_fn(self, f);
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test(&f.attrs) {
            self.record(&f.attrs, &f.sig, &f.block);
            syn::visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.record(&f.attrs, &f.sig, block);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }
}
