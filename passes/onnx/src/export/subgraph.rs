//! Subgraphs the walk writes: an `if`'s branches (ONNX's `If`), and the closures an opaque
//! call or a native operator's call takes for its graph attributes (a `Loop`'s body). Each is written in a frame of its
//! own that sees the values written around it (read by name, as ONNX's subgraphs read outer
//! values), into a node list of its own.

use irpass_ir::body::ClosureId;
use irpass_ir::{Body, ExprId, Node, Type, VarId};
use rustc_hash::FxHashMap;

use super::graph::{GraphBuilder, Val};
use crate::error::{OnnxError, Result};
use crate::proto::{GraphProto, ValueInfoProto};

/// A subgraph to write: its root, its parameters (a closure's), the attribute it goes in, and
/// for a closure the walk's frame it was made in.
pub(super) struct Region {
    pub(super) root: ExprId,
    pub(super) params: Vec<VarId>,
    pub(super) name: String,
    pub(super) made_in: Option<usize>,
}

/// The number of subgraphs node `e` has: an `if`'s two branches, a call's closures.
pub(super) fn count(body: &Body, e: ExprId) -> usize {
    match body.node(e) {
        Node::If(..) => 2,
        Node::CallOp { .. } => closure_names(body, e).len(),
        _ => 0,
    }
}

/// The names of the graph attributes the last arguments of an opaque call or a native
/// operator's call stand for.
fn closure_names(body: &Body, e: ExprId) -> Vec<&str> {
    match body.op_call(e) {
        Some((op, _, attrs)) if op.name() == crate::opaque::OPAQUE_OP => attrs
            .get("subgraphs")
            .and_then(|a| a.as_str())
            .filter(|s| !s.is_empty())
            .map(|s| s.split(',').collect())
            .unwrap_or_default(),
        Some((op, _, _)) => {
            crate::native::of_ir(op.name()).map_or_else(Vec::new, |n| n.bodies.to_vec())
        }
        _ => Vec::new(),
    }
}

/// Subgraph `k` of node `e`; `closure` gives the function literal an argument's value is, and
/// the frame it was made in (an opaque call's closure may be passed through a fused function's
/// parameter).
pub(super) fn region(
    body: &Body,
    e: ExprId,
    k: usize,
    closure: impl Fn(ExprId) -> Option<(ClosureId, usize)>,
) -> Result<Region> {
    if let Node::If(_, then, otherwise) = *body.node(e) {
        return Ok(Region {
            root: [then, otherwise][k],
            params: Vec::new(),
            name: ["then_branch", "else_branch"][k].to_string(),
            made_in: None,
        });
    }
    let names = closure_names(body, e);
    let (_, args, _) = body.op_call(e).expect("a call");
    let arg = args[args.len() - names.len() + k];
    let Some((c, made_in)) = closure(arg) else {
        return Err(OnnxError::Export(format!(
            "the graph attribute `{}` of a node is not a function literal",
            names[k]
        )));
    };
    let closure = body.closure(c);
    Ok(Region {
        root: closure.body,
        params: closure.params.clone(),
        name: names[k].to_string(),
        made_in: Some(made_in),
    })
}

/// The nodes that evaluating `root` evaluates whatever the conditions of the `if`s in it
/// (their conditions, not their branches; not the bodies of closures), in increasing order
/// (operands first).
pub(super) fn unconditional(
    body: &Body,
    root: ExprId,
    let_value: &FxHashMap<VarId, ExprId>,
) -> Vec<ExprId> {
    let mut seen = rustc_hash::FxHashSet::default();
    let mut stack = vec![root];
    while let Some(e) = stack.pop() {
        if !seen.insert(e) {
            continue;
        }
        match body.node(e) {
            Node::If(c, _, _) => stack.push(*c),
            Node::Let { body: result, .. } => stack.push(*result),
            Node::Var(v) => stack.extend(let_value.get(v)),
            Node::Closure(_) => {}
            _ => body.for_each_operand(e, |o| stack.push(o)),
        }
    }
    let mut out: Vec<ExprId> = seen.into_iter().collect();
    out.sort_unstable();
    out
}

