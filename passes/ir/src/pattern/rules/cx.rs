//! What a guard or a computed replacement sees: [`RuleCx`].

use std::sync::Arc;

use crate::body::{Body, BodyBuilder, ExprId, Node};
use crate::infer::LocalTyper;
use crate::pattern::uses::UseView;
use crate::{Attrs, DType, Op, Tensor, TensorType, Type};

/// What a guard or a computed replacement sees: the body being built (the match's ids are
/// its ids), its types, and helpers for what rules ask most.
pub struct RuleCx<'a> {
    /// The body being built: build replacements here.
    pub builder: &'a mut BodyBuilder,
    pub(super) typer: &'a mut LocalTyper,
    pub(super) uses: UseView<'a>,
}

impl RuleCx<'_> {
    /// The body built so far.
    pub fn body(&self) -> &Body {
        self.builder.body()
    }

    /// How many users node `e` had in the input (a user using it twice counts twice), `None`
    /// for a node a replacement built inside itself: `cx.uses(d) == Some(1)` is MLIR's
    /// `hasOneUse`.
    pub fn uses(&self, e: ExprId) -> Option<u32> {
        self.uses.of(e)
    }

    /// The type of node `e`, when known.
    pub fn ty(&mut self, e: ExprId) -> Option<Type> {
        self.typer.of(self.builder.body(), e).cloned()
    }

    /// The tensor type of node `e`, when it is a tensor of known type.
    pub fn tensor(&mut self, e: ExprId) -> Option<Arc<TensorType>> {
        self.typer.tensor(self.builder.body(), e)
    }

    /// The dtype of node `e`, when it is a tensor of known type.
    pub fn dtype(&mut self, e: ExprId) -> Option<DType> {
        self.tensor(e).map(|t| t.dtype)
    }

    /// The static shape of node `e`.
    pub fn shape(&mut self, e: ExprId) -> Option<Vec<usize>> {
        self.tensor(e)?.static_shape()
    }

    /// Whether `a` and `b` have the same known type (a replacement that would change a
    /// shape or a dtype is not one).
    pub fn same_type(&mut self, a: ExprId, b: ExprId) -> bool {
        match (self.ty(a), self.ty(b)) {
            (Some(x), Some(y)) => x.is_complete() && x == y,
            _ => false,
        }
    }

    /// The tensor of node `e` when it is a constant.
    pub fn constant(&self, e: ExprId) -> Option<&Arc<Tensor>> {
        match self.body().node(e) {
            Node::Constant(k) => Some(self.body().constant(*k)),
            _ => None,
        }
    }

    /// The value of node `e` when it is a scalar constant.
    pub fn scalar(&self, e: ExprId) -> Option<f64> {
        let t = self.constant(e)?;
        if t.shape().is_empty() {
            t.scalar_value()
        } else {
            None
        }
    }

    /// Whether node `e` is `v` everywhere: a constant of any shape all of whose elements are
    /// `v`, or a call of `zeros` (for 0) or `ones` (for 1).
    pub fn is_all(&self, e: ExprId, v: f64) -> bool {
        if let Some(t) = self.constant(e) {
            return t.float_values().iter().all(|&x| x == v);
        }
        matches!(
            (self.op_call(e), v),
            (Some(("zeros", _, _)), 0.0) | (Some(("ones", _, _)), 1.0)
        )
    }

    /// The scalar node `e` is everywhere, of its dtype, when it is a call of `zeros`, `ones`,
    /// or `full` of a scalar constant.
    pub fn uniform_scalar(&mut self, e: ExprId) -> Option<Tensor> {
        let dtype = self.dtype(e)?;
        match self.op_call(e)? {
            ("zeros", ..) => Some(Tensor::scalar(dtype, 0.0)),
            ("ones", ..) => Some(Tensor::scalar(dtype, 1.0)),
            ("full", &[v], _) => {
                let t = self.constant(v)?;
                t.shape().is_empty().then(|| t.cast(dtype))
            }
            _ => None,
        }
    }

    /// The operator name, arguments and attributes of node `e`, when it calls an operator.
    pub fn op_call(&self, e: ExprId) -> Option<(&'static str, &[ExprId], &Attrs)> {
        self.body()
            .op_call(e)
            .map(|(op, args, attrs)| (op.name(), args, attrs))
    }

    /// A call of operator `op`, or `None` when the operator refuses it (its arity or
    /// attributes: the rule then does not fire).
    pub fn call(&mut self, op: &str, args: &[ExprId], attrs: Attrs) -> Option<ExprId> {
        self.builder.op(op, args, attrs).ok()
    }

    /// A scalar constant.
    pub fn scalar_constant(&mut self, dtype: DType, v: f64) -> ExprId {
        self.builder.constant(Arc::new(Tensor::scalar(dtype, v)))
    }

    /// A call of operator `op` on `a` and `b` without attributes (`None` when it refuses them).
    pub fn binary(&mut self, op: &str, a: ExprId, b: ExprId) -> Option<ExprId> {
        self.call(op, &[a, b], Attrs::new())
    }

    /// A call of operator `op` on `a` without attributes (`None` when it refuses it).
    pub fn unary(&mut self, op: &str, a: ExprId) -> Option<ExprId> {
        self.call(op, &[a], Attrs::new())
    }

    /// A scalar constant of node `e`'s dtype (`None` when its type is not known).
    pub fn scalar_like(&mut self, e: ExprId, v: f64) -> Option<ExprId> {
        let dtype = self.dtype(e)?;
        Some(self.scalar_constant(dtype, v))
    }

    /// A constant.
    pub fn constant_node(&mut self, t: Tensor) -> ExprId {
        self.builder.constant(Arc::new(t))
    }

    /// The value of scalar constant `e` as an attribute value, as a template's `attr=?hole`
    /// reads it: a float as the shortest decimal of its own precision (a float32 `1e-5f` is
    /// the attribute 1e-5, not 9.999999747378752e-6), an integer as an integer.
    pub fn scalar_attr(&self, e: ExprId) -> Option<crate::AttrValue> {
        crate::pattern::template::scalar_attr(self.builder, e)
    }

    /// Attribute `name` of node `e`'s operator call: the one written, else the operator's
    /// default.
    pub fn attr(&self, e: ExprId, name: &str) -> Option<crate::AttrValue> {
        let (op, _, attrs) = self.body().op_call(e)?;
        op.attr_value(attrs, name)
    }

    /// Operator `op` applied to constant tensors, as a constant node (`None` when the operator
    /// refuses them).
    pub fn fold(&mut self, op: &str, args: &[&Tensor], attrs: &Attrs) -> Option<ExprId> {
        let values: Vec<crate::Value> = args
            .iter()
            .map(|t| crate::Value::tensor((*t).clone()))
            .collect();
        let v = Op::get(op).ok()?.eval(&values, attrs).ok()?;
        let t = v.as_tensor()?.clone();
        Some(self.constant_node(t))
    }
}
