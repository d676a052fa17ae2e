//! Importing a node of a native operator ([`crate::native`]): one call of `onnx.<OpType>`
//! with the node's inputs and attributes.

use irpass_ir::op::{AttrKind, Op};
use irpass_ir::{AttrValue, Attrs, ExprId, Type};
use rustc_hash::FxHashMap;

use super::Importer;
use crate::native;
use crate::opaque::encode_types;
use crate::proto::attribute_proto::AttributeType;
use crate::proto::{AttributeProto, NodeProto};

/// An attribute's value as the IR holds it, by the kind its schema gives.
fn attr_value(a: &AttributeProto, kind: AttrKind) -> Result<AttrValue, String> {
    let name = a.name();
    if a.ref_attr_name.is_some() {
        return Err(format!(
            "attribute `{name}` refers to a function's attribute"
        ));
    }
    let ty = AttributeType::try_from(a.r#type.unwrap_or(0)).unwrap_or(AttributeType::Undefined);
    Ok(match (kind, ty) {
        (AttrKind::Int | AttrKind::OptInt, AttributeType::Int) => AttrValue::Int(a.i()),
        (AttrKind::Float, AttributeType::Float) => AttrValue::Float(f64::from(a.f())),
        (AttrKind::Str, AttributeType::String) => {
            AttrValue::Str(String::from_utf8_lossy(a.s()).into_owned())
        }
        (AttrKind::Ints | AttrKind::OptInts, AttributeType::Ints) => {
            AttrValue::List(a.ints.iter().map(|&v| AttrValue::Int(v)).collect())
        }
        (AttrKind::Strs, AttributeType::Strings) => AttrValue::List(
            a.strings
                .iter()
                .map(|s| AttrValue::Str(String::from_utf8_lossy(s).into_owned()))
                .collect(),
        ),
        (AttrKind::Floats, AttributeType::Floats) => AttrValue::List(
            a.floats
                .iter()
                .map(|&v| AttrValue::Float(f64::from(v)))
                .collect(),
        ),
        _ => {
            return Err(format!(
                "attribute `{name}` is of another kind than the operator's"
            ));
        }
    })
}

/// A tensor attribute's value as the IR holds it: the base64 text of its `TensorProto`
/// ([`native::tensor_attr`] reads it).
fn tensor_attr_value(a: &AttributeProto) -> Result<AttrValue, String> {
    let t =
        a.t.as_ref()
            .ok_or_else(|| format!("attribute `{}` is not a tensor", a.name()))?;
    if t.data_location == Some(crate::proto::tensor_proto::DataLocation::External as i32) {
        return Err(format!("attribute `{}` has its data in a file", a.name()));
    }
    Ok(AttrValue::Str(native::tensor_text(t)))
}

impl Importer {
    /// The model's opset of `domain` (`""`: the default one; 0 where it imports none).
    pub(crate) fn opset_of(&self, domain: &str) -> i64 {
        match domain {
            "" | "ai.onnx" => self.opset,
            d => self.domains.get(d).copied().unwrap_or(0),
        }
    }

    /// `node` as a call of its native operator, if it has one that implements the model's
    /// version: its outputs in order (the call itself where an output is left out).
    /// `bodies` are its graph attributes as closures, in the order the operator's entry
    /// names them.
    pub(crate) fn native(
        &mut self,
        node: &NodeProto,
        inputs: &[Option<ExprId>],
        declared: &FxHashMap<String, Type>,
        bodies: &[ExprId],
    ) -> Result<Vec<ExprId>, String> {
        let op = node.op_type();
        if op == "ConstantOfShape" && matches!(node.domain(), "" | "ai.onnx") {
            return self.constant_of_shape(node, inputs, declared);
        }
        let entry = native::get(node.domain(), op)
            .ok_or_else(|| format!("{op} has no native definition"))?;
        let opset = self.opset_of(entry.domain);
        if !entry.implements(opset) {
            return Err(format!(
                "irpass defines {op} as its versions {:?} do, not as opset {opset} does",
                entry.versions
            ));
        }
        if bodies.len() != entry.bodies.len() {
            return Err("its graph attributes do not import as closures".into());
        }
        let mut attrs = Attrs::new();
        for a in &node.attribute {
            // (Graph attributes are the closures; `Optional`'s `type` is its output's type.)
            if entry.bodies.contains(&a.name()) || (op == "Optional" && a.name() == "type") {
                continue;
            }
            let spec = entry
                .attrs
                .iter()
                .find(|s| s.name == a.name())
                .ok_or_else(|| format!("{op} has no attribute `{}`", a.name()))?;
            let value = match entry.tensor_attrs.contains(&spec.name) {
                true => tensor_attr_value(a)?,
                false => attr_value(a, spec.kind)?,
            };
            attrs.set(spec.name, value);
        }
        // (The closures follow the inputs: a left-out last input is absent too.)
        let given = match bodies {
            [] => inputs
                .iter()
                .rposition(Option::is_some)
                .map_or(0, |i| i + 1),
            _ => inputs.len(),
        };
        let absent: Vec<AttrValue> = (0..given)
            .filter(|&i| inputs[i].is_none())
            .map(|i| AttrValue::Int(i as i64))
            .collect();
        if !absent.is_empty() {
            attrs.set("absent", AttrValue::List(absent));
        }
        if node.output.len() != 1 {
            attrs.set("outputs", AttrValue::Int(node.output.len() as i64));
        }
        let version = entry.recorded_version(opset);
        if version != 0 {
            attrs.set("version", AttrValue::Int(version));
        }
        // The output types the model declares or the importer infers from its inputs' values.
        if let Some(types) = self.output_types(node, inputs, declared) {
            attrs.set("types", AttrValue::Str(types));
        }

        // A shape the importer knows in sizes is given in its simplest form.
        let mut args: Vec<ExprId> = inputs
            .iter()
            .flatten()
            .map(|&e| self.shape_value(e))
            .chain(bodies.iter().copied())
            .collect();
        if op == "Range" {
            for a in &mut args {
                *a = self.as_scalar(*a)?;
            }
        }
        // The call is made only where it types: otherwise the node is kept whole.
        let arg_types = args
            .iter()
            .map(|&e| self.typer.of(self.b.body(), e).cloned())
            .collect::<Option<Vec<_>>>()
            .ok_or("an input's type is unknown")?;
        let ir = Op::get(&entry.ir_name())?;
        let attrs = ir.normalize_attrs(attrs)?;
        ir.infer(&arg_types, &attrs)?;
        let call = self.b.op(ir.name(), &args, attrs)?;
        if node.output.len() == 1 {
            return Ok(vec![call]);
        }
        Ok((0..node.output.len())
            .map(|k| self.b.proj(call, k as u32))
            .collect())
    }

    /// The `types` attribute of a native call of `node`: each output's type as the model
    /// declares it (refined by what the importer infers where a declared size is not static)
    /// or as the importer infers it, `-` for one unknown; `None` when none is known.
    fn output_types(
        &mut self,
        node: &NodeProto,
        inputs: &[Option<ExprId>],
        declared: &FxHashMap<String, Type>,
    ) -> Option<String> {
        let mut inferred: Option<Vec<Option<Type>>> = None;
        let mut known = false;
        let mut types = Vec::with_capacity(node.output.len());
        for (k, o) in node.output.iter().enumerate() {
            let ty = match declared.get(o) {
                // A size the model declares by name (or not at all) that the importer knows
                // statically (a Reshape's target read from constants) is static.
                Some(t) if !is_static(t) => {
                    let found = inferred.get_or_insert_with(|| self.infer_outputs(node, inputs));
                    Some(refined(t, found.get(k).and_then(Option::as_ref)))
                }
                Some(t) => Some(t.clone()),
                None if o.is_empty() => None,
                None => inferred
                    .get_or_insert_with(|| self.infer_outputs(node, inputs))
                    .get(k)
                    .cloned()
                    .flatten(),
            };
            match ty.and_then(|t| encode_types(std::slice::from_ref(&t))) {
                Some(text) => {
                    known = true;
                    types.push(text);
                }
                None => types.push("-".to_string()),
            }
        }
        known.then(|| types.join(";"))
    }

    /// `e`, a one-element vector, as the scalar it holds (`Range` takes scalars; ONNX Runtime
    /// also reads one-element vectors, and an inlined `If` branch can make one visible).
    pub(crate) fn as_scalar(&mut self, e: ExprId) -> Result<ExprId, String> {
        if self.static_shape(e).as_deref() != Some(&[1]) {
            return Ok(e);
        }
        let attrs = Attrs::from_pairs([("newshape", AttrValue::List(Vec::new()))]);
        self.b.op("reshape", &[e], attrs)
    }

    /// `ConstantOfShape` of a run-time shape: an `Expand` of its value (a scalar) to the
    /// shape. (Its `value` is a tensor, which the IR's attributes do not hold, so it has no
    /// native definition of its own; where the shape is known it imports as `full`.)
    fn constant_of_shape(
        &mut self,
        node: &NodeProto,
        inputs: &[Option<ExprId>],
        declared: &FxHashMap<String, Type>,
    ) -> Result<Vec<ExprId>, String> {
        let value = match node.attribute.iter().find(|a| a.name() == "value") {
            Some(a) => Some(a.t.as_ref().ok_or("the value attribute is not a tensor")?),
            None => None,
        };
        let fill = super::ops::fill_value(value)?;
        let fill = self.b.constant(std::sync::Arc::new(fill));
        let expand = NodeProto {
            op_type: Some("Expand".into()),
            input: vec![
                String::new(),
                node.input.first().cloned().unwrap_or_default(),
            ],
            output: node.output.clone(),
            name: node.name.clone(),
            ..NodeProto::default()
        };
        let shape = *inputs.first().ok_or("the shape is missing")?;
        self.native(&expand, &[Some(fill), shape], declared, &[])
    }
}

/// Whether `t` is a tensor type of static shape (or not a tensor type, which has no sizes).
fn is_static(t: &Type) -> bool {
    match t {
        Type::Tensor(t) => t.shape.iter().all(|d| d.value().is_some()),
        _ => true,
    }
}

/// The declared type `t` with each size it does not give statically taken from `found`, the
/// type the importer found, where that is static (of the same rank and dtype).
fn refined(t: &Type, found: Option<&Type>) -> Type {
    match (t, found) {
        (Type::Tensor(d), Some(Type::Tensor(f))) if d.rank() == f.rank() && d.dtype == f.dtype => {
            let shape = d
                .shape
                .iter()
                .zip(&f.shape)
                .map(|(&a, &b)| match (a, b) {
                    (irpass_ir::Dim::Static(_), _) => a,
                    (_, irpass_ir::Dim::Static(_)) => b,
                    _ => a,
                })
                .collect();
            Type::with_dims(shape, d.dtype)
        }
        _ => t.clone(),
    }
}
