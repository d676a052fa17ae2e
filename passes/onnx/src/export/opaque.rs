//! Writing an opaque call (`onnx.node`, see [`crate::opaque`]) back as the node it came from.

use irpass_ir::{AttrValue, Attrs};

use super::graph::{GraphBuilder, Val};
use crate::error::{OnnxError, Result};
use crate::opaque::{decode_attributes, decode_types};
use crate::proto::GraphProto;

/// The node of an `onnx.node` call on `vals`: its inputs where the call's arguments are (an
/// empty name where it left an optional input out), its outputs named fresh; `graphs` are the
/// subgraphs written for its closure arguments (the last ones), the graph attributes named
/// by its `subgraphs` attribute.
pub(crate) fn emit(
    g: &mut GraphBuilder,
    attrs: &Attrs,
    vals: &[Val],
    graphs: Vec<GraphProto>,
) -> Result<Val> {
    let text = |name: &str| {
        attrs
            .get(name)
            .and_then(AttrValue::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let (op_type, domain) = (text("op_type"), text("domain"));
    let fail = |why: String| OnnxError::Export(format!("the opaque `{op_type}` node: {why}"));
    let version = attrs
        .get("version")
        .and_then(AttrValue::as_int)
        .unwrap_or(0);
    // A default-domain node is written at another opset only where the operator's version
    // there is the one the model used (`Range` is Range-11 at opsets 11 to the newest).
    let same_version = || {
        let at = |opset| crate::opset::version_at(&op_type, opset);
        at(version).is_some() && at(version) == at(g.opset)
    };
    if matches!(domain.as_str(), "" | "ai.onnx") && version != g.opset && !same_version() {
        return Err(fail(format!(
            "irpass keeps it as opset {version} wrote it, and {op_type} at opset {} is another version",
            g.opset
        )));
    }
    let (mut attributes, captures) = decode_attributes(&text("attributes")).map_err(fail)?;
    let names = text("subgraphs");
    let names: Vec<&str> = names.split(',').filter(|n| !n.is_empty()).collect();
    if names.len() != graphs.len() || vals.len() < graphs.len() {
        return Err(fail("its subgraphs are not all written".into()));
    }
    let vals = &vals[..vals.len() - graphs.len()];
    // The trailing arguments are the outer values the subgraphs read: the subgraphs read them
    // by the names they are written with.
    let Some(own) = vals.len().checked_sub(captures.len()) else {
        return Err(fail("fewer arguments than captured values".into()));
    };
    let mut renames = rustc_hash::FxHashMap::default();
    for (name, v) in captures.iter().zip(&vals[own..]) {
        renames.insert(name.clone(), v.tensor()?.to_string());
    }
    crate::opaque::rename_captures(&mut attributes, &renames);
    attributes.extend(
        names
            .iter()
            .zip(graphs)
            .map(|(name, graph)| super::graph::attr_graph(name, graph)),
    );
    let inputs = node_inputs(attrs, &vals[..own]).map_err(fail)?;
    let slots = decode_types(&text("types")).map_err(fail)?;
    let present: Vec<bool> = slots.iter().map(Option::is_some).collect();
    let outputs = g.opaque_node(&op_type, &domain, version, inputs, attributes, &present);
    Ok(match outputs.as_slice() {
        [one] if slots.len() == 1 => Val::Tensor(one.clone()),
        _ => Val::Tuple(outputs.into_iter().map(Val::Tensor).collect()),
    })
}

/// A node's input names: the arguments' around the positions of the optional inputs the call
/// leaves out (its `absent` attribute), which are empty names.
pub(crate) fn node_inputs(attrs: &Attrs, vals: &[Val]) -> std::result::Result<Vec<String>, String> {
    let absent: Vec<usize> = attrs
        .get("absent")
        .and_then(AttrValue::as_int_list)
        .unwrap_or_default()
        .into_iter()
        .map(|i| i as usize)
        .collect();
    let mut args = vals.iter();
    let mut inputs = Vec::with_capacity(vals.len() + absent.len());
    for pos in 0..vals.len() + absent.len() {
        if absent.contains(&pos) {
            inputs.push(String::new());
        } else {
            let v = args.next().ok_or("fewer arguments than inputs")?;
            inputs.push(v.tensor().map_err(|e| e.to_string())?.to_string());
        }
    }
    Ok(inputs)
}
