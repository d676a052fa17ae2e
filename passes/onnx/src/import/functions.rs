//! Model-local functions (`ModelProto.functions`, opset 15 and later) inlined before import:
//! each node calling one is replaced by the function's nodes, its values renamed apart, its
//! attribute references (`ref_attr_name`) bound to the call's attributes or the function's
//! defaults, and calls inside functions expanded in turn.

use rustc_hash::FxHashMap;

use crate::error::{OnnxError, Result};
use crate::proto::{AttributeProto, FunctionProto, GraphProto, ModelProto, NodeProto};

/// Functions calling functions deeper than this are refused (a cycle, or a model built to
/// exhaust the importer).
const MAX_DEPTH: usize = 64;

/// `graph` with every call of a local function of `model` inlined, or `None` when the model
/// has no local functions.
///
/// # Errors
/// A function importing another opset of the default domain than the model, calls nested
/// deeper than 64, or a call with more inputs or outputs than its function has.
pub(crate) fn inline_local_functions(
    model: &ModelProto,
    graph: &GraphProto,
    opset: i64,
) -> Result<Option<GraphProto>> {
    if model.functions.is_empty() {
        return Ok(None);
    }
    let mut by_name: FxHashMap<(&str, &str), &FunctionProto> = FxHashMap::default();
    for f in &model.functions {
        let default = f
            .opset_import
            .iter()
            .find(|o| matches!(o.domain.as_deref(), None | Some("" | "ai.onnx")))
            .and_then(|o| o.version);
        if default.is_some_and(|v| v != opset) {
            return Err(OnnxError::Invalid(format!(
                "local function `{}` imports opset {} of the default domain, the model {opset}",
                f.name(),
                default.unwrap_or_default()
            )));
        }
        by_name.insert((f.domain(), f.name()), f);
    }
    let mut inliner = Inliner {
        functions: by_name,
        calls: 0,
        out: Vec::with_capacity(graph.node.len()),
    };
    for n in &graph.node {
        inliner.node(n.clone(), 0)?;
    }
    Ok(Some(GraphProto {
        node: inliner.out,
        ..graph.clone()
    }))
}

struct Inliner<'m> {
    functions: FxHashMap<(&'m str, &'m str), &'m FunctionProto>,
    calls: usize,
    out: Vec<NodeProto>,
}

impl Inliner<'_> {
    /// Writes `n`, or the nodes of the function it calls.
    fn node(&mut self, n: NodeProto, depth: usize) -> Result<()> {
        let Some(&f) = self.functions.get(&(n.domain(), n.op_type())) else {
            self.out.push(n);
            return Ok(());
        };
        if depth >= MAX_DEPTH {
            return Err(OnnxError::Invalid(format!(
                "local function `{}` is called through more than {MAX_DEPTH} nested functions \
                 (a function that calls itself?)",
                f.name()
            )));
        }
        if n.input.len() > f.input.len() || n.output.len() > f.output.len() {
            return Err(OnnxError::Invalid(format!(
                "node `{}` calls `{}` with {} inputs and {} outputs; the function has {} and {}",
                n.name(),
                f.name(),
                n.input.len(),
                n.output.len(),
                f.input.len(),
                f.output.len()
            )));
        }
        self.calls += 1;
        let prefix = format!("{}/{}#{}/", n.name(), f.name(), self.calls);
        // The function's names for the call's values; the rest are the call's own.
        let mut rename: FxHashMap<&str, String> = FxHashMap::default();
        for (k, x) in f.input.iter().enumerate() {
            rename.insert(x, n.input.get(k).cloned().unwrap_or_default());
        }
        for (k, y) in f.output.iter().enumerate() {
            let name = n.output.get(k).cloned().filter(|s| !s.is_empty());
            rename.insert(y, name.unwrap_or_else(|| format!("{prefix}{y}")));
        }
        for inner in &f.node {
            let mut inner = inner.clone();
            for v in inner.input.iter_mut().chain(inner.output.iter_mut()) {
                if v.is_empty() {
                    continue;
                }
                *v = match rename.get(v.as_str()) {
                    Some(name) => name.clone(),
                    None => format!("{prefix}{v}"),
                };
            }
            inner.name = Some(format!("{prefix}{}", inner.name()));
            inner.attribute = bind_attributes(inner.attribute, &n.attribute, f);
            self.node(inner, depth + 1)?;
        }
        Ok(())
    }
}

/// A function node's attributes with each reference (`ref_attr_name`) replaced by the
/// call's attribute of that name, else the function's default; a reference to neither is
/// dropped (the attribute is absent, as ONNX defines).
fn bind_attributes(
    attrs: Vec<AttributeProto>,
    call: &[AttributeProto],
    f: &FunctionProto,
) -> Vec<AttributeProto> {
    attrs
        .into_iter()
        .filter_map(|a| {
            let Some(r) = a.ref_attr_name.as_deref() else {
                return Some(a);
            };
            let value = call
                .iter()
                .chain(&f.attribute_proto)
                .find(|c| c.name() == r)?;
            Some(AttributeProto {
                name: a.name.clone(),
                ..value.clone()
            })
        })
        .collect()
}
