//! Patterns compiled for matching: a dense vector of nodes (one per pattern node, a shared one
//! once), operators resolved, attribute constraints converted to the operator's kinds.

use std::collections::HashMap;
use std::sync::Arc;

use super::{Pattern, PatternError, PatternKind};
use crate::{AttrValue, Attrs, DType, Dim, Op, Tensor, Type};

/// A pattern node's index in [`CompiledPattern`].
pub(crate) type PId = u32;

/// A compiled pattern node: [`PatternKind`] with indices for children and operators resolved.
#[derive(Clone, Debug)]
pub(crate) enum PNode {
    Wildcard,
    Named(PId),
    /// An operator; `None` for a name no operator has (a lenient compile: matches nothing).
    Op(Option<Op>),
    Call {
        callee: PId,
        args: Option<Vec<PId>>,
    },
    Var(Option<Arc<str>>),
    Constant,
    Literal(Arc<Tensor>),
    Tuple(Option<Vec<PId>>),
    Proj(PId, Option<u32>),
    If(PId, PId, PId),
    Let(PId, PId, PId),
    Function(Option<Vec<PId>>, PId),
    Alt(PId, PId),
    HasAttrs(PId, Attrs),
    HasType(PId, Type),
    HasDtype(PId, DType),
    HasShape(PId, Vec<Dim>),
    Dominates {
        parent: PId,
        path: PId,
        child: PId,
    },
}

/// A pattern ready to match: checked (every operator exists, every attribute constraint fits
/// its operator's schema) and laid out densely, so a match allocates nothing per node.
#[derive(Clone, Debug)]
pub struct CompiledPattern {
    pub(crate) nodes: Vec<PNode>,
    pub(crate) root: PId,
    /// The captures: name and node, in order of first appearance.
    pub(crate) names: Vec<(Arc<str>, PId)>,
    /// The operators a match's root calls, when the pattern fixes them (the rule index).
    root_ops: Option<Vec<Op>>,
}

struct Compiler {
    nodes: Vec<PNode>,
    seen: HashMap<*const PatternKind, PId>,
    names: Vec<(Arc<str>, PId)>,
    lenient: bool,
    errors: Vec<String>,
}

impl CompiledPattern {
    /// Compiles `pattern`.
    ///
    /// # Errors
    /// Each operator name no operator has (with the closest names), and each attribute
    /// constraint its operator's schema does not have or cannot hold, in one error.
    pub fn new(pattern: &Pattern) -> Result<CompiledPattern, PatternError> {
        let mut c = Compiler::new(false);
        let root = c.node(pattern);
        if !c.errors.is_empty() {
            return Err(PatternError::new(c.errors.join("; ")));
        }
        Ok(c.finish(root))
    }

    /// Compiles `pattern`, an unknown operator matching nothing.
    pub(crate) fn new_lenient(pattern: &Pattern) -> CompiledPattern {
        let mut c = Compiler::new(true);
        let root = c.node(pattern);
        c.finish(root)
    }

    /// The operators a match's root calls, when the pattern fixes them: a rule set looks a
    /// node's operator up among these instead of trying every rule.
    pub fn root_ops(&self) -> Option<&[Op]> {
        self.root_ops.as_deref()
    }

    /// The names of the captures, in order of first appearance.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(|(n, _)| &**n)
    }

    /// The operators of the pattern rooted at `p`, if it can only match calls of them.
    fn ops_at(&self, p: PId) -> Option<Vec<Op>> {
        match &self.nodes[p as usize] {
            PNode::Call { callee, .. } => self.callee_ops(*callee),
            PNode::Named(inner)
            | PNode::HasAttrs(inner, _)
            | PNode::HasType(inner, _)
            | PNode::HasDtype(inner, _)
            | PNode::HasShape(inner, _) => self.ops_at(*inner),
            PNode::Dominates { child, .. } => self.ops_at(*child),
            PNode::Alt(a, b) => {
                let mut ops = self.ops_at(*a)?;
                ops.extend(self.ops_at(*b)?);
                Some(ops)
            }
            _ => None,
        }
    }

    fn callee_ops(&self, p: PId) -> Option<Vec<Op>> {
        match &self.nodes[p as usize] {
            PNode::Op(Some(op)) => Some(vec![*op]),
            PNode::Op(None) => Some(Vec::new()),
            PNode::Named(inner) | PNode::HasAttrs(inner, _) => self.callee_ops(*inner),
            PNode::Alt(a, b) => {
                let mut ops = self.callee_ops(*a)?;
                ops.extend(self.callee_ops(*b)?);
                Some(ops)
            }
            _ => None,
        }
    }
}

impl Compiler {
    fn new(lenient: bool) -> Self {
        Compiler {
            nodes: Vec::new(),
            seen: HashMap::new(),
            names: Vec::new(),
            lenient,
            errors: Vec::new(),
        }
    }

