//! An `If` whose condition is known only at run time, as an IR `if`: each branch's nodes
//! imported in the same function (a branch reads the graph's values by name, as the IR's
//! branches read the values around them), the branch's outputs its result (a tuple when
//! there are several), the condition a bool scalar. The passes then see into both branches
//! (folding, common subexpressions, dead code), and the interpreter evaluates only the branch
//! taken. A branch that does not import, or branches whose types differ, leave the node to be
//! kept whole.

use irpass_ir::{AttrValue, Attrs, DType, ExprId, Type};

use super::{Importer, Scope, ops::Failure};
use crate::proto::{GraphProto, NodeProto};

impl Importer {
    /// `If` node `node`, whose condition `inputs[0]` is not known at import time, as an IR
    /// `if`; its outputs' values.
    pub(super) fn if_node(
        &mut self,
        node: &NodeProto,
        inputs: &[Option<ExprId>],
        scope: &Scope<'_>,
        next_index: &mut usize,
    ) -> Result<Vec<ExprId>, Failure> {
        let Some(&Some(cond)) = inputs.first() else {
            return Err(Failure::Invalid("If has no condition".into()));
        };
        let cond_type = self
            .tensor_type(cond)
            .ok_or_else(|| Failure::Unsupported("the type of its condition is not known".into()))?;
        if cond_type.dtype != DType::Bool {
            return Err(Failure::Invalid(format!(
                "its condition is {}, not bool",
                cond_type.dtype
            )));
        }
        let cond = match cond_type.num_elements() {
            Some(1) if cond_type.rank() == 0 => cond,
            Some(1) => {
                let attrs = Attrs::from_pairs([("newshape", AttrValue::List(Vec::new()))]);
                self.b
                    .op("reshape", &[cond], attrs)
                    .map_err(Failure::Invalid)?
            }
            Some(n) => {
                return Err(Failure::Invalid(format!(
                    "its condition has {n} elements, not one"
                )));
            }
            None => {
                return Err(Failure::Unsupported(
                    "its condition's shape is not static".into(),
                ));
            }
        };
        let mut results = Vec::with_capacity(2);
        for name in ["then_branch", "else_branch"] {
            let branch = node
                .attribute
                .iter()
                .find(|a| a.name() == name)
                .and_then(|a| a.g.as_ref())
                .ok_or_else(|| Failure::Invalid(format!("If has no `{name}`")))?;
            if branch.output.len() != node.output.len() {
                return Err(Failure::Invalid(format!(
                    "its {name} has {} outputs and the node {}",
                    branch.output.len(),
                    node.output.len()
                )));
            }
            let outputs = self
                .branch(branch, scope, next_index)
                .map_err(|e| Failure::Unsupported(format!("its {name}: {e}")))?;
            results.push(outputs);
        }
        let (mut then, mut otherwise) = (results.swap_remove(0), results.swap_remove(0));
        for (t, e) in then.iter_mut().zip(&mut otherwise) {
            self.one_element_alike(t, e).map_err(Failure::Invalid)?;
        }
        let mut root = |outputs: &[ExprId]| match outputs {
            [one] => *one,
            _ => self.b.tuple(outputs),
        };
        let (t, e) = (root(&then), root(&otherwise));
        let if_ = self.b.if_(cond, t, e);
        if self.typer.of(self.b.body(), if_).is_none() {
            let show = |importer: &mut Importer, e: ExprId| {
                importer
                    .typer
                    .of(importer.b.body(), e)
                    .map_or_else(|| "not known".to_string(), Type::to_string)
            };
            let (t, e) = (show(self, t), show(self, e));
            return Err(Failure::Unsupported(format!(
                "its branches' outputs differ in type (then `{t}`, else `{e}`)"
            )));
        }
        Ok(match node.output.len() {
            1 => vec![if_],
            n => (0..n as u32).map(|k| self.b.proj(if_, k)).collect(),
        })
    }

    /// Two branches' outputs of one element each and one element type, written with
    /// different ranks (a scalar and a `[1]`, as ONNX's function expansions write): the one of
    /// lower rank reshaped to the other's shape, so that the `if` has one type. (Where the
    /// lower-rank branch is taken, the `if`'s output has unit axes more than ONNX Runtime
    /// would give it: the values are the same.)
    fn one_element_alike(&mut self, a: &mut ExprId, b: &mut ExprId) -> Result<(), String> {
        let (Some(ta), Some(tb)) = (self.tensor_type(*a), self.tensor_type(*b)) else {
            return Ok(());
        };
        let one = |t: &irpass_ir::TensorType| t.num_elements() == Some(1);
        if ta == tb || ta.dtype != tb.dtype || !one(&ta) || !one(&tb) || ta.rank() == tb.rank() {
            return Ok(());
        }
        let (low, high) = if ta.rank() < tb.rank() {
            (a, tb)
        } else {
            (b, ta)
        };
        let newshape = high.shape.iter().map(|_| AttrValue::Int(1)).collect();
        let attrs = Attrs::from_pairs([("newshape", AttrValue::List(newshape))]);
        *low = self.b.op("reshape", &[*low], attrs)?;
        Ok(())
    }

    /// The nodes of `branch` imported where the graph's values are in scope; the values of its
    /// outputs. The branch's own values are out of scope again afterwards, whether it
    /// imported or not.
    fn branch(
        &mut self,
        branch: &GraphProto,
        scope: &Scope<'_>,
        next_index: &mut usize,
    ) -> crate::error::Result<Vec<ExprId>> {
        if !branch.input.is_empty() {
            return Err(crate::error::OnnxError::Invalid(
                "an If branch has inputs".into(),
            ));
        }
        self.scoped(|importer| importer.subgraph_body(branch, scope, next_index))
    }
}
