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
    /// The same names, shared with every match.
    pub(crate) hole_names: Arc<[Arc<str>]>,
    /// What a match's root is, when the pattern fixes it: the operators it calls, or the kind
    /// of node (the rule index).
    root_keys: Option<Vec<RootKey>>,
    /// The pattern as a flat call, when it is one: matched without the general machinery.
    pub(crate) flat: Option<Flat>,
}

/// A pattern that is a call of fixed operators whose arguments are holes or wildcards
/// (`multiply(?x, ?c)`, `add(?x, ?x)`, `cast(_) as ?r`): most rules' patterns.
#[derive(Clone, Debug)]
pub(crate) struct Flat {
    /// The operators the call may call.
    pub ops: Vec<Op>,
    /// Each argument's hole (an index into the names), `None` for a wildcard.
    pub args: Vec<Option<usize>>,
    /// The hole the whole call is captured as.
    pub root: Option<usize>,
}

/// What a node is, for indexing rules by their root: the operator of an operator call
/// (by its definition's address), else the kind of node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum RootKey {
    Op(usize),
    Kind(u8),
}

impl RootKey {
    /// The key of operator `op`.
    pub(crate) fn op(op: Op) -> RootKey {
        RootKey::Op(std::ptr::from_ref(op.def()) as usize)
    }

    /// The number of node kinds other than operator calls ([`RootKey::Kind`]'s values).
    pub(crate) const KINDS: u8 = 9;

    /// The key of node `e` of `b`.
    pub(crate) fn of(b: &crate::body::Body, e: crate::body::ExprId) -> RootKey {
        match b.node(e) {
            crate::body::Node::CallOp { sig, .. } => RootKey::op(b.sig(*sig).op),
            n => RootKey::Kind(RootKey::kind(n).unwrap_or(0)),
        }
    }

    /// The [`RootKey::Kind`] value of a node that is not an operator call (`None` for one).
    #[inline]
    pub(crate) fn kind(n: &crate::body::Node) -> Option<u8> {
        use crate::body::Node;
        Some(match n {
            Node::CallOp { .. } => return None,
            Node::Var(_) => 0,
            Node::Global(_) => 1,
            Node::Constant(_) => 2,
            Node::Call { .. } => 3,
            Node::Let { .. } => 4,
            Node::Tuple(_) => 5,
            Node::Proj(..) => 6,
            Node::If(..) => 7,
            Node::Closure(_) => 8,
        })
    }
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

    /// What a match's root can be, when the pattern fixes it: a rule set looks a node up
    /// among these instead of trying every rule.
    pub(crate) fn root_keys(&self) -> Option<&[RootKey]> {
        self.root_keys.as_deref()
    }

    /// The names of the captures, in order of first appearance.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(|(n, _)| &**n)
    }

    /// The flat form of the pattern rooted at `p`, if it has one.
    fn flat_at(&self, p: PId) -> Option<Flat> {
        let name_of = |id: PId| self.names.iter().position(|&(_, n)| n == id);
        let (root, call) = match &self.nodes[p as usize] {
            PNode::Named(inner) => (Some(name_of(p)?), *inner),
            _ => (None, p),
        };
        let PNode::Call {
            callee,
            args: Some(args),
        } = &self.nodes[call as usize]
        else {
            return None;
        };
        let ops = self.plain_ops(*callee)?;
        let args = args
            .iter()
            .map(|&a| match &self.nodes[a as usize] {
                PNode::Wildcard => Some(None),
                PNode::Named(inner) if matches!(self.nodes[*inner as usize], PNode::Wildcard) => {
                    Some(Some(name_of(a)?))
                }
                _ => None,
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Flat { ops, args, root })
    }

    /// The operators of a callee made of operator names and alternatives only.
    fn plain_ops(&self, p: PId) -> Option<Vec<Op>> {
        match &self.nodes[p as usize] {
            PNode::Op(op) => Some(op.iter().copied().collect()),
            PNode::Alt(a, b) => {
                let mut ops = self.plain_ops(*a)?;
                ops.extend(self.plain_ops(*b)?);
                Some(ops)
            }
            _ => None,
        }
    }

    /// What the pattern rooted at `p` can match, if it fixes it.
    fn keys_at(&self, p: PId) -> Option<Vec<RootKey>> {
        let kind = |k| Some(vec![RootKey::Kind(k)]);
        match &self.nodes[p as usize] {
            PNode::Call { callee, .. } => match &self.nodes[*callee as usize] {
                PNode::Function(..) | PNode::Var(_) => kind(3),
                _ => self.callee_ops(*callee),
            },
            PNode::Named(inner)
            | PNode::HasAttrs(inner, _)
            | PNode::HasType(inner, _)
            | PNode::HasDtype(inner, _)
            | PNode::HasShape(inner, _) => self.keys_at(*inner),
            PNode::Dominates { child, .. } => self.keys_at(*child),
            PNode::Alt(a, b) => {
                let mut keys = self.keys_at(*a)?;
                keys.extend(self.keys_at(*b)?);
                Some(keys)
            }
            PNode::Var(_) => kind(0),
            PNode::Constant | PNode::Literal(_) => kind(2),
            PNode::Let(..) => kind(4),
            PNode::Tuple(_) => kind(5),
            PNode::Proj(..) => kind(6),
            PNode::If(..) => kind(7),
            PNode::Function(..) => kind(8),
            PNode::Op(_) => Some(Vec::new()),
            PNode::Wildcard => None,
        }
    }

    /// The operators a callee pattern can match, if it fixes them.
    fn callee_ops(&self, p: PId) -> Option<Vec<RootKey>> {
        match &self.nodes[p as usize] {
            PNode::Op(Some(op)) => Some(vec![RootKey::op(*op)]),
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
            hole_names: self.names.iter().map(|(n, _)| n.clone()).collect(),
            names: self.names,
            root_keys: None,
            flat: None,
        };
        out.root_keys = out.keys_at(root);
        out.flat = out.flat_at(root);
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
