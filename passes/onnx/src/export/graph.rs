//! The graph being built: its values ([`Val`]), the [`GraphBuilder`] that names them and
//! collects nodes and initializers, and the attribute constructors the operator emitters use.

use std::sync::Arc;

use irpass_ir::Tensor;
use irpass_ir::body::ClosureId;
use rustc_hash::FxHashMap;

use crate::error::{OnnxError, Result};
use crate::proto::attribute_proto::AttributeType;
use crate::proto::{AttributeProto, GraphProto, NodeProto, TensorProto};
use crate::tensor::proto_of_shared;
/// Per value name: its rank and the size of its last axis.
pub(crate) type Shapes = FxHashMap<String, (usize, i64)>;

/// A value of the program as the graph holds it.
#[derive(Clone, Debug)]
pub(crate) enum Val {
    /// A tensor: the name of a graph input, an initializer or a node output.
    Tensor(String),
    /// A tuple of values.
    Tuple(Vec<Val>),
    /// A function literal of the body, and the walk's frame it was made in (where the values
    /// it reads from around it are).
    Closure(ClosureId, usize),
    /// A value ONNX has no form for here, and why (a batch norm's running statistics).
    Missing(&'static str),
}

impl Val {
    pub(crate) fn tensor(&self) -> Result<&str> {
        match self {
            Val::Tensor(n) => Ok(n),
            Val::Missing(why) => Err(OnnxError::Export(format!("the program uses {why}"))),
            _ => Err(OnnxError::Export(
                "a tuple or a function is used as a tensor".into(),
            )),
        }
    }
}

/// The graph being built: nodes, initializers (deduplicated) and fresh names.
pub(crate) struct GraphBuilder {
    pub(crate) opset: i64,
    /// The rank and the size of the last axis of each tensor value written (for the
    /// graph-level rewrites).
    pub(crate) last_dims: Shapes,
    pub(crate) nodes: Vec<NodeProto>,
    pub(crate) initializers: Vec<TensorProto>,
    by_hash: FxHashMap<u64, Vec<(Arc<Tensor>, String)>>,
    /// Each initializer's tensor by name.
    by_name: FxHashMap<String, Arc<Tensor>>,
    counter: usize,
    /// The fused group (one inlined call of a `Primitive` function) the nodes being written
    /// belong to, if any; its nodes carry the mark [`REGION_MARK`] so that [`super::functions`]
    /// can outline them after the graph-level rewrites.
    pub(crate) region: Option<usize>,
    regions: usize,
    /// Whether fused groups are marked (they become local functions).
    mark_regions: bool,
    /// The opset version of each other domain an opaque node was written in.
    pub(crate) domains: std::collections::BTreeMap<String, i64>,
    /// The names of the opaque nodes written.
    pub(crate) opaque: rustc_hash::FxHashSet<String>,
    /// The outputs of the operators written before opset 7 that broadcast only by attribute,
    /// by a writer that did not check their shapes (a bias's `Add`), with the operator: the
    /// model cannot be written so unless a graph-level rewrite removes them (a bias `Add`
    /// merged into its `Conv`).
    pub(crate) unchecked_broadcast: Vec<(String, String)>,
}

/// The prefix of a node's `doc_string` that says which fused group it was written for (a
/// mark that lives only while the graph is being built).
pub(crate) const REGION_MARK: &str = "\u{0}irpass-region:";

impl GraphBuilder {
    /// An empty graph for `opset`; `mark_regions`: whether fused groups are marked.
    pub(crate) fn new(opset: i64, mark_regions: bool) -> Self {
        GraphBuilder {
            opset,
            last_dims: FxHashMap::default(),
            nodes: Vec::new(),
            initializers: Vec::new(),
            by_hash: FxHashMap::default(),
            by_name: FxHashMap::default(),
            counter: 0,
            region: None,
            regions: 0,
            mark_regions,
            domains: Default::default(),
            opaque: Default::default(),
            unchecked_broadcast: Vec::new(),
        }
    }

    /// A new fused group's number, when groups are marked.
    pub(crate) fn new_region(&mut self) -> Option<usize> {
        self.mark_regions.then(|| {
            self.regions += 1;
            self.regions - 1
        })
    }

    pub(crate) fn fresh(&mut self, stem: &str) -> String {
        self.counter += 1;
        format!("{stem}_{}", self.counter)
    }

    /// A node of `op_type` with one output; its output's name.
    pub(crate) fn node(
        &mut self,
        op_type: &str,
        inputs: &[&str],
        attrs: Vec<AttributeProto>,
    ) -> String {
        let out = self.node_attrs_checked(op_type, inputs, attrs);
        if self.opset < crate::opset::NUMPY_BROADCAST_OPSET
            && crate::opset::LEGACY_BROADCAST.contains(&op_type)
        {
            self.unchecked_broadcast
                .push((out.clone(), op_type.to_string()));
        }
        out
    }

    /// [`GraphBuilder::node`] of an operator whose broadcast the writer has checked for the
    /// opset (its `broadcast` attribute set before opset 7).
    pub(crate) fn node_attrs_checked(
        &mut self,
        op_type: &str,
        inputs: &[&str],
        attrs: Vec<AttributeProto>,
    ) -> String {
        self.node_n(op_type, inputs, attrs, 1)
            .pop()
            .expect("one output")
    }

    /// The initializer holding `t` (one per distinct tensor).
    pub(crate) fn initializer(&mut self, t: &Arc<Tensor>) -> String {
        let mut h = rustc_hash::FxHasher::default();
        t.hash_bits(&mut h);
        self.initializer_hashed(t, std::hash::Hasher::finish(&h))
    }