/// The nodes of closure `c`'s body that do not depend on its parameters and that every call
/// evaluates (not in an `if`'s branches, not in nested closures), in increasing order: written
/// around the closure once rather than in its subgraph (a `Loop`'s body runs each iteration).
pub(super) fn invariant(
    body: &Body,
    c: ClosureId,
    let_value: &FxHashMap<VarId, ExprId>,
) -> Vec<ExprId> {
    let closure = body.closure(c);
    let nodes = unconditional(body, closure.body, let_value);
    let mut hoisted = rustc_hash::FxHashSet::default();
    for &e in &nodes {
        let free = match body.node(e) {
            Node::Var(v) => !closure.params.contains(v) && !let_value.contains_key(v),
            Node::Constant(_) | Node::Global(_) => true,
            Node::CallOp { .. } | Node::Tuple(_) | Node::Proj(..) => {
                let mut all = true;
                body.for_each_operand(e, |o| all &= hoisted.contains(&o));
                all
            }
            _ => false,
        };
        if free {
            hoisted.insert(e);
        }
    }
    nodes.into_iter().filter(|e| hoisted.contains(e)).collect()
}

/// The tensors of a value written as a node's outputs (a tuple's fields, or the one tensor),
/// with their types.
fn flat(val: Val, ty: &Type) -> Result<Vec<(String, &Type)>> {
    let nested = || OnnxError::Export("a subgraph whose result nests tuples".into());
    match (val, ty) {
        (Val::Tuple(vals), Type::Tuple(tys)) => vals
            .into_iter()
            .zip(tys)
            .map(|(v, t)| match v {
                Val::Tensor(name) => Ok((name, t)),
                _ => Err(nested()),
            })
            .collect(),
        (v, t) => Ok(vec![(v.tensor()?.to_string(), t)]),
    }
}

/// The subgraph `name` whose nodes are `g.nodes`, inputs `inputs` and result `result`: each
/// output a value of its own that a node of the subgraph computes (an `Identity` is added for
/// a value from outside it or an input, or one written twice).
pub(super) fn subgraph(
    g: &mut GraphBuilder,
    name: &str,
    inputs: Vec<ValueInfoProto>,
    result: Val,
    ty: &Type,
) -> Result<GraphProto> {
    let mut outputs: Vec<ValueInfoProto> = Vec::new();
    for (value, t) in flat(result, ty)? {
        let computed = g.nodes.iter().any(|n| n.output.contains(&value));
        let name = if computed && !outputs.iter().any(|o| o.name() == value) {
            value
        } else {
            g.node("Identity", &[&value], Vec::new())
        };
        outputs.push(value_info(&name, t)?);
    }
    Ok(GraphProto {
        name: Some(name.into()),
        node: std::mem::take(&mut g.nodes),
        input: inputs,
        output: outputs,
        ..GraphProto::default()
    })
}

/// ONNX's `If` on `cond` (a bool scalar) with its two branches written; its value (a tuple of
/// its outputs when the result is a tuple).
pub(super) fn if_node(
    g: &mut GraphBuilder,
    cond: &str,
    branches: Vec<GraphProto>,
    ty: &Type,
) -> Result<Val> {
    let n = branches.first().map_or(0, |b| b.output.len());
    let attrs = branches
        .into_iter()
        .zip(["then_branch", "else_branch"])
        .map(|(b, name)| super::graph::attr_graph(name, b))
        .collect();
    let outs = g.node_n("If", &[cond], attrs, n);
    Ok(match ty {
        Type::Tuple(_) => Val::Tuple(outs.into_iter().map(Val::Tensor).collect()),
        _ => Val::Tensor(outs.into_iter().next().expect("one output")),
    })
}

/// A graph input's or output's declared type.
pub(super) fn value_info(name: &str, t: &Type) -> Result<ValueInfoProto> {
    let ty = crate::value_type::type_proto(t)
        .map_err(|e| OnnxError::Export(format!("`{name}`: {e}")))?;
    Ok(ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(ty),
        ..ValueInfoProto::default()
    })
}
