//! ONNX nodes irpass does not convert, kept whole: an IR operator, `onnx.node`, that carries the
//! node's operator (type, domain, opset version), its attributes exactly as the model wrote
//! them, which optional inputs it leaves out, and its outputs' types as the model declares
//! them. The passes see an opaque call: no kernel, so nothing folds through it, no fusion, and
//! a unique `id`, so that two such calls are never merged. The exporter writes the node back.
//! (An operator irpass defines is imported as its native operator instead, [`crate::native`].)

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use irpass_ir::op::{Arity, AttrDefault, AttrKind, AttrReader, AttrSpec, OpDef, OpPattern};
use irpass_ir::{DType, Type, Value};
use prost::Message as _;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::proto::{AttributeProto, GraphProto, NodeProto};

/// The IR operator of a kept ONNX node.
pub const OPAQUE_OP: &str = "onnx.node";

inventory::submit! {
    OpDef {
        name: OPAQUE_OP,
        description: "An ONNX node irpass does not convert, kept whole and written back as it \
                      came: its operator (`op_type`, `domain`, `version`), its attributes \
                      (`attributes`: the model's AttributeProtos, base64), the positions of the \
                      optional inputs it leaves out (`absent`), its outputs' types as the \
                      model declares them (`types`), and the names of the graph attributes \
                      given as closures, its last arguments (`subgraphs`, comma-separated). \
                      No kernel: the interpreter cannot run it.",
        arity: Arity::AtLeast(0),
        attrs: &[
            AttrSpec { name: "op_type", kind: AttrKind::Str, default: AttrDefault::Required },
            AttrSpec { name: "domain", kind: AttrKind::Str, default: AttrDefault::Str("") },
            AttrSpec { name: "version", kind: AttrKind::Int, default: AttrDefault::Int(0) },
            AttrSpec { name: "types", kind: AttrKind::Str, default: AttrDefault::Required },
            AttrSpec { name: "attributes", kind: AttrKind::Str, default: AttrDefault::Str("") },
            AttrSpec { name: "absent", kind: AttrKind::Ints, default: AttrDefault::Ints(&[]) },
            AttrSpec { name: "subgraphs", kind: AttrKind::Str, default: AttrDefault::Str("") },
            AttrSpec { name: "id", kind: AttrKind::Int, default: AttrDefault::Required },
        ],
        pattern: OpPattern::Opaque,
        type_rel: opaque_rel,
        kernel: opaque_kernel,
    }
}

fn opaque_rel(_args: &[Type], r: &AttrReader<'_>) -> Result<Type, String> {
    let slots = decode_types(&r.str("types"))
        .map_err(|e| format!("`{OPAQUE_OP}` ({}): {e}", r.str("op_type")))?;
    // One output: its type; several: a tuple of those the node writes.
    Ok(match <[Option<Type>; 1]>::try_from(slots) {
        Ok([Some(one)]) => one,
        Ok([None]) => Type::Tuple(Vec::new()),
        Err(many) => Type::Tuple(many.into_iter().flatten().collect()),
    })
}

fn opaque_kernel(_args: &[Value], r: &AttrReader<'_>) -> Result<Value, String> {
    let domain = r.str("domain");
    let op = if domain.is_empty() {
        r.str("op_type")
    } else {
        format!("{domain}.{}", r.str("op_type"))
    };
    Err(format!(
        "`{op}` is kept opaque (irpass has no definition of it): the interpreter cannot run it"
    ))
}

/// Output types in the `types` attribute's form: `float32[batch,3];int64[]` (an output the
/// node leaves out is `-`; a dimension is a size, `?`, or a name, quoted as the text format
/// quotes it when it is not a word; a value the IR does not model is its opaque type's ONNX
/// text, `seq(tensor(float)[?,3])`, as `crate::value_type` writes it).
pub(crate) fn encode_types(types: &[Type]) -> Option<String> {
    let mut parts = Vec::with_capacity(types.len());
    for t in types {
        if let Type::Opaque(name) = t {
            parts.push(name.as_str().to_string());
            continue;
        }
        let Type::Tensor(t) = t else { return None };
        parts.push(format!(
            "{}{}",
            t.dtype.name(),
            crate::dims::dims_text(&t.shape)
        ));
    }
    Some(parts.join(";"))
}

