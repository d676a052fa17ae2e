//! The graph attributes of a node kept whole (`Loop`'s and `Scan`'s bodies, a plugin's
//! subgraphs) as IR closures, arguments of the opaque call: the subgraph's inputs the
//! closure's parameters, its outputs the closure's result (a tuple), the graph's values it
//! reads by name the values around the closure. The passes then optimise inside the body
//! (folding, common subexpressions, dead code) while the node stays opaque, and the writer
//! writes each closure back as the attribute it came from. A subgraph whose inputs' types are
//! neither declared nor given by its operator's rule, or that does not import, leaves the node
//! with its attributes as they came.

use irpass_ir::body::ClosureData;
use irpass_ir::{Attrs, DType, Dim, ExprId, Type};

use super::{Importer, Scope};
use crate::error::{OnnxError, Result};
use crate::proto::{GraphProto, NodeProto};

impl Importer {
    /// Each graph attribute of `node` as a closure (attribute name, closure), where every one
    /// imports; `None` otherwise (or when the node has none).
    pub(super) fn subgraph_closures(
        &mut self,
        node: &NodeProto,
        inputs: &[Option<ExprId>],
        scope: &Scope<'_>,
        next_index: &mut usize,
    ) -> Option<Vec<(String, ExprId)>> {
        // (A list of graphs, as no default-domain operator has, stays as it came.)
        if node.attribute.iter().any(|a| !a.graphs.is_empty()) {
            return None;
        }
        let mut out = Vec::new();
        for a in &node.attribute {
            let Some(g) = &a.g else { continue };
            let types = self.body_input_types(node, a.name(), g, inputs)?;
            let closure = self.closure_of(g, &types, scope, next_index).ok()?;
            out.push((a.name().to_string(), closure));
        }
        (!out.is_empty()).then_some(out)
    }

    /// The types of subgraph `g`'s inputs (attribute `attr` of `node`): as declared, else as
    /// the operator gives them (`Loop`: the iteration number, the condition, then each carried
    /// value of its initial value's element type and rank; `Scan`: each state likewise, then
    /// each scanned input's slice).
    fn body_input_types(
        &mut self,
        node: &NodeProto,
        attr: &str,
        g: &GraphProto,
        inputs: &[Option<ExprId>],
    ) -> Option<Vec<Type>> {
        let default_domain = matches!(node.domain(), "" | "ai.onnx");
        let any_dims = |t: &Type| match t {
            Type::Tensor(t) => Some(Type::with_dims(vec![Dim::Any; t.rank()], t.dtype)),
            _ => None,
        };
        let attrs = super::attrs::NodeAttrs(node);
        let num_scan = attrs.int_or("num_scan_inputs", 0);
        let scan_axes = attrs.ints("scan_input_axes").unwrap_or_default();
        let mut out = Vec::with_capacity(g.input.len());
        for (k, input) in g.input.iter().enumerate() {
            let declared = input.r#type.as_ref().and_then(crate::value_type::ir_type);
            if let Some(t @ Type::Tensor(_)) = declared {
                out.push(t);
                continue;
            }
            let input_type = |importer: &mut Importer, i: usize| {
                let e = (*inputs.get(i)?)?;
                importer.typer.of(importer.b.body(), e).cloned()
            };
            let ruled = match (default_domain, node.op_type(), attr) {
                (true, "Loop", "body") => match k {
                    0 => Some(Type::scalar(DType::Int64)),
                    1 => Some(Type::scalar(DType::Bool)),
                    _ => input_type(self, k).as_ref().and_then(any_dims),
                },
                (true, "Scan", "body") if self.opset >= 9 => {
                    let states = inputs.len().checked_sub(num_scan as usize)?;
                    if k < states {
                        input_type(self, k).as_ref().and_then(any_dims)
                    } else {
                        let Type::Tensor(t) = input_type(self, k)? else {
                            return None;
                        };
                        let axis = scan_axes.get(k - states).copied().unwrap_or(0);
                        let axis = irpass_ir::op::axis("Scan", axis, t.rank()).ok()?;
                        let mut dims = t.shape.to_vec();
                        dims.remove(axis);
                        Some(Type::with_dims(dims, t.dtype))
                    }
                }
                _ => None,
            };
            out.push(ruled.or(declared)?);
        }
        Some(out)
    }

    /// Subgraph `g` as a closure whose parameters are its inputs (of types `types`), imported
    /// where the graph's values are in scope; they are out of scope again afterwards.
    fn closure_of(
        &mut self,
        g: &GraphProto,
        types: &[Type],
        scope: &Scope<'_>,
        next_index: &mut usize,
    ) -> Result<ExprId> {
        self.scoped(|importer| {
            let mut params = Vec::with_capacity(g.input.len());
            for (input, ty) in g.input.iter().zip(types) {
                let v = importer.b.var(input.name(), Some(ty.clone()), None);
                importer.typer.set_var(v, ty);
                let e = importer.b.use_var(v);
                importer.values.insert(input.name().to_string(), e);
                params.push(v);
            }
            let outputs = importer.subgraph_body(g, scope, next_index)?;
            let root = importer.b.tuple(&outputs);
            let ret_type = importer
                .typer
                .of(importer.b.body(), root)
                .cloned()
                .ok_or_else(|| {
                    OnnxError::Invalid("a subgraph output's type is not known".into())
                })?;
            Ok(importer.b.closure(ClosureData {
                params,
                ret_type: Some(ret_type),
                attrs: Attrs::new(),
                body: root,
            }))
        })
    }

    /// The initializers and nodes of subgraph `g` (an `If` branch, a body whose inputs are
    /// already in `self.values`) imported where the graph's values are in scope; the values of
    /// its outputs.
    pub(super) fn subgraph_body(
        &mut self,
        g: &GraphProto,
        scope: &Scope<'_>,
        next_index: &mut usize,
    ) -> Result<Vec<ExprId>> {
        for t in &g.initializer {
            *next_index += 1;
            let e = self.initializer(t, scope.dir, *next_index)?;
            self.values.insert(t.name().to_string(), e);
        }
        let base = *next_index + 1;
        *next_index += g.node.len() + 1;
        self.nodes(g, base, scope, next_index)?;
        g.output
            .iter()
            .map(|out| {
                self.values.get(out.name()).copied().ok_or_else(|| {
                    let what = self.unconverted.get(out.name());
                    OnnxError::Invalid(format!(
                        "subgraph output `{}` is {}",
                        out.name(),
                        what.map_or("not computed by the subgraph", String::as_str)
                    ))
                })
            })
            .collect()
    }
}
