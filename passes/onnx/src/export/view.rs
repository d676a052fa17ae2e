//! An index of a written graph for the peephole rewrites that read it before changing it:
//! which node writes each value, how often each value is read, the initializers by name.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::proto::{GraphProto, NodeProto, TensorProto};

pub(crate) struct GraphView<'g> {
    pub(crate) g: &'g GraphProto,
    /// The node writing each value.
    pub(crate) producer: FxHashMap<&'g str, usize>,
    /// How many node inputs (a subgraph's outer reads included) and graph outputs read each
    /// value.
    pub(crate) uses: FxHashMap<&'g str, usize>,
    pub(crate) inits: FxHashMap<&'g str, &'g TensorProto>,
    /// The names of the nodes kept opaque, which the rewrites leave as they are.
    pub(crate) opaque: &'g FxHashSet<String>,
}

impl<'g> GraphView<'g> {
    pub(crate) fn new(g: &'g GraphProto, opaque: &'g FxHashSet<String>) -> Self {
        let mut uses: FxHashMap<&str, usize> = FxHashMap::default();
        for i in g.node.iter().flat_map(crate::opaque::node_reads) {
            *uses.entry(i).or_default() += 1;
        }
        for o in &g.output {
            *uses.entry(o.name()).or_default() += 1;
        }
        GraphView {
            g,
            producer: g
                .node
                .iter()
                .enumerate()
                .flat_map(|(i, n)| n.output.iter().map(move |o| (o.as_str(), i)))
                .collect(),
            uses,
            inits: g.initializer.iter().map(|t| (t.name(), t)).collect(),
            opaque,
        }
    }

    /// The node computing `name`, if it is an `op` node (and not one kept opaque).
    pub(crate) fn node(&self, name: &str, op: &str) -> Option<&'g NodeProto> {
        let n = &self.g.node[*self.producer.get(name)?];
        (n.op_type() == op && !self.opaque.contains(n.name())).then_some(n)
    }

    /// The node computing `name`, if it is an `op` node and nothing but one node reads `name`.
    pub(crate) fn single_use(&self, name: &str, op: &str) -> Option<&'g NodeProto> {
        self.node(name, op)
            .filter(|_| self.uses.get(name) == Some(&1))
    }

    /// The position of the node reading `name`, when it is the only reader and an `op` node
    /// (not one kept opaque).
    pub(crate) fn sole_reader(&self, name: &str, op: &str) -> Option<usize> {
        if self.uses.get(name) != Some(&1) {
            return None;
        }
        self.g.node.iter().position(|n| {
            n.op_type() == op
                && n.input.iter().any(|i| i == name)
                && !self.opaque.contains(n.name())
        })
    }
}

/// The input of the two-input node `n` other than `name`, when `name` is one of its inputs.
pub(crate) fn other_input<'n>(n: &'n NodeProto, name: &str) -> Option<&'n str> {
    match n.input.as_slice() {
        [a, b] if a == name => Some(b),
        [a, b] if b == name => Some(a),
        _ => None,
    }
}

/// Drops the nodes of `g` marked in `removed` (one flag per node, in order).
pub(crate) fn remove_nodes(g: &mut GraphProto, removed: &[bool]) {
    let mut i = 0;
    g.node.retain(|_| {
        i += 1;
        !removed[i - 1]
    });
}

/// Replaces each group of nodes (positions in `g`, the last one kept) by `replacement`'s node
/// at the last one's place, and drops the others: a decomposition becomes the one operator
/// that computes it. `replacement` gets the kept node, to take its outputs and name from.
pub(crate) fn collapse<T>(
    g: &mut GraphProto,
    groups: Vec<(Vec<usize>, T)>,
    mut replacement: impl FnMut(&NodeProto, T) -> NodeProto,
) {
    if groups.is_empty() {
        return;
    }
    let mut removed = vec![false; g.node.len()];
    for (nodes, what) in groups {
        let (&last, rest) = nodes.split_last().expect("a group has nodes");
        for &i in rest {
            removed[i] = true;
        }
        g.node[last] = replacement(&g.node[last], what);
    }
    remove_nodes(g, &removed);
}