/// The types of a `types` attribute, `None` for an output left out.
pub(crate) fn decode_types(text: &str) -> Result<Vec<Option<Type>>, String> {
    let mut out = Vec::new();
    let mut rest = text;
    loop {
        let (slot, after) = decode_slot(rest)?;
        out.push(slot);
        match after.strip_prefix(';') {
            Some(more) => rest = more,
            None if after.is_empty() => return Ok(out),
            None => return Err(format!("`{after}` after a type")),
        }
    }
}

/// One type (or `-`) at the start of `text`, and the text after it.
fn decode_slot(text: &str) -> Result<(Option<Type>, &str), String> {
    if let Some(after) = text.strip_prefix('-') {
        return Ok((None, after));
    }
    if crate::value_type::starts_type_text(text) {
        let (_, after) = crate::value_type::read(text)?;
        let name = &text[..text.len() - after.len()];
        return Ok((Some(Type::Opaque(irpass_ir::Symbol::new(name))), after));
    }
    let end = text
        .find('[')
        .ok_or_else(|| format!("`{text}` is not a type (dtype[dims])"))?;
    let dtype = &text[..end];
    let dtype = DType::from_name(dtype).ok_or_else(|| format!("unknown dtype `{dtype}`"))?;
    let (shape, after) = crate::dims::read_dims(&text[end..])
        .map_err(|e| format!("`{text}` is not a type (dtype[dims]): {e}"))?;
    Ok((Some(Type::with_dims(shape, dtype)), after))
}

/// A node's attributes and the outer values its subgraphs read (`captures`, in the order of
/// the call's trailing arguments), as the `attributes` attribute holds them: one `NodeProto`
/// whose `attribute` and `input` they are, base64.
pub(crate) fn encode_attributes(attrs: &[AttributeProto], captures: &[String]) -> String {
    if attrs.is_empty() && captures.is_empty() {
        return String::new();
    }
    let holder = NodeProto {
        attribute: attrs.to_vec(),
        input: captures.to_vec(),
        ..NodeProto::default()
    };
    STANDARD.encode(holder.encode_to_vec())
}

/// The attributes and captures an `attributes` attribute holds.
pub(crate) fn decode_attributes(text: &str) -> Result<(Vec<AttributeProto>, Vec<String>), String> {
    if text.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let bytes = STANDARD
        .decode(text)
        .map_err(|e| format!("the attributes are not base64: {e}"))?;
    NodeProto::decode(bytes.as_slice())
        .map(|n| (n.attribute, n.input))
        .map_err(|e| format!("the attributes do not decode: {e}"))
}

/// The names the subgraphs of `attrs` read from outside themselves, each once, in the order
/// first read.
pub(crate) fn captures(attrs: &[AttributeProto]) -> Vec<String> {
    captures_of(attrs).into_iter().map(str::to_string).collect()
}

/// [`captures`], borrowed from `attrs`.
pub(crate) fn captures_of(attrs: &[AttributeProto]) -> Vec<&str> {
    let mut out = Vec::new();
    for a in attrs {
        for g in a.g.iter().chain(&a.graphs) {
            free_names(g, &mut out);
        }
    }
    out
}

/// The values node `n` reads: its inputs and, for a node with subgraphs, the outer values
/// they read (which a graph rewrite must count as uses, and rename with the value).
pub(crate) fn node_reads(n: &NodeProto) -> impl Iterator<Item = &str> {
    let captured = if n
        .attribute
        .iter()
        .any(|a| a.g.is_some() || !a.graphs.is_empty())
    {
        captures_of(&n.attribute)
    } else {
        Vec::new()
    };
    n.input
        .iter()
        .map(String::as_str)
        .filter(|i| !i.is_empty())
        .chain(captured)
}

