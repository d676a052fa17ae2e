//! Templates: the replacement of a rule, an expression over the pattern's holes.

use std::sync::Arc;

use super::{Match, PatternError, RuleCx};
use crate::body::{BodyBuilder, ExprId, Node};
use crate::{AttrValue, Attrs, DType, Op, Span, Tensor};

/// A replacement written as text over a pattern's holes (`multiply(?x, 2f)`; the grammar is in
/// [`Template::parse`]).
#[derive(Clone, Debug)]
pub struct Template {
    pub(crate) text: String,
    pub(crate) root: TNode,
}

/// A node of a template.
#[derive(Clone, Debug)]
pub(crate) enum TNode {
    Hole(String, Span),
    Literal(Arc<Tensor>),
    Call {
        op: String,
        span: Span,
        args: Vec<TNode>,
        attrs: Vec<(String, TemplateAttr)>,
    },
    Tuple(Vec<TNode>),
    Proj(Box<TNode>, u32),
}

/// An attribute of a template's call: a value, or what a hole gives.
#[derive(Clone, Debug)]
pub(crate) enum TemplateAttr {
    Value(AttrValue),
    Hole(String, HoleProp, Span),
}

/// What an attribute takes from a hole.
#[derive(Clone, Copy, Debug)]
pub(crate) enum HoleProp {
    /// The value of the scalar constant the hole is bound to (`?eps`).
    Value,
    /// The static shape of the hole's type (`?x.shape`).
    Shape,
    /// The dtype of the hole's type (`?x.dtype`).
    Dtype,
}

impl Template {
    /// The holes the template uses, in order of first use.
    pub fn holes(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![&self.root];
        while let Some(n) = stack.pop() {
            match n {
                TNode::Hole(h, _) => {
                    if !out.contains(h) {
                        out.push(h.clone());
                    }
                }
                TNode::Literal(_) => {}
                TNode::Call { args, attrs, .. } => {
                    // Attribute holes after the arguments, the arguments in order.
                    for (_, a) in attrs.iter().rev() {
                        if let TemplateAttr::Hole(h, _, _) = a
                            && !out.contains(h)
                        {
                            out.push(h.clone());
                        }
                    }
                    stack.extend(args.iter().rev());
                }
                TNode::Tuple(fields) => stack.extend(fields.iter().rev()),
                TNode::Proj(t, _) => stack.push(t),
            }
        }
        out
    }

    /// Checks the template against the holes its pattern binds and the operator registry: a
    /// hole the pattern does not bind, an operator no operator has (with the closest names),
    /// or a literal attribute its operator cannot hold.
    ///
    /// # Errors
    /// The first problem, at its place in the template's text.
    pub fn check(&self, bound: &[&str]) -> Result<(), PatternError> {
        let mut stack = vec![&self.root];
        while let Some(n) = stack.pop() {
            match n {
                TNode::Hole(h, span) => self.bound(h, *span, bound)?,
                TNode::Literal(_) => {}
                TNode::Call {
                    op,
                    span,
                    args,
                    attrs,
                } => {
                    let op = Op::get(op).map_err(|e| PatternError::at(e, *span, &self.text))?;
                    for (name, a) in attrs {
                        match a {
                            TemplateAttr::Hole(h, _, hspan) => self.bound(h, *hspan, bound)?,
                            TemplateAttr::Value(v) => {
                                op.convert_attr(name, v)
                                    .map_err(|e| PatternError::at(e, *span, &self.text))?;
                            }
                        }
                    }
                    stack.extend(args);
                }
                TNode::Tuple(fields) => stack.extend(fields),
                TNode::Proj(t, _) => stack.push(t),
            }
        }
        Ok(())
    }

