//! Types for the outputs of the sequence and optional operators kept opaque: ONNX's shape
//! inference for them, on the opaque types that name a sequence or an optional
//! (`seq(tensor(float)[?,3])`, `crate::value_type`), so that a model passing sequences between
//! operators keeps every node without declaring the values in between.

use irpass_ir::{DType, Dim, ExprId, Symbol, Type};

use crate::value_type::join;

use super::Importer;
use super::attrs::NodeAttrs;
use crate::proto::{NodeProto, TypeProto, type_proto};
use crate::tensor::elem_type_of;
use crate::value_type;

/// Operators with a rule here.
pub(crate) const SEQUENCE_RULES: &[&str] = &[
    "Identity",
    "Optional",
    "OptionalGetElement",
    "OptionalHasElement",
    "SequenceAt",
    "SequenceConstruct",
    "SequenceEmpty",
    "SequenceErase",
    "SequenceInsert",
    "SequenceLength",
    "SplitToSequence",
];

impl Importer {
    /// The type of the one output of `node`, a sequence or optional operator.
    pub(crate) fn sequence_output(
        &mut self,
        node: &NodeProto,
        inputs: &[Option<ExprId>],
    ) -> Option<Type> {
        let attrs = NodeAttrs(node);
        let mut ty = |i: usize| -> Option<Type> {
            let e = (*inputs.get(i)?)?;
            self.typer.of(self.b.body(), e).cloned()
        };
        match node.op_type() {
            // The same value, or the same sequence with an element more or less.
            "Identity" | "SequenceInsert" | "SequenceErase" => ty(0),
            "SequenceLength" => Some(Type::scalar(DType::Int64)),
            "OptionalHasElement" => Some(Type::scalar(DType::Bool)),
            "SequenceAt" | "OptionalGetElement" => {
                let outer = value_type::type_proto(&ty(0)?).ok()?;
                let inner = match outer.value? {
                    type_proto::Value::SequenceType(s) => *s.elem_type?,
                    type_proto::Value::OptionalType(o) => *o.elem_type?,
                    // OptionalGetElement of a tensor is the tensor.
                    type_proto::Value::TensorType(_) => return ty(0),
                    _ => return None,
                };
                value_type::ir_type(&inner)
            }
            "SequenceEmpty" => Some(value_type::sequence(unranked(
                attrs.int_or("dtype", 1) as i32
            ))),
            "SequenceConstruct" => {
                let types: Vec<Type> = (0..inputs.len()).map(&mut ty).collect::<Option<_>>()?;
                let first = types.first()?.clone();
                let merged = types[1..].iter().try_fold(first, |a, b| merge(&a, b))?;
                Some(value_type::sequence(value_type::type_proto(&merged).ok()?))
            }
            "Optional" => {
                let inner = match (ty(0), attrs.type_proto("type")) {
                    (Some(t), _) => value_type::type_proto(&t).ok()?,
                    (None, Some(t)) => t.clone(),
                    (None, None) => return None,
                };
                Some(opaque(TypeProto {
                    value: Some(type_proto::Value::OptionalType(Box::new(
                        type_proto::Optional {
                            elem_type: Some(Box::new(inner)),
                        },
                    ))),
                    ..TypeProto::default()
                }))
            }
            "SplitToSequence" => {
                let Type::Tensor(x) = ty(0)? else { return None };
                let a = irpass_ir::op::axis("SplitToSequence", attrs.int_or("axis", 0), x.rank())
                    .ok()?;
                let mut shape = x.shape.clone();
                // Without `split`, parts of size 1, the axis dropped unless `keepdims`.
                if inputs.get(1).copied().flatten().is_none() && attrs.int_or("keepdims", 1) == 0 {
                    shape.remove(a);
                } else {
                    shape[a] = Dim::Any;
                }
                let elem = Type::with_dims(shape, x.dtype);
                Some(value_type::sequence(value_type::type_proto(&elem).ok()?))
            }
            _ => None,
        }
    }
}

/// The opaque type of an ONNX type.
fn opaque(t: TypeProto) -> Type {
    Type::Opaque(Symbol::new(
        &value_type::text(&t).expect("a type built from known parts"),
    ))
}

/// The type of a sequence's elements of types `a` and `b`: one element type, the sizes both
/// have, `?` where they differ, no shape where the ranks differ (ONNX's merge).
fn merge(a: &Type, b: &Type) -> Option<Type> {
    join(a, b).or_else(|| match (a, b) {
        (Type::Tensor(x), Type::Tensor(y)) if x.dtype == y.dtype => {
            Some(opaque(unranked(elem_type_of(x.dtype))))
        }
        _ => None,
    })
}

/// A tensor of ONNX element type `elem_type` and no known rank (opaque in the IR, whose
/// tensors have a rank).
fn unranked(elem_type: i32) -> TypeProto {
    TypeProto {
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: Some(elem_type),
            shape: None,
        })),
        ..TypeProto::default()
    }
}
