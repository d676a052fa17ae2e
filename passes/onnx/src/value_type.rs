//! The types of ONNX values in the IR. A tensor of an element type the IR carries, with a
//! rank, is a [`Type::Tensor`]; every other value — a tensor of strings or complex numbers, a
//! sequence, an optional, a map, a sparse tensor, an ONNX opaque type — is a [`Type::Opaque`]
//! named by its type's text, which reads back to the same `TypeProto`:
//! `tensor(string)[batch,?]`, `seq(tensor(float)[?,3])`, `optional(seq(tensor(int64)))`,
//! `map(string,tensor(float)[])`, `sparse(float)[4,4]`, `opaque(domain,name)`. Element types
//! are ONNX's names in lower case; dimensions are written as the `types` attribute of a kept
//! node writes them (a size, `?`, or a name); a tensor with no shape has no brackets.

use irpass_ir::{Dim, Symbol, Type};

use crate::proto::tensor_proto::DataType;
use crate::proto::{TensorProto, TensorShapeProto, TypeProto, type_proto};
use crate::tensor::{dtype_of, elem_type_of};

/// The IR's type of an ONNX type: `None` for a tensor of an element type the IR carries but
/// of no known rank (no shape), and for a type with no value.
pub(crate) fn ir_type(t: &TypeProto) -> Option<Type> {
    if let Some(type_proto::Value::TensorType(tensor)) = &t.value
        && let Ok(dtype) = dtype_of(tensor.elem_type?)
    {
        let shape = crate::dims::dims_of(tensor.shape.as_ref()?);
        return Some(Type::with_dims(shape, dtype));
    }
    Some(Type::Opaque(Symbol::new(&text(t)?)))
}

/// The IR's type of the tensor a `TensorProto` holds (its element type and dimensions).
pub(crate) fn constant_type(t: &TensorProto) -> Option<Type> {
    let dims = t.dims.iter().map(|&d| Dim::Static(d)).collect::<Vec<_>>();
    ir_type(&TypeProto {
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: t.data_type,
            shape: Some(shape_proto(&dims)),
        })),
        ..TypeProto::default()
    })
}

/// The dimensions of a tensor of an element type the IR does not carry (an opaque
/// `tensor(string)[n,3]`), where it has a shape.
pub(crate) fn opaque_tensor_dims(name: Symbol) -> Option<Vec<Dim>> {
    match read(name.as_str()).ok()?.0.value? {
        type_proto::Value::TensorType(t) => Some(crate::dims::dims_of(&t.shape?)),
        _ => None,
    }
}

/// The ONNX type of an IR type: a tensor's, or the one an opaque type names.
pub(crate) fn type_proto(t: &Type) -> Result<TypeProto, String> {
    match t {
        Type::Tensor(t) => Ok(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(elem_type_of(t.dtype)),
                shape: Some(shape_proto(&t.shape)),
            })),
            ..TypeProto::default()
        }),
        Type::Opaque(name) => match read(name.as_str())? {
            (proto, "") => Ok(proto),
            (_, rest) => Err(format!("`{rest}` after the type in `{}`", name.as_str())),
        },
        other => Err(format!("{other} is not the type of an ONNX value")),
    }
}

fn shape_proto(dims: &[Dim]) -> TensorShapeProto {
    TensorShapeProto {
        dim: dims.iter().map(|&d| crate::dims::dimension(d)).collect(),
    }
}

/// The text of an ONNX type, `None` for a type with no value or an unknown element type.
pub(crate) fn text(t: &TypeProto) -> Option<String> {
    use type_proto::Value;
    Some(match t.value.as_ref()? {
        Value::TensorType(t) => elem_text("tensor", t.elem_type?, t.shape.as_ref())?,
        Value::SparseTensorType(t) => elem_text("sparse", t.elem_type?, t.shape.as_ref())?,
        Value::SequenceType(s) => format!("seq({})", text(s.elem_type.as_ref()?)?),
        Value::OptionalType(o) => format!("optional({})", text(o.elem_type.as_ref()?)?),
        Value::MapType(m) => format!(
            "map({},{})",
            elem_name(m.key_type?)?,
            text(m.value_type.as_ref()?)?
        ),
        Value::OpaqueType(o) => format!(
            "opaque({},{})",
            o.domain.as_deref().unwrap_or(""),
            o.name.as_deref().unwrap_or("")
        ),
    })
}

fn elem_name(elem_type: i32) -> Option<String> {
    Some(
        DataType::try_from(elem_type)
            .ok()?
            .as_str_name()
            .to_lowercase(),
    )
}

fn elem_text(kind: &str, elem_type: i32, shape: Option<&TensorShapeProto>) -> Option<String> {
    let mut out = format!("{kind}({})", elem_name(elem_type)?);
    if let Some(shape) = shape {
        out.push_str(&crate::dims::dims_text(&crate::dims::dims_of(shape)));
    }
    Some(out)
}

/// Whether `text` starts with an opaque type's text (not a tensor type of the `types`
/// attribute, `float32[...]`).
pub(crate) fn starts_type_text(text: &str) -> bool {
    ["tensor(", "sparse(", "seq(", "optional(", "map(", "opaque("]
        .iter()
        .any(|p| text.starts_with(p))
}

