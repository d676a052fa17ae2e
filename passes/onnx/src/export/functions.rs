//! FuseOps's groups as model-local ONNX functions: the nodes written for one call of a
//! `Primitive` function (marked while the graph was built) become one `FunctionProto` and a
//! node calling it, so the fusion stays visible in a model viewer while ONNX Runtime, which
//! inlines local functions, runs the same computation.
//!
//! Outlining happens after the graph-level rewrites (bias fusion, layer normalisation), on
//! the final node list: each maximal run of consecutive nodes of one group becomes a call at
//! the run's place, so the graph's order stays topological. A run of one node stays as it is.
//! A function's inputs are the values its nodes read from outside (graph inputs,
//! initializers, earlier nodes' outputs), its outputs those read after it or by the graph;
//! inside, values are renamed canonically, so groups that compute the same thing on
//! different weights share one function.

use rustc_hash::{FxHashMap, FxHashSet};

use prost::Message as _;

use super::graph::REGION_MARK;
use crate::proto::{FunctionProto, GraphProto, NodeProto, OperatorSetIdProto};

/// The domain of the functions irpass writes.
pub const FUNCTION_DOMAIN: &str = "irpass.fused";

/// The group a node was written for, if any (and the mark removed).
fn take_region(n: &mut NodeProto) -> Option<usize> {
    let doc = n.doc_string.as_deref()?;
    let r = doc.strip_prefix(REGION_MARK)?.parse().ok()?;
    n.doc_string = None;
    Some(r)
}

/// Replaces each marked group's run of two or more nodes by a call of a local function (and
/// removes the marks); returns the functions (each written once).
pub(crate) fn outline(g: &mut GraphProto, opset: i64) -> Vec<FunctionProto> {
    let regions: Vec<Option<usize>> = g.node.iter_mut().map(take_region).collect();
    // Where each value is read: node positions, and the graph's outputs.
    let mut last_use: FxHashMap<&str, usize> = FxHashMap::default();
    for (i, n) in g.node.iter().enumerate() {
        for input in crate::opaque::node_reads(n) {
            last_use.insert(input, i);
        }
    }
    let graph_outputs: FxHashSet<&str> = g.output.iter().map(|o| o.name()).collect();
    let mut functions = Functions::default();
    let mut nodes = Vec::with_capacity(g.node.len());
    let mut i = 0;
    while i < g.node.len() {
        let mut j = i + 1;
        if regions[i].is_some() {
            while j < g.node.len() && regions[j] == regions[i] {
                j += 1;
            }
        }
        let run = &g.node[i..j];
        let read_after = |name: &str| {
            graph_outputs.contains(name) || last_use.get(name).is_some_and(|&u| u >= j)
        };
        match (run.len() >= 2)
            .then(|| functions.call(run, opset, read_after))
            .flatten()
        {
            Some(call) => nodes.push(call),
            None => nodes.extend_from_slice(run),
        }
        i = j;
    }
    drop(last_use);
    drop(graph_outputs);
    g.node = nodes;
    functions.list
}

/// The functions written so far, by their canonical form.
#[derive(Default)]
struct Functions {
    list: Vec<FunctionProto>,
    by_form: FxHashMap<Vec<u8>, usize>,
    names: FxHashSet<String>,
    calls: usize,
}

impl Functions {
    /// A node calling the function that computes `run`, or `None` when the run has no value
    /// read after it (nothing to return).
    fn call(
        &mut self,
        run: &[NodeProto],
        opset: i64,
        read_after: impl Fn(&str) -> bool,
    ) -> Option<NodeProto> {
        let produced: FxHashSet<&str> = run
            .iter()
            .flat_map(|n| &n.output)
            .map(String::as_str)
            .collect();
        let mut inputs: Vec<&str> = Vec::new();
        let mut outputs: Vec<&str> = Vec::new();
        for n in run {
            for x in &n.input {
                if !x.is_empty() && !produced.contains(x.as_str()) && !inputs.contains(&x.as_str())
                {
                    inputs.push(x);
                }
            }
            outputs.extend(
                n.output
                    .iter()
                    .map(String::as_str)
                    .filter(|o| read_after(o)),
            );
        }
        if outputs.is_empty() {
            return None;
        }
        let mut local: FxHashMap<&str, String> = FxHashMap::default();
        for (k, x) in inputs.iter().enumerate() {
            local.insert(x, format!("x{k}"));
        }
        for (k, y) in outputs.iter().enumerate() {
            local.insert(y, format!("y{k}"));
        }
        let mut temps = 0;
        for o in run.iter().flat_map(|n| &n.output) {
            if !o.is_empty() {
                local.entry(o.as_str()).or_insert_with(|| {
                    temps += 1;
                    format!("t{temps}")
                });
            }
        }
        let body: Vec<NodeProto> = run
            .iter()
            .map(|n| {
                let mut n = n.clone();
                for x in n.input.iter_mut().chain(n.output.iter_mut()) {
                    if let Some(name) = local.get(x.as_str()) {
                        *x = name.clone();
                    }
                }
                n.name = None;
                n
            })
            .collect();
        let mut function = FunctionProto {
            input: (0..inputs.len()).map(|k| format!("x{k}")).collect(),
            output: (0..outputs.len()).map(|k| format!("y{k}")).collect(),
            node: body,
            opset_import: vec![OperatorSetIdProto {
                domain: Some(String::new()),
                version: Some(opset),
            }],
            domain: Some(FUNCTION_DOMAIN.into()),
            ..FunctionProto::default()
        };
        let form = function.encode_to_vec();
        let index = match self.by_form.get(&form) {
            Some(&k) => k,
            None => {
                let name = self.fresh_name(run);
                function.name = Some(name);
                function.doc_string = Some("a group of operators irpass's FuseOps fused".into());
                self.list.push(function);
                self.by_form.insert(form, self.list.len() - 1);
                self.list.len() - 1
            }
        };
        let name = self.list[index].name().to_string();
        self.calls += 1;
        Some(NodeProto {
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: outputs.iter().map(|s| s.to_string()).collect(),
            name: Some(format!("{name}_{}", self.calls)),
            op_type: Some(name),
            domain: Some(FUNCTION_DOMAIN.into()),
            ..NodeProto::default()
        })
    }

    /// `fused_Conv_Relu` (TVM's naming, with ONNX's operator names), made unique.
    fn fresh_name(&mut self, run: &[NodeProto]) -> String {
        let mut stem = String::from("fused");
        for n in run {
            if stem.len() > 60 {
                stem.push_str("_etc");
                break;
            }
            stem.push('_');
            stem.push_str(n.op_type());
        }
        let mut name = stem.clone();
        let mut k = 1;
        while !self.names.insert(name.clone()) {
            k += 1;
            name = format!("{stem}_{k}");
        }
        name
    }
}
