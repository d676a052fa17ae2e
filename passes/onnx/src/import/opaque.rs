//! Importing a node as an opaque call (`onnx.node`, see [`crate::opaque`]): one that irpass
//! does not convert, whose outputs' types the model declares or the importer infers
//! ([`super::opaque_types`]).

use irpass_ir::{AttrValue, Attrs, ExprId, Type};
use rustc_hash::FxHashMap;

use super::Importer;
use crate::error::{OnnxError, Result};
use crate::opaque::{OPAQUE_OP, encode_attributes, encode_types};
use crate::proto::attribute_proto::AttributeType;
use crate::proto::{AttributeProto, GraphProto, NodeProto, TensorProto};

/// The types the graph and its subgraphs declare for their values (`value_info` and
/// outputs), by name (value names are unique in a model, subgraphs included).
pub(crate) fn declared_types(g: &GraphProto) -> FxHashMap<String, Type> {
    super::with_subgraphs(g)
        .into_iter()
        .flat_map(|g| g.value_info.iter().chain(&g.output))
        .filter_map(|v| {
            Some((
                v.name().to_string(),
                crate::value_type::ir_type(v.r#type.as_ref()?)?,
            ))
        })
        .collect()
}

/// Why `node` cannot be kept opaque, if it cannot: an output whose type is neither declared
/// nor one the importer infers ([`super::opaque_types`]).
pub(crate) fn cannot_keep(
    node: &NodeProto,
    opset: i64,
    declared: &FxHashMap<String, Type>,
) -> Option<String> {
    node.output
        .iter()
        .find(|o| !o.is_empty() && !declared.contains_key(o.as_str()))
        .filter(|_| !super::opaque_types::has_rule(node, opset))
        .map(|o| format!("output `{o}` has no declared type"))
}

/// Whether `t` holds elements of a type ONNX defines and the IR does not carry (strings,
/// complex numbers).
pub(crate) fn is_opaque_tensor(t: &TensorProto) -> bool {
    let elem_type = t.data_type.unwrap_or(0);
    crate::tensor::dtype_of(elem_type).is_err()
        && crate::proto::tensor_proto::DataType::try_from(elem_type)
            .is_ok_and(|d| d != crate::proto::tensor_proto::DataType::Undefined)
}

impl Importer {
    /// An initializer of an element type the IR does not carry, as the `Constant` node that
    /// holds it, kept whole (written back as that node); `id` is unique among the graph's
    /// kept nodes.
    pub(crate) fn opaque_constant(&mut self, t: &TensorProto, id: usize) -> Result<ExprId> {
        let name = t.name.clone().unwrap_or_default();
        let node = NodeProto {
            op_type: Some("Constant".into()),
            name: Some(name.clone()),
            output: vec![name.clone()],
            attribute: vec![AttributeProto {
                name: Some("value".into()),
                r#type: Some(AttributeType::Tensor as i32),
                t: Some(t.clone()),
                ..AttributeProto::default()
            }],
            ..NodeProto::default()
        };
        let ty = crate::value_type::constant_type(t)
            .ok_or_else(|| OnnxError::Invalid(format!("tensor `{name}` has no readable type")))?;
        let declared = FxHashMap::from_iter([(name.clone(), ty)]);
        let outputs = self
            .opaque(&node, id, &[], &declared, &[])
            .map_err(|e| OnnxError::Invalid(format!("tensor `{name}`: {e}")))?;
        Ok(outputs[0])
    }

    /// `node` as one `onnx.node` call (its outputs projected from the call when it has several):
    /// one value per output position (the call itself where an output is left out). `bodies`
    /// are closures standing for graph attributes (by name): trailing arguments, the attributes
    /// left out of those the call carries.
    pub(crate) fn opaque(
        &mut self,
        node: &NodeProto,
        index: usize,
        inputs: &[Option<ExprId>],
        declared: &FxHashMap<String, Type>,
        bodies: &[(String, ExprId)],
    ) -> Result<Vec<ExprId>, String> {
        let mut types = Vec::with_capacity(node.output.len());
        let mut inferred: Option<Vec<Option<Type>>> = None;
        for (k, o) in node.output.iter().enumerate() {
            if o.is_empty() {
                types.push("-".to_string());
                continue;
            }
            let ty = match declared.get(o) {
                Some(t) => t.clone(),
                None => inferred
                    .get_or_insert_with(|| self.infer_outputs(node, inputs))
                    .get(k)
                    .cloned()
                    .flatten()
                    .ok_or_else(|| {
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
        // A shape the importer knows in sizes is given in its simplest form.
        let mut args: Vec<ExprId> = inputs
            .iter()
            .flatten()
            .map(|&e| self.shape_value(e))
            .collect();
        // (So that the written model is valid where the types are known.)
        if node.op_type() == "Range" && matches!(domain.as_str(), "" | "ai.onnx") {
            for a in &mut args {
                *a = self.as_scalar(*a)?;
            }
        }
        // The subgraphs imported as closures are arguments; the attributes it carries are the
        // others.
        let kept_attributes: Vec<AttributeProto> = node
            .attribute
            .iter()
            .filter(|a| !bodies.iter().any(|(name, _)| name == a.name()))
            .cloned()
            .collect();
        // The outer values its other subgraphs read (a plugin's graph reading a value of the
        // graph): trailing arguments, so that they stay computed and the writer can name them.
        let captures = crate::opaque::captures(&kept_attributes);
        for name in &captures {
            match self.values.get(name) {
                Some(&e) => args.push(e),
                None => {
                    return Err(format!(
                        "a subgraph reads `{name}`, which the graph does not compute before the node"
                    ));
                }
            }
        }
        let mut attrs = Attrs::new();
        attrs.set("op_type", AttrValue::Str(node.op_type().to_string()));
        attrs.set("domain", AttrValue::Str(domain));
        attrs.set("version", AttrValue::Int(version));
        attrs.set("types", AttrValue::Str(types.join(";")));
        attrs.set(
            "attributes",
            AttrValue::Str(encode_attributes(&kept_attributes, &captures)),
        );
        let names: Vec<&str> = bodies.iter().map(|(name, _)| name.as_str()).collect();
        attrs.set("subgraphs", AttrValue::Str(names.join(",")));
        args.extend(bodies.iter().map(|(_, closure)| *closure));
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
