//! ONNX's graph rules, checked before anything is converted, each break one clear error (as
//! `onnx.checker` words it): every value is defined once, by a graph input, an initializer or
//! one node; a node uses only values defined before it (nodes are listed in topological
//! order, so a cycle is a use before definition); every graph output is defined.

use rustc_hash::FxHashMap;

use crate::error::{OnnxError, Result};
use crate::proto::GraphProto;

/// Where a value of the graph is defined.
#[derive(Clone, Copy)]
enum Definer {
    /// A graph input or an initializer (an input may share its name with the initializer
    /// that gives it a default).
    Outside,
    /// The node at this position.
    Node(usize),
}

/// Node `i` of `g` as the errors name it: `` `name` ``, or `` `#i` `` when it has none.
fn node_name(g: &GraphProto, i: usize) -> String {
    format!("`{}`", super::node_name(&g.node[i], i))
}

/// Checks `g`'s graph rules.
pub(crate) fn check(g: &GraphProto) -> Result<()> {
    let invalid = |m: String| Err(OnnxError::Invalid(m));
    let mut defined: FxHashMap<&str, Definer> = FxHashMap::default();
    for name in g
        .input
        .iter()
        .map(|i| i.name())
        .chain(g.initializer.iter().map(|t| t.name()))
    {
        defined.insert(name, Definer::Outside);
    }
    for (i, n) in g.node.iter().enumerate() {
        for o in n.output.iter().filter(|o| !o.is_empty()) {
            match defined.insert(o, Definer::Node(i)) {
                None => {}
                Some(Definer::Outside) => {
                    return invalid(format!(
                        "node {} ({}) computes `{o}`, which is also a graph input or initializer (each value has one definition)",
                        node_name(g, i),
                        n.op_type()
                    ));
                }
                Some(Definer::Node(j)) => {
                    return invalid(format!(
                        "`{o}` is computed by two nodes, {} ({}) and {} ({}) (each value has one definition)",
                        node_name(g, j),
                        g.node[j].op_type(),
                        node_name(g, i),
                        n.op_type()
                    ));
                }
            }
        }
    }
    for (i, n) in g.node.iter().enumerate() {
        for u in n.input.iter().filter(|u| !u.is_empty()) {
            match defined.get(u.as_str()) {
                Some(Definer::Outside) => {}
                Some(Definer::Node(j)) if *j < i => {}
                Some(Definer::Node(j)) => {
                    let what = if *j == i {
                        "itself".to_string()
                    } else {
                        format!(
                            "the later node {} ({})",
                            node_name(g, *j),
                            g.node[*j].op_type()
                        )
                    };
                    return invalid(format!(
                        "node {} ({}) uses `{u}`, computed by {what}: ONNX lists nodes in topological order, so this is a cycle or nodes out of order",
                        node_name(g, i),
                        n.op_type()
                    ));
                }
                None => {
                    return invalid(format!(
                        "node {} ({}) uses `{u}`, which no input, initializer or node defines",
                        node_name(g, i),
                        n.op_type()
                    ));
                }
            }
        }
    }
    for o in &g.output {
        if !defined.contains_key(o.name()) {
            return invalid(format!(
                "graph output `{}` is not computed by the graph",
                o.name()
            ));
        }
    }
    Ok(())
}
