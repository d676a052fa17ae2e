//! The node loop of a graph's import, for the model's graph and an `If`'s branches alike:
//! each node converted to IR operators ([`super::ops`]), an `If` to an IR `if`
//! ([`super::branch`]) or inlined where its condition is known at import time, and what is
//! not converted kept whole ([`super::opaque`]).

use std::collections::VecDeque;

use irpass_ir::{ExprId, Type};
use rustc_hash::FxHashSet;

use super::{Importer, Scope, node_name, ops};
use crate::error::{OnnxError, Result, Unsupported};
use crate::proto::{GraphProto, NodeProto};

/// One step of importing a graph's nodes.
enum Step<'g> {
    /// Import node `.1`, numbered `.0` (unique in the model: the graph's own nodes from the
    /// graph's first number, an inlined branch's past every number given so far).
    Node(usize, &'g NodeProto),
    /// Give each value named `.0` the name `.1` too (an inlined branch's outputs become the
    /// `If`'s).
    Rename(Vec<(&'g str, &'g str)>),
}

/// Whether `node` is the default domain's `If`.
pub(super) fn is_if(node: &NodeProto) -> bool {
    node.op_type() == "If" && matches!(node.domain(), "" | "ai.onnx")
}

/// The names read anywhere in `g`: by its nodes, as its outputs, and in its subgraphs.
pub(super) fn values_read(g: &GraphProto) -> FxHashSet<&str> {
    super::with_subgraphs(g)
        .into_iter()
        .flat_map(|g| {
            g.node
                .iter()
                .flat_map(|n| n.input.iter().map(String::as_str))
                .chain(g.output.iter().map(|o| o.name()))
        })
        .filter(|name| !name.is_empty())
        .collect()
}

impl Importer {
    /// Runs `f` (the import of a branch or a subgraph) so that the names it defines are out of
    /// scope afterwards; what it kept opaque is counted only when it succeeds.
    pub(super) fn scoped<T>(&mut self, f: impl FnOnce(&mut Importer) -> Result<T>) -> Result<T> {
        let saved = (
            self.values.clone(),
            self.unconverted.clone(),
            self.kept.clone(),
        );
        let result = f(self);
        let kept = std::mem::replace(&mut self.kept, saved.2);
        (self.values, self.unconverted) = (saved.0, saved.1);
        if result.is_ok() {
            self.kept = kept;
        }
        result
    }

    /// `node` kept whole ([`Importer::opaque`]), its graph attributes as closures where they
    /// import ([`Importer::subgraph_closures`]).
    fn keep_whole(
        &mut self,
        node: &NodeProto,
        index: usize,
        inputs: &[Option<ExprId>],
        scope: &Scope<'_>,
        next_index: &mut usize,
    ) -> std::result::Result<Vec<ExprId>, String> {
        let bodies = self
            .subgraph_closures(node, inputs, scope, next_index)
            .unwrap_or_default();
        self.opaque(node, index, inputs, scope.declared, &bodies)
    }

    /// `node` as a call of its native operator ([`Importer::native`]), its graph attributes
    /// as closures where the operator takes them.
    fn native_node(
        &mut self,
        node: &NodeProto,
        inputs: &[Option<ExprId>],
        scope: &Scope<'_>,
        next_index: &mut usize,
    ) -> std::result::Result<Vec<ExprId>, String> {
        let wanted =
            crate::native::get(node.domain(), node.op_type()).map_or(&[][..], |n| n.bodies);
        let bodies = match wanted {
            [] => Vec::new(),
            _ => {
                let closures = self
                    .subgraph_closures(node, inputs, scope, next_index)
                    .unwrap_or_default();
                wanted
                    .iter()
                    .filter_map(|w| closures.iter().find(|(n, _)| n == w).map(|(_, e)| *e))
                    .collect()
            }
        };
        self.native(node, inputs, scope.declared, &bodies)
    }