    fn finish(self, root: PId) -> CompiledPattern {
        let mut out = CompiledPattern {
            nodes: self.nodes,
            root,
            names: self.names,
            root_ops: None,
        };
        out.root_ops = out.ops_at(root);
        out
    }

    fn push(&mut self, n: PNode) -> PId {
        self.nodes.push(n);
        (self.nodes.len() - 1) as PId
    }

    fn list(&mut self, ps: &Option<Vec<Pattern>>) -> Option<Vec<PId>> {
        ps.as_ref()
            .map(|ps| ps.iter().map(|p| self.node(p)).collect())
    }

    /// The node of `p`, compiled once however often it is used. Patterns nest a bounded
    /// number of levels (the text parser's limit; a pattern built in Rust is as deep as its
    /// author wrote it), so this recursion is bounded by the pattern, never by the input.
    fn node(&mut self, p: &Pattern) -> PId {
        let key = Arc::as_ptr(&p.0);
        if let Some(&id) = self.seen.get(&key) {
            return id;
        }
        let n = match p.kind() {
            PatternKind::Wildcard => PNode::Wildcard,
            PatternKind::Named(name, inner) => {
                let inner = self.node(inner);
                let id = self.push(PNode::Named(inner));
                self.names.push((name.clone(), id));
                self.seen.insert(key, id);
                return id;
            }
            PatternKind::Op(name) => PNode::Op(self.op(name)),
            PatternKind::Call { callee, args } => {
                let callee = self.node(callee);
                let args = self.list(args);
                PNode::Call { callee, args }
            }
            PatternKind::Var(name) => PNode::Var(name.clone()),
            PatternKind::Constant => PNode::Constant,
            PatternKind::Literal(t) => PNode::Literal(t.clone()),
            PatternKind::Tuple(fields) => PNode::Tuple(self.list(fields)),
            PatternKind::Proj(t, i) => PNode::Proj(self.node(t), *i),
            PatternKind::If(c, t, e) => PNode::If(self.node(c), self.node(t), self.node(e)),
            PatternKind::Let(v, value, body) => {
                PNode::Let(self.node(v), self.node(value), self.node(body))
            }
            PatternKind::Function(params, body) => {
                PNode::Function(self.list(params), self.node(body))
            }
            PatternKind::Alt(a, b) => PNode::Alt(self.node(a), self.node(b)),
            PatternKind::HasAttrs(inner, attrs) => {
                let inner_id = self.node(inner);
                let attrs = self.attrs_for(inner, attrs);
                PNode::HasAttrs(inner_id, attrs)
            }
            PatternKind::HasType(inner, t) => PNode::HasType(self.node(inner), t.clone()),
            PatternKind::HasDtype(inner, d) => PNode::HasDtype(self.node(inner), *d),
            PatternKind::HasShape(inner, s) => PNode::HasShape(self.node(inner), s.clone()),
            PatternKind::Dominates {
                parent,
                path,
                child,
            } => PNode::Dominates {
                parent: self.node(parent),
                path: self.node(path),
                child: self.node(child),
            },
        };
        let id = self.push(n);
        self.seen.insert(key, id);
        id
    }

    fn op(&mut self, name: &str) -> Option<Op> {
        match Op::get(name) {
            Ok(op) => Some(op),
            Err(e) => {
                if !self.lenient {
                    self.errors.push(e);
                }
                None
            }
        }
    }

    /// An attribute constraint on `inner`, converted to the kinds of its operator's schema when
    /// `inner` calls one operator (`alpha=0` is the float `0.0` of `nn.leaky_relu`).
    fn attrs_for(&mut self, inner: &Pattern, attrs: &Attrs) -> Attrs {
        let op = match inner.kind() {
            PatternKind::Call { callee, .. } => match callee.kind() {
                PatternKind::Op(name) => Op::get(name).ok(),
                _ => None,
            },
            _ => None,
        };
        let Some(op) = op else {
            return attrs.clone();
        };
        let mut out = Attrs::new();
        for (name, v) in attrs.iter() {
            match op.convert_attr(name, v) {
                Ok(v) => out.set(name, v),
                Err(e) => {
                    if !self.lenient {
                        self.errors.push(e);
                    }
                    out.set(name, v.clone());
                }
            }
        }
        out
    }
}

/// Whether an attribute of a match equals a constraint's value (numbers by value, so an
/// integer constraint matches a float attribute of the same value).
pub(crate) fn attr_eq(actual: &AttrValue, wanted: &AttrValue) -> bool {
    match (actual, wanted) {
        (AttrValue::List(a), AttrValue::List(w)) => {
            a.len() == w.len() && a.iter().zip(w).all(|(a, w)| attr_eq(a, w))
        }
        (AttrValue::Int(_) | AttrValue::Float(_), AttrValue::Int(_) | AttrValue::Float(_)) => {
            actual.as_float() == wanted.as_float()
        }
        _ => actual == wanted,
    }
}