    /// [`GraphBuilder::initializer`] of a tensor whose hash is known (a body's constant).
    pub(crate) fn initializer_hashed(&mut self, t: &Arc<Tensor>, hash: u64) -> String {
        if let Some((_, name)) = self
            .by_hash
            .get(&hash)
            .and_then(|v| v.iter().find(|(u, _)| Arc::ptr_eq(u, t) || u.bit_eq(t)))
        {
            return name.clone();
        }
        let name = self.fresh("const");
        self.initializers.push(proto_of_shared(&name, t));
        self.by_name.insert(name.clone(), t.clone());
        self.by_hash
            .entry(hash)
            .or_default()
            .push((t.clone(), name.clone()));
        name
    }

    /// A node of `op_type` with `n` outputs; their names.
    pub(crate) fn node_n(
        &mut self,
        op_type: &str,
        inputs: &[&str],
        attrs: Vec<AttributeProto>,
        n: usize,
    ) -> Vec<String> {
        let outs: Vec<String> = (0..n).map(|_| self.fresh(op_type)).collect();
        let inputs = inputs.iter().map(|s| s.to_string()).collect();
        self.push(op_type, "", inputs, outs.clone(), attrs);
        outs
    }

    /// A node kept opaque: `op_type` of `domain` (at `version`), on `inputs` (empty names for
    /// inputs left out), with `attrs` as they came; an output per `present` flag (an empty name
    /// where it is `false`). Its outputs' names, those present only.
    pub(crate) fn opaque_node(
        &mut self,
        op_type: &str,
        domain: &str,
        version: i64,
        inputs: Vec<String>,
        attrs: Vec<AttributeProto>,
        present: &[bool],
    ) -> Vec<String> {
        let outputs: Vec<String> = present
            .iter()
            .map(|&p| {
                if p {
                    self.fresh(op_type)
                } else {
                    String::new()
                }
            })
            .collect();
        if !matches!(domain, "" | "ai.onnx") {
            // (The domain's opset: the newest version of its nodes.)
            let at = self.domains.entry(domain.to_string()).or_insert(version);
            *at = (*at).max(version);
        }
        let name = self.push(op_type, domain, inputs, outputs.clone(), attrs);
        self.opaque.insert(name);
        outputs.into_iter().filter(|o| !o.is_empty()).collect()
    }

    /// Appends a node (marked with the fused group being written, if any); its name.
    fn push(
        &mut self,
        op_type: &str,
        domain: &str,
        input: Vec<String>,
        output: Vec<String>,
        attribute: Vec<AttributeProto>,
    ) -> String {
        let name = format!("{op_type}_{}", self.nodes.len());
        self.nodes.push(NodeProto {
            input,
            output,
            name: Some(name.clone()),
            op_type: Some(op_type.into()),
            domain: (!domain.is_empty()).then(|| domain.to_string()),
            attribute,
            doc_string: self.region.map(|r| format!("{REGION_MARK}{r}")),
            ..NodeProto::default()
        });
        name
    }

    /// The tensor of the initializer `name`, if it is one.
    pub(crate) fn initializer_tensor(&self, name: &str) -> Option<&Arc<Tensor>> {
        self.by_name.get(name)
    }

    /// The single value of the initializer `name`, if it is one with one element.
    pub(crate) fn initializer_scalar(&self, name: &str) -> Option<f64> {
        let t = self.initializer_tensor(name)?;
        (t.len() == 1).then(|| t.values()[0])
    }

    /// An int64 vector initializer (shapes, axes).
    pub(crate) fn ints(&mut self, v: &[i64]) -> String {
        let values = v.iter().map(|&x| x as f64).collect();
        let t = Tensor::from_vec(irpass_ir::DType::Int64, &[v.len()], values).expect("a vector");
        self.initializer(&Arc::new(t))
    }
}

/// An attribute of one integer.
pub(crate) fn attr_int(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Int as i32),
        i: Some(v),
        ..AttributeProto::default()
    }
}

/// An attribute of integers.
pub(crate) fn attr_ints(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Ints as i32),
        ints: v.to_vec(),
        ..AttributeProto::default()
    }
}

/// An attribute of one float.
pub(crate) fn attr_float(name: &str, v: f64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Float as i32),
        f: Some(v as f32),
        ..AttributeProto::default()
    }
}

/// An attribute of a list of floats.
pub(crate) fn attr_floats(name: &str, v: &[f64]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Floats as i32),
        floats: v.iter().map(|&f| f as f32).collect(),
        ..AttributeProto::default()
    }
}

/// An attribute holding a string.
pub(crate) fn attr_string(name: &str, v: &str) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::String as i32),
        s: Some(v.as_bytes().to_vec()),
        ..AttributeProto::default()
    }
}

/// An attribute holding a list of strings.
pub(crate) fn attr_strings(name: &str, v: &[&str]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Strings as i32),
        strings: v.iter().map(|s| s.as_bytes().to_vec()).collect(),
        ..AttributeProto::default()
    }
}

/// An attribute holding a tensor.
pub(crate) fn attr_graph(name: &str, g: GraphProto) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Graph as i32),
        g: Some(g),
        ..AttributeProto::default()
    }
}

pub(crate) fn attr_tensor(name: &str, t: TensorProto) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Tensor as i32),
        t: Some(t),
        ..AttributeProto::default()
    }
}