    /// Imports the nodes of `g` (a graph or a branch whose inputs and outer values are
    /// already in `self.values`), numbering them from `base`; `next_index` is the next free
    /// number past them.
    pub(super) fn nodes(
        &mut self,
        g: &GraphProto,
        base: usize,
        scope: &Scope<'_>,
        next_index: &mut usize,
    ) -> Result<()> {
        let opset = self.opset;
        let cannot_keep = |n: &NodeProto| super::opaque::cannot_keep(n, opset, scope.declared);
        let keep = self.plan_opaque(g, base, &cannot_keep)?;
        // The nodes in the order they are imported: the graph's, where an `If` whose
        // condition is known at import time is replaced by the nodes of the branch it takes
        // and the renaming of that branch's outputs to the `If`'s.
        let mut queue: VecDeque<Step<'_>> = g
            .node
            .iter()
            .enumerate()
            .map(|(i, n)| Step::Node(base + i, n))
            .collect();
        while let Some(step) = queue.pop_front() {
            let (i, node) = match step {
                Step::Node(i, node) => (i, node),
                Step::Rename(pairs) => {
                    self.rename(pairs);
                    continue;
                }
            };
            if let Some(branch) = self.taken_branch(node) {
                for t in &branch.initializer {
                    *next_index += 1;
                    let e = self.initializer(t, scope.dir, *next_index)?;
                    self.values.insert(t.name.clone().unwrap_or_default(), e);
                }
                let renames = branch
                    .output
                    .iter()
                    .map(|o| o.name())
                    .zip(node.output.iter().map(String::as_str))
                    .collect();
                queue.push_front(Step::Rename(renames));
                for n in branch.node.iter().rev() {
                    *next_index += 1;
                    queue.push_front(Step::Node(*next_index, n));
                }
                continue;
            }
            let at = node_name(node, i);
            let inputs = self.node_inputs(node, &at)?;
            let converted = if keep.contains(&i) {
                // Planned: its outputs are typed and its subgraphs read only graph inputs.
                self.keep_whole(node, i, &inputs, scope, next_index)
                    .map_err(ops::Failure::Unsupported)
            } else {
                self.import_node(node, i, &inputs, scope, next_index, &cannot_keep)
            };
            match converted {
                Ok(outputs) => self.bind_outputs(node, &at, &outputs),
                Err(ops::Failure::Unsupported(reason)) => {
                    // Later nodes that use this one's outputs are not converted either.
                    return Err(OnnxError::Unsupported(vec![Unsupported {
                        op_type: node.op_type().to_string(),
                        opset: self.opset,
                        node: at,
                        reason: Some(reason),
                    }]));
                }
                Err(ops::Failure::Invalid(message)) => {
                    return Err(OnnxError::Invalid(format!(
                        "node `{at}` ({}): {message}",
                        node.op_type()
                    )));
                }
            }
        }
        Ok(())
    }

    /// Gives each value named `from` the name `to` too (unconverted ones stay unconverted).
    fn rename(&mut self, pairs: Vec<(&str, &str)>) {
        for (from, to) in pairs {
            match self.values.get(from).copied() {
                Some(e) => {
                    self.values.insert(to.to_string(), e);
                }
                None => {
                    let what = self.unconverted.get(from).cloned();
                    let what = what.unwrap_or_else(|| format!("`{from}`"));
                    self.unconverted.insert(to.to_string(), what);
                }
            }
        }
    }

    /// The values `node` (named `at`) reads, `None` for an input left out.
    fn node_inputs(&self, node: &NodeProto, at: &str) -> Result<Vec<Option<ExprId>>> {
        let mut inputs = Vec::with_capacity(node.input.len());
        for name in &node.input {
            if name.is_empty() {
                inputs.push(None);
                continue;
            }
            // Every value is defined before it is used (`wellformed::check`): one missing
            // here is an output that its node's conversion left out.
            let Some(&e) = self.values.get(name) else {
                let what = self.unconverted.get(name).cloned();
                return Err(OnnxError::Unsupported(vec![Unsupported {
                    op_type: node.op_type().to_string(),
                    opset: self.opset,
                    node: at.to_string(),
                    reason: Some(format!(
                        "it uses {}",
                        what.unwrap_or_else(|| format!("`{name}`"))
                    )),
                }]));
            };
            inputs.push(Some(e));
        }
        Ok(inputs)
    }

