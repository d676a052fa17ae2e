//! Writing a call of a native operator ([`crate::native`]) as its ONNX node.

use irpass_ir::op::AttrKind;
use irpass_ir::{AttrValue, Attrs, Type};

use super::graph::{GraphBuilder, Val, attr_float, attr_floats, attr_int, attr_ints, attr_string};
use crate::error::{OnnxError, Result};
use crate::native::Native;
use crate::proto::attribute_proto::AttributeType;
use crate::proto::{AttributeProto, GraphProto, type_proto};

/// The node of a call of `entry` on `vals`: its inputs where the call's arguments are (an
/// empty name where it left an optional input out), its attributes those the call sets and
/// `graphs` (written for its closure arguments, the last ones), its outputs named fresh;
/// `out` is the call's type.
pub(crate) fn emit(
    g: &mut GraphBuilder,
    entry: &Native,
    attrs: &Attrs,
    vals: &[Val],
    graphs: Vec<GraphProto>,
    out: &Type,
) -> Result<Val> {
    let op = entry.onnx;
    let version = attrs
        .get("version")
        .and_then(AttrValue::as_int)
        .unwrap_or(0);
    // Outside the default domain, the call's version (the newest the entry implements where
    // the call records none, as one written by hand) is the domain's opset written.
    if !entry.domain.is_empty() {
        let newest = entry.versions.last().copied().unwrap_or(1);
        let version = if version == 0 { newest } else { version };
        return emit_at(g, entry, attrs, vals, graphs, out, version);
    }
    if !entry.implements(g.opset) {
        return Err(OnnxError::Export(format!(
            "cannot write opset {}: irpass defines {op} as its versions {:?} do",
            g.opset, entry.versions
        )));
    }
    if version != 0 && entry.recorded_version(g.opset) != version {
        return Err(OnnxError::Export(format!(
            "cannot write opset {}: the `onnx.{op}` call follows {op}-{version}, and opset {} has {op}-{}",
            g.opset,
            g.opset,
            entry.recorded_version(g.opset)
        )));
    }
    emit_at(g, entry, attrs, vals, graphs, out, g.opset)
}

/// [`emit`] at version `version` of the operator's domain.
fn emit_at(
    g: &mut GraphBuilder,
    entry: &Native,
    attrs: &Attrs,
    vals: &[Val],
    graphs: Vec<GraphProto>,
    out: &Type,
    version: i64,
) -> Result<Val> {
    let op = entry.onnx;
    if graphs.len() != entry.bodies.len() || vals.len() < graphs.len() {
        return Err(OnnxError::Export(format!(
            "`onnx.{op}`: its graph attributes are not all written"
        )));
    }
    let vals = &vals[..vals.len() - graphs.len()];
    let mut attributes: Vec<AttributeProto> = Vec::new();
    for spec in entry.attrs {
        let Some(v) = attrs.get(spec.name) else {
            continue;
        };
        attributes.push(match (spec.kind, v) {
            (AttrKind::Int | AttrKind::OptInt, AttrValue::Int(i)) => attr_int(spec.name, *i),
            (AttrKind::Float, v) => attr_float(spec.name, v.as_float().unwrap_or_default()),
            (AttrKind::Str, AttrValue::Str(s)) if entry.tensor_attrs.contains(&spec.name) => {
                tensor_attribute(spec.name, s)
                    .map_err(|e| OnnxError::Export(format!("`onnx.{op}`: {e}")))?
            }
            (AttrKind::Str, AttrValue::Str(s)) => attr_string(spec.name, s),
            (AttrKind::Ints | AttrKind::OptInts, v) => {
                attr_ints(spec.name, &v.as_int_list().unwrap_or_default())
            }
            (AttrKind::Floats, v) => attr_floats(spec.name, &v.as_float_list().unwrap_or_default()),
            (AttrKind::Strs, AttrValue::List(items)) => {
                let items: Vec<&str> = items.iter().filter_map(AttrValue::as_str).collect();
                super::graph::attr_strings(spec.name, &items)
            }
            (_, AttrValue::Null) => continue,
            (_, other) => {
                return Err(OnnxError::Export(format!(
                    "`onnx.{op}`: attribute `{}` = {other} is not of its kind",
                    spec.name
                )));
            }
        });
    }
    if op == "Optional" && vals.is_empty() {
        attributes.push(optional_type(out)?);
    }
    attributes.extend(
        entry
            .bodies
            .iter()
            .zip(graphs)
            .map(|(name, graph)| super::graph::attr_graph(name, graph)),
    );
    let inputs = super::opaque::node_inputs(attrs, vals)
        .map_err(|why| OnnxError::Export(format!("`onnx.{op}`: {why}")))?;
    let n = attrs
        .get("outputs")
        .and_then(AttrValue::as_int)
        .map_or(1, |n| n.max(1) as usize);
    let outputs = g.opaque_node(
        op,
        entry.domain,
        version,
        inputs,
        attributes,
        &vec![true; n],
    );
    Ok(match <[String; 1]>::try_from(outputs) {
        Ok([one]) => Val::Tensor(one),
        Err(many) => Val::Tuple(many.into_iter().map(Val::Tensor).collect()),
    })
}

/// The `type` attribute of an `Optional` of no input: the element type of its output.
fn optional_type(out: &Type) -> Result<AttributeProto> {
    let fail = || OnnxError::Export(format!("`onnx.Optional` of type {out}, not an optional's"));
    let proto = crate::value_type::type_proto(out).map_err(|_| fail())?;
    let Some(type_proto::Value::OptionalType(o)) = proto.value else {
        return Err(fail());
    };
    Ok(AttributeProto {
        name: Some("type".into()),
        r#type: Some(AttributeType::TypeProto as i32),
        tp: o.elem_type.map(|t| *t),
        ..AttributeProto::default()
    })
}

/// Tensor attribute `name` from the base64 text of its `TensorProto` (as the importer keeps
/// it, [`crate::native::tensor_attr`]).
fn tensor_attribute(name: &str, text: &str) -> std::result::Result<AttributeProto, String> {
    let t = crate::native::tensor_of_text(text).map_err(|e| format!("attribute `{name}`: {e}"))?;
    Ok(AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Tensor as i32),
        t: Some(t),
        ..AttributeProto::default()
    })
}
