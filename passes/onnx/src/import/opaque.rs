//! Importing a node as an opaque call (`onnx.node`, see [`crate::opaque`]): one that irpass
//! does not convert, whose outputs' types the model declares or the importer infers
//! ([`super::opaque_types`]).

use std::sync::Arc;

use irpass_ir::{AttrValue, Attrs, Dim, ExprId, TensorType, Type};
use rustc_hash::{FxHashMap, FxHashSet};

use super::Importer;
use crate::opaque::{OPAQUE_OP, encode_attributes, encode_types};
use crate::proto::{GraphProto, NodeProto, TypeProto, type_proto};
use crate::tensor::dtype_of;

/// The tensor types the graph declares for its values (`value_info` and outputs), by name.
pub(crate) fn declared_types(g: &GraphProto) -> FxHashMap<String, Type> {
    g.value_info
        .iter()
        .chain(&g.output)
        .filter_map(|v| Some((v.name().to_string(), tensor_type(v.r#type.as_ref()?)?)))
        .collect()
}

/// A declared tensor type with a known element type and rank (unknown sizes as `?`).
fn tensor_type(t: &TypeProto) -> Option<Type> {
    let Some(type_proto::Value::TensorType(t)) = &t.value else {
        return None;
    };
    let dtype = dtype_of(t.elem_type?).ok()?;
    let shape = t
        .shape
        .as_ref()?
        .dim
        .iter()
        .map(|d| crate::dims::dim_of(d).unwrap_or(Dim::Any))
        .collect();
    Some(Type::Tensor(Arc::new(TensorType { shape, dtype })))
}

/// Why `node` cannot be kept opaque, if it cannot: an output whose type is not declared, or a
/// subgraph (an attribute of `If`, `Loop`, `Scan`, ...) that reads a value of the graph by
/// name other than a graph input (whose name the written model keeps; other values are
/// renamed, and the node's inputs do not say what its subgraphs read).
pub(crate) fn cannot_keep(
    node: &NodeProto,
    opset: i64,
    declared: &FxHashMap<String, Type>,
    graph_inputs: &FxHashSet<&str>,
) -> Option<String> {
    if let Some(o) = node
        .output
        .iter()
        .find(|o| !o.is_empty() && !declared.contains_key(o.as_str()))
        && !super::opaque_types::has_rule(node, opset)
    {
        return Some(format!("output `{o}` has no declared type"));
    }
    let mut outer = Vec::new();
    for a in &node.attribute {
        for g in a.g.iter().chain(&a.graphs) {
            free_names(g, &mut outer);
        }
    }
    outer
        .into_iter()
        .find(|n| !graph_inputs.contains(n.as_str()))
        .map(|n| format!("a subgraph reads `{n}` of the graph by name"))
}

/// The names a subgraph (and the subgraphs in it) reads without defining them.
fn free_names(g: &GraphProto, out: &mut Vec<String>) {
    let mut defined: FxHashSet<&str> = g
        .input
        .iter()
        .map(|i| i.name())
        .chain(g.initializer.iter().map(|t| t.name()))
        .collect();
    for n in &g.node {
        let mut used: Vec<String> = n.input.iter().filter(|i| !i.is_empty()).cloned().collect();
        for a in &n.attribute {
            for sub in a.g.iter().chain(&a.graphs) {
                free_names(sub, &mut used);
            }
        }
        for u in used {
            if !defined.contains(u.as_str()) && !out.contains(&u) {
                out.push(u);
            }
        }
        defined.extend(n.output.iter().map(String::as_str));
    }
    for o in &g.output {
        if !defined.contains(o.name()) && !out.iter().any(|u| u == o.name()) {
            out.push(o.name().to_string());
        }
    }
}

impl Importer {
    /// `node` as one `onnx.node` call (its outputs projected from the call when it has several):
    /// one value per output position (the call itself where an output is left out).
    pub(crate) fn opaque(
        &mut self,
        node: &NodeProto,
        index: usize,
        inputs: &[Option<ExprId>],
        declared: &FxHashMap<String, Type>,
    ) -> Result<Vec<ExprId>, String> {
        let mut types = Vec::with_capacity(node.output.len());
        for o in &node.output {
            if o.is_empty() {
                types.push("-".to_string());
                continue;
            }
            let ty = match declared.get(o) {
                Some(t) => t.clone(),
                None => self.infer_output(node, inputs).ok_or_else(|| {
                    format!("output `{o}` has no declared type and irpass cannot infer it")
                })?,
            };
            types.push(
                encode_types(std::slice::from_ref(&ty))
                    .ok_or("an output is not a tensor of a known element type")?,
            );
        }
        let domain = node.domain().to_string();
        let version = if matches!(domain.as_str(), "" | "ai.onnx") {
            self.opset
        } else {
            self.domains.get(&domain).copied().unwrap_or(1)
        };
        let absent: Vec<AttrValue> = inputs
            .iter()
            .enumerate()
            .filter(|(_, e)| e.is_none())
            .map(|(i, _)| AttrValue::Int(i as i64))
            .collect();
        let args: Vec<ExprId> = inputs.iter().flatten().copied().collect();
        let mut attrs = Attrs::new();
        attrs.set("op_type", AttrValue::Str(node.op_type().to_string()));
        attrs.set("domain", AttrValue::Str(domain));
        attrs.set("version", AttrValue::Int(version));
        attrs.set("types", AttrValue::Str(types.join(";")));
        attrs.set(
            "attributes",
            AttrValue::Str(encode_attributes(&node.attribute)),
        );
        attrs.set("absent", AttrValue::List(absent));
        attrs.set("id", AttrValue::Int(index as i64));
        let call = self.b.op(OPAQUE_OP, &args, attrs)?;
        *self.kept.entry(super::qualified_op(node)).or_default() += 1;
        if node.output.len() == 1 {
            return Ok(vec![call]);
        }
        let mut k = 0;
        Ok(node
            .output
            .iter()
            .map(|o| {
                if o.is_empty() {
                    return call;
                }
                k += 1;
                self.b.proj(call, k - 1)
            })
            .collect())
    }
}