    /// Imports `node` (number `i`) as, in order of preference, IR operators, its native
    /// definition, or kept whole.
    fn import_node(
        &mut self,
        node: &NodeProto,
        i: usize,
        inputs: &[Option<ExprId>],
        scope: &Scope<'_>,
        next_index: &mut usize,
        cannot_keep: &dyn Fn(&NodeProto) -> Option<String>,
    ) -> std::result::Result<Vec<ExprId>, ops::Failure> {
        // No IR operator takes a value the IR does not model: a node reading one is kept
        // whole (an `Identity` of one is the value itself).
        let identity = node.op_type() == "Identity" && node.domain().is_empty();
        let opaque_input = inputs
            .iter()
            .flatten()
            .filter(|_| !identity)
            .find_map(|&e| match self.typer.of(self.b.body(), e) {
                Some(Type::Opaque(name)) => Some(name.as_str()),
                _ => None,
            });
        // (Except the native operators made for such values: the sequence operators.)
        let takes_values =
            crate::native::get(node.domain(), node.op_type()).is_some_and(|n| n.values);
        let attempt = match opaque_input {
            Some(_) if takes_values => self
                .native_node(node, inputs, scope, next_index)
                .map_err(ops::Failure::Unsupported),
            Some(ty) => Err(ops::Failure::Unsupported(format!(
                "it reads a value of type `{ty}`, which the IR does not model"
            ))),
            None if is_if(node) => self.if_node(node, inputs, scope, next_index),
            None => match ops::convertible(node, self.opset)
                .and_then(|()| ops::convert(self, node, inputs))
            {
                // What the IR's operators do not hold, the operator's native definition may.
                Err(ops::Failure::Unsupported(reason)) => self
                    .native_node(node, inputs, scope, next_index)
                    .map_err(|why| ops::Failure::Unsupported(format!("{reason}; {why}"))),
                other => other,
            },
        };
        match attempt {
            // What the converter refuses is kept whole when it can be.
            Err(ops::Failure::Unsupported(reason)) => match cannot_keep(node) {
                None => self
                    .keep_whole(node, i, inputs, scope, next_index)
                    .map_err(|why| {
                        ops::Failure::Unsupported(format!(
                            "{reason}; {why}, so the node cannot be kept opaque"
                        ))
                    }),
                Some(why) => Err(ops::Failure::Unsupported(format!(
                    "{reason}; {why}, so the node cannot be kept opaque"
                ))),
            },
            Ok(outputs)
                if node.output[outputs.len().min(node.output.len())..]
                    .iter()
                    .any(|o| scope.read.contains(o.as_str()))
                    && cannot_keep(node).is_none() =>
            {
                // (The converted calls are left unused.) The native definition has every
                // output, where there is one.
                self.native_node(node, inputs, scope, next_index)
                    .or_else(|_| self.keep_whole(node, i, inputs, scope, next_index))
                    .or(Ok(outputs))
            }
            other => other,
        }
    }

    /// Names `node`'s outputs by what its import gave (`outputs`); one it did not give is
    /// recorded as unconverted, for the message of a node that reads it.
    fn bind_outputs(&mut self, node: &NodeProto, at: &str, outputs: &[ExprId]) {
        for (k, name) in node
            .output
            .iter()
            .enumerate()
            .filter(|(_, n)| !n.is_empty())
        {
            match outputs.get(k) {
                Some(&e) => {
                    self.values.insert(name.clone(), e);
                }
                None => {
                    let what = format!(
                        "output {k} of {} `{at}`, which is not converted",
                        node.op_type()
                    );
                    self.unconverted.insert(name.clone(), what);
                }
            }
        }
    }
}