/// The type at the start of `text` ([`text`]'s form) and the text after it.
pub(crate) fn read(text: &str) -> Result<(TypeProto, &str), String> {
    use type_proto::Value;
    let (kind, rest) = text
        .split_once('(')
        .ok_or_else(|| format!("`{text}` is not a type"))?;
    let (value, rest) = match kind {
        "tensor" | "sparse" => {
            let (elem_type, rest) = read_elem(rest)?;
            let (shape, rest) = read_shape(close(rest)?)?;
            let value = if kind == "tensor" {
                Value::TensorType(type_proto::Tensor {
                    elem_type: Some(elem_type),
                    shape,
                })
            } else {
                Value::SparseTensorType(type_proto::SparseTensor {
                    elem_type: Some(elem_type),
                    shape,
                })
            };
            (value, rest)
        }
        "seq" | "optional" => {
            let (inner, rest) = read(rest)?;
            let value = if kind == "seq" {
                Value::SequenceType(Box::new(type_proto::Sequence {
                    elem_type: Some(Box::new(inner)),
                }))
            } else {
                Value::OptionalType(Box::new(type_proto::Optional {
                    elem_type: Some(Box::new(inner)),
                }))
            };
            (value, close(rest)?)
        }
        "map" => {
            let (key_type, rest) = read_elem(rest)?;
            let rest = rest
                .strip_prefix(',')
                .ok_or_else(|| format!("`{rest}`: expected `,` after a map's key type"))?;
            let (inner, rest) = read(rest)?;
            let value = Value::MapType(Box::new(type_proto::Map {
                key_type: Some(key_type),
                value_type: Some(Box::new(inner)),
            }));
            (value, close(rest)?)
        }
        "opaque" => {
            let (body, rest) = rest
                .split_once(')')
                .ok_or_else(|| format!("`{rest}`: expected `)`"))?;
            let (domain, name) = body.split_once(',').unwrap_or((body, ""));
            let value = Value::OpaqueType(type_proto::Opaque {
                domain: Some(domain.into()),
                name: Some(name.into()),
            });
            (value, rest)
        }
        other => return Err(format!("`{other}` is not a kind of ONNX type")),
    };
    Ok((
        TypeProto {
            value: Some(value),
            ..TypeProto::default()
        },
        rest,
    ))
}

/// `text` after its leading `)`.
fn close(text: &str) -> Result<&str, String> {
    text.strip_prefix(')')
        .ok_or_else(|| format!("`{text}`: expected `)`"))
}

/// An element type's name (`float`, `string`) at the start of `text`.
fn read_elem(text: &str) -> Result<(i32, &str), String> {
    let end = text
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(text.len());
    let (word, rest) = text.split_at(end);
    let elem = DataType::from_str_name(&word.to_uppercase())
        .filter(|d| *d != DataType::Undefined)
        .ok_or_else(|| format!("`{word}` is not an ONNX element type"))?;
    Ok((elem as i32, rest))
}

/// `[d,...]` at the start of `text`, if there.
fn read_shape(text: &str) -> Result<(Option<TensorShapeProto>, &str), String> {
    if !text.starts_with('[') {
        return Ok((None, text));
    }
    let (dims, rest) = crate::dims::read_dims(text)?;
    Ok((Some(shape_proto(&dims)), rest))
}

/// The type two branches agree on: one dtype and rank, a size where both have it, `?` else;
/// an opaque type where both have the same.
pub(crate) fn join(a: &Type, b: &Type) -> Option<Type> {
    let (Type::Tensor(x), Type::Tensor(y)) = (a, b) else {
        return (a == b).then(|| a.clone());
    };
    if x.dtype != y.dtype || x.rank() != y.rank() {
        return None;
    }
    let shape = x
        .shape
        .iter()
        .zip(&y.shape)
        .map(|(&p, &q)| if p == q { p } else { Dim::Any })
        .collect();
    Some(Type::with_dims(shape, x.dtype))
}

/// The opaque type of the sequence of elements of ONNX type `elem`.
pub(crate) fn sequence(elem: TypeProto) -> Type {
    Type::Opaque(Symbol::new(
        &text(&TypeProto {
            value: Some(type_proto::Value::SequenceType(Box::new(
                type_proto::Sequence {
                    elem_type: Some(Box::new(elem)),
                },
            ))),
            ..TypeProto::default()
        })
        .expect("a type built from known parts"),
    ))
}

/// The opaque type of the sequence of elements of IR type `elem`, if it is an ONNX value's.
pub(crate) fn sequence_of(elem: &Type) -> Option<Type> {
    Some(sequence(type_proto(elem).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_type_reads_back_from_its_text() {
        for text in [
            "tensor(string)[batch,?,3]",
            "tensor(complex64)",
            "tensor(string)[]",
            "seq(tensor(float)[?,\"2*n\"])",
            "optional(seq(tensor(int64)))",
            "map(string,tensor(float)[])",
            "sparse(float)[4,4]",
            "opaque(ai.example,Thing)",
        ] {
            let (proto, rest) = read(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(rest, "", "{text}");
            assert_eq!(super::text(&proto).as_deref(), Some(text));
        }
        assert!(read("seq(tensor(floaty))").is_err());
        assert!(read("list(tensor(float))").is_err());
        assert!(read("seq(tensor(float)").is_err());
    }

    #[test]
    fn tensors_the_ir_carries_are_tensors_and_the_others_opaque() {
        let (float, _) = read("tensor(float)[batch,3]").unwrap();
        assert_eq!(
            ir_type(&float).unwrap().to_string(),
            "Tensor[(batch, 3), float32]"
        );
        let (unranked, _) = read("tensor(float)").unwrap();
        assert_eq!(ir_type(&unranked), None);
        let (strings, _) = read("tensor(string)[2]").unwrap();
        let opaque = ir_type(&strings).unwrap();
        assert_eq!(opaque, Type::Opaque(Symbol::new("tensor(string)[2]")));
        assert_eq!(type_proto(&opaque).unwrap(), strings);
    }
}