    fn bound(&self, hole: &str, span: Span, bound: &[&str]) -> Result<(), PatternError> {
        if bound.contains(&hole) {
            return Ok(());
        }
        let near = irpass::suggest::closest(hole, bound.iter().copied());
        Err(PatternError::at(
            format!(
                "`?{hole}` is not bound by the pattern{}",
                irpass::suggest::did_you_mean(&near)
            ),
            span,
            &self.text,
        ))
    }

    /// Builds the replacement from the captures of `m` (ids of the body `cx` builds); `None`
    /// when an attribute hole does not give a value (a hole that is not a scalar constant, a
    /// type that is not known or not static).
    ///
    /// # Errors
    /// A call the operator refuses (its arity or attributes).
    pub fn build(&self, cx: &mut RuleCx<'_>, m: &Match) -> Result<Option<ExprId>, String> {
        self.node(&self.root, cx, m)
    }

    /// The nodes of `items`, or `None` when one does not build.
    fn nodes(
        &self,
        items: &[TNode],
        cx: &mut RuleCx<'_>,
        m: &Match,
    ) -> Result<Option<Vec<ExprId>>, String> {
        let mut out = Vec::with_capacity(items.len());
        for i in items {
            match self.node(i, cx, m)? {
                Some(e) => out.push(e),
                None => return Ok(None),
            }
        }
        Ok(Some(out))
    }

    /// Builds one node; templates nest as deep as their text, which the parser bounds.
    fn node(&self, n: &TNode, cx: &mut RuleCx<'_>, m: &Match) -> Result<Option<ExprId>, String> {
        let hole = |h: &str| m.get(h).ok_or_else(|| format!("`?{h}` is not bound"));
        Ok(Some(match n {
            TNode::Hole(h, _) => hole(h)?,
            TNode::Literal(t) => cx.builder.constant(t.clone()),
            TNode::Call {
                op, args, attrs, ..
            } => {
                let Some(args) = self.nodes(args, cx, m)? else {
                    return Ok(None);
                };
                let mut set = Attrs::new();
                for (name, a) in attrs {
                    let v = match a {
                        TemplateAttr::Value(v) => Some(v.clone()),
                        TemplateAttr::Hole(h, HoleProp::Value, _) => {
                            scalar_attr(cx.builder, hole(h)?)
                        }
                        TemplateAttr::Hole(h, HoleProp::Shape, _) => cx.shape(hole(h)?).map(|s| {
                            AttrValue::List(s.iter().map(|&d| AttrValue::Int(d as i64)).collect())
                        }),
                        TemplateAttr::Hole(h, HoleProp::Dtype, _) => {
                            cx.dtype(hole(h)?).map(|d| AttrValue::Str(d.name().into()))
                        }
                    };
                    let Some(v) = v else { return Ok(None) };
                    set.set(name, v);
                }
                cx.builder.op(op, &args, set)?
            }
            TNode::Tuple(fields) => {
                let Some(fields) = self.nodes(fields, cx, m)? else {
                    return Ok(None);
                };
                cx.builder.tuple(&fields)
            }
            TNode::Proj(t, i) => {
                let Some(t) = self.node(t, cx, m)? else {
                    return Ok(None);
                };
                cx.builder.proj(t, *i)
            }
        }))
    }
}

/// The value of a scalar constant node as an attribute value.
pub(crate) fn scalar_attr(b: &BodyBuilder, e: ExprId) -> Option<AttrValue> {
    let Node::Constant(k) = b.body().node(e) else {
        return None;
    };
    let t = b.body().constant(*k);
    if !t.shape().is_empty() {
        return None;
    }
    let v = t.scalar_value()?;
    Some(if t.dtype().is_float() {
        // The shortest decimal of the constant's own precision: a float32 `1e-05f` gives the
        // attribute 1e-05, not the float32's exact 9.999999747378752e-06.
        let v = match t.dtype() {
            DType::Float64 => v,
            _ => (v as f32).to_string().parse().unwrap_or(v),
        };
        AttrValue::Float(v)
    } else {
        AttrValue::Int(v as i64)
    })
}