/// The names a subgraph (and the subgraphs in it) reads without defining them.
fn free_names<'g>(g: &'g GraphProto, out: &mut Vec<&'g str>) {
    let mut defined: FxHashSet<&str> = g
        .input
        .iter()
        .map(|i| i.name())
        .chain(g.initializer.iter().map(|t| t.name()))
        .collect();
    for n in &g.node {
        let mut used: Vec<&str> = n
            .input
            .iter()
            .map(String::as_str)
            .filter(|i| !i.is_empty())
            .collect();
        for a in &n.attribute {
            for sub in a.g.iter().chain(&a.graphs) {
                free_names(sub, &mut used);
            }
        }
        for u in used {
            if !defined.contains(u) && !out.contains(&u) {
                out.push(u);
            }
        }
        defined.extend(n.output.iter().map(String::as_str));
    }
    for o in &g.output {
        if !defined.contains(o.name()) && !out.contains(&o.name()) {
            out.push(o.name());
        }
    }
}

/// Renames, in the subgraphs of `attrs`, each read of an outer value by `names` (old name to
/// new), leaving names a subgraph defines itself alone.
pub(crate) fn rename_captures(attrs: &mut [AttributeProto], names: &FxHashMap<String, String>) {
    for a in attrs {
        for g in a.g.iter_mut().chain(a.graphs.iter_mut()) {
            rename_free(g, names, &FxHashSet::default());
        }
    }
}

fn rename_free(g: &mut GraphProto, names: &FxHashMap<String, String>, outer: &FxHashSet<String>) {
    let mut defined: FxHashSet<String> = outer.clone();
    defined.extend(g.input.iter().map(|i| i.name().to_string()));
    defined.extend(g.initializer.iter().map(|t| t.name().to_string()));
    let rename = |name: &mut String, defined: &FxHashSet<String>| {
        if !defined.contains(name.as_str())
            && let Some(new) = names.get(name.as_str())
        {
            *name = new.clone();
        }
    };
    for n in &mut g.node {
        for i in n.input.iter_mut().filter(|i| !i.is_empty()) {
            rename(i, &defined);
        }
        for a in &mut n.attribute {
            for sub in a.g.iter_mut().chain(a.graphs.iter_mut()) {
                rename_free(sub, names, &defined);
            }
        }
        defined.extend(n.output.iter().cloned());
    }
    for o in &mut g.output {
        if let Some(name) = o.name.as_mut() {
            rename(name, &defined);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use irpass_ir::{Dim, Symbol};

    #[test]
    fn types_round_trip_through_their_attribute_form() {
        let types = vec![
            Type::tensor(&[2, 3], DType::Float32),
            Type::with_dims(
                vec![Dim::Any, Dim::Static(4), Dim::named("batch")],
                DType::Int64,
            ),
            Type::scalar(DType::Bool),
            Type::with_dims(
                vec![Dim::named("2*seq, \"x\""), Dim::named("_n")],
                DType::Float16,
            ),
            Type::Opaque(Symbol::new("seq(tensor(string)[\"a;b\",3])")),
        ];
        let text = encode_types(&types).unwrap();
        assert_eq!(
            text,
            r#"float32[2,3];int64[?,4,batch];bool[];float16["2*seq, \"x\"",_n];seq(tensor(string)["a;b",3])"#
        );
        let decoded: Vec<Type> = decode_types(&text).unwrap().into_iter().flatten().collect();
        assert_eq!(decoded, types);
        assert_eq!(decode_types("-;bool[]").unwrap()[0], None);
        assert!(decode_types("float32[-1]").is_err() && decode_types("f[2]").is_err());
        assert!(decode_types("float32[2").is_err() && decode_types("float32[\"a]").is_err());
        assert!(decode_types("float32[2]x").is_err() && decode_types("float32[2,]").is_err());
    }

    #[test]
    fn attributes_round_trip_exactly() {
        let attrs = vec![AttributeProto {
            name: Some("alpha".into()),
            f: Some(0.5),
            r#type: Some(1),
            ..AttributeProto::default()
        }];
        let captures = vec!["outer".to_string()];
        assert_eq!(
            decode_attributes(&encode_attributes(&attrs, &captures)).unwrap(),
            (attrs, captures)
        );
        assert_eq!(encode_attributes(&[], &[]), "");
        assert!(decode_attributes("not base64!").is_err());
    }
}
