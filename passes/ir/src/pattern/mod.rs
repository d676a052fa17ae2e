//! Declarative rewrites: the dataflow pattern language of TVM's `relay.dataflow_pattern` on the
//! arena IR, rules made of a pattern and a replacement, and the partitioner.
//!
//! - A [`Pattern`] describes expressions: [`wildcard`], operator calls ([`is_op`] then
//!   [`Pattern::call`]), constants ([`is_constant`], or one value: [`is_literal`]), variables
//!   ([`is_var`]), tuples and projections, `if`, `let`, closures, alternatives
//!   ([`Pattern::or`]), [`Pattern::optional`], attribute, type, dtype and shape constraints, the
//!   dominator pattern ([`dominates`]) and named captures ([`Pattern::named`]). A pattern node
//!   used twice matches one expression (a diamond is written by using a pattern twice), and
//!   `add` and `multiply` match either operand order.
//! - Patterns are also text ([`Pattern::parse`]): the IR's own call syntax with holes, e.g.
//!   `nn.relu(nn.bias_add(nn.conv2d(?x, ?w), ?b))`; the grammar is in [`parse`].
//! - [`Pattern::find`] matches one node and returns the captures ([`Match`]).
//! - A [`Rule`] is a pattern and a replacement (a [`Template`] in the same syntax, e.g.
//!   `?x`, or Rust code), with an optional guard; a [`RuleSet`] applies rules to a fixpoint over
//!   [`ArenaFunction::rewrite`](crate::body::ArenaFunction::rewrite), keeping sharing, scoping and identity, and
//!   indexes them by the operator at their root.
//! - [`partition`] wraps each match into a closure with attributes (TVM's `partition`).
//!
//! ```
//! use irpass_ir::Module;
//! use irpass_ir::pattern::{Rule, RuleSet};
//!
//! let rules = RuleSet::new("fold", vec![Rule::template("mul_one", "multiply(?x, 1f)", "?x")]);
//! let m = Module::parse("def @main(%a: float32) { exp(multiply(%a, 1f)) }").unwrap();
//! let main = m.get("main").unwrap();
//! let out = rules.apply(&main.code, None).unwrap();
//! let text = Module::from_functions([("main", main.with_code(out))]).to_string();
//! assert!(text.contains("exp(%a)"), "{text}");
//! ```

mod compile;
mod error;
mod matcher;
pub mod parse;
mod partition;
mod pass;
mod rules;
mod template;
mod uses;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::{AttrValue, Attrs, DType, Dim, Tensor, Type};

pub use compile::CompiledPattern;
pub use error::PatternError;
pub use matcher::{Match, Matcher, Skip};
pub use partition::{PartitionCheck, PartitionOptions, partition};
pub use pass::run_pass;
pub use rules::{Guard, MAX_ROUNDS, Rule, RuleCx, RuleSet, Rules};
pub use template::Template;

/// A pattern over expressions. Cloning a pattern shares it: a pattern node used in two places
/// matches the same expression in both (TVM's rule), which is how a diamond is written.
#[derive(Clone)]
pub struct Pattern(pub(crate) Arc<PatternKind>);

/// What a [`Pattern`] node is.
#[derive(Clone, Debug)]
pub enum PatternKind {
    /// Anything.
    Wildcard,
    /// A pattern whose match is captured under a name.
    Named(Arc<str>, Pattern),
    /// An operator, by name (in callee position: what an operator call calls).
    Op(Arc<str>),
    /// A call: of an operator (the callee an [`PatternKind::Op`], a wildcard or an alternative of
    /// them) or of a function value. `None` arguments: any number of any arguments.
    Call {
        /// What is called.
        callee: Pattern,
        /// The arguments, or `None` for any.
        args: Option<Vec<Pattern>>,
    },
    /// A variable, with this name when given.
    Var(Option<Arc<str>>),
    /// Any constant.
    Constant,
    /// A constant equal to this tensor (dtype, shape and bits).
    Literal(Arc<Tensor>),
    /// A tuple with these fields, or any tuple.
    Tuple(Option<Vec<Pattern>>),
    /// A projection out of a tuple, at this index or any.
    Proj(Pattern, Option<u32>),
    /// `if (cond) { then } else { otherwise }`.
    If(Pattern, Pattern, Pattern),
    /// A block of one binding: `let var = value; body`.
    Let(Pattern, Pattern, Pattern),
    /// A closure with these parameters (or any) and body.
    Function(Option<Vec<Pattern>>, Pattern),
    /// Either pattern (the left one tried first).
    Alt(Pattern, Pattern),
    /// A pattern whose match has these attributes (an operator call's, a closure's; on an
    /// operator in callee position, `TOpPattern` is the operator's fusion kind).
    HasAttrs(Pattern, Attrs),
    /// A pattern whose match has this type.
    HasType(Pattern, Type),
    /// A pattern whose match is a tensor of this dtype.
    HasDtype(Pattern, DType),
    /// A pattern whose match is a tensor of this shape.
    HasShape(Pattern, Vec<Dim>),
    /// `child`, whose every operand reaches one node matching `parent` through nodes matching
    /// `path` only: the parent dominates the child (TVM's `dominates`).
    Dominates {
        /// The single node every path starts from.
        parent: Pattern,
        /// What each node between them matches.
        path: Pattern,
        /// The node every path ends at.
        child: Pattern,
    },
}

impl Pattern {
    /// A pattern of this kind.
    pub fn new(kind: PatternKind) -> Pattern {
        Pattern(Arc::new(kind))
    }

    /// What this pattern node is.
    pub fn kind(&self) -> &PatternKind {
        &self.0
    }

    /// Parses a pattern from text ([`parse`] gives the grammar).
    ///
    /// # Errors
    /// A syntax error, with the span of the offending token.
    pub fn parse(text: &str) -> Result<Pattern, PatternError> {
        parse::pattern(text)
    }

    /// The patterns directly inside this one, in the order written.
    fn children(&self) -> Vec<&Pattern> {
        match self.kind() {
            PatternKind::Wildcard
            | PatternKind::Op(_)
            | PatternKind::Var(_)
            | PatternKind::Constant
            | PatternKind::Literal(_) => Vec::new(),
            PatternKind::Named(_, inner) => vec![inner],
            PatternKind::Call { callee, args } => {
                let mut c = vec![callee];
                c.extend(args.iter().flatten());
                c
            }
            PatternKind::Tuple(fields) => fields.iter().flatten().collect(),
            PatternKind::Proj(t, _) => vec![t],
            PatternKind::If(a, b, c) | PatternKind::Let(a, b, c) => vec![a, b, c],
            PatternKind::Function(params, body) => {
                let mut c: Vec<&Pattern> = params.iter().flatten().collect();
                c.push(body);
                c
            }
            PatternKind::Alt(a, b) => vec![a, b],
            PatternKind::HasAttrs(p, _)
            | PatternKind::HasType(p, _)
            | PatternKind::HasDtype(p, _)
            | PatternKind::HasShape(p, _) => vec![p],
            PatternKind::Dominates {
                parent,
                path,
                child,
            } => vec![parent, path, child],
        }
    }

    /// The names of the pattern's holes (named captures), in order of first appearance: what
    /// a template or a guard may use.
    pub fn holes(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![self];
        while let Some(p) = stack.pop() {
            if !seen.insert(Arc::as_ptr(&p.0)) {
                continue;
            }
            if let PatternKind::Named(name, _) = p.kind()
                && !out.iter().any(|n| **n == **name)
            {
                out.push(name.to_string());
            }
            // Reversed onto the stack: visited in the order written.
            stack.extend(p.children().into_iter().rev());
        }
        out
    }

    /// The holes every match of the pattern captures: those not only on one side of an
    /// alternative (nor only on a dominator's path, which may be empty). A guard may read these
    /// as captured; the others it must ask for (`Match::get`).
    pub fn always_bound(&self) -> Vec<String> {
        fn walk(p: &Pattern, memo: &mut HashMap<*const PatternKind, Vec<String>>) -> Vec<String> {
            if let Some(known) = memo.get(&Arc::as_ptr(&p.0)) {
                return known.clone();
            }
            // What every match of all of `ps` captures.
            let mut union = |ps: Vec<&Pattern>| {
                let mut out: Vec<String> = Vec::new();
                for q in ps {
                    for n in walk(q, memo) {
                        if !out.contains(&n) {
                            out.push(n);
                        }
                    }
                }
                out
            };
            let out = match p.kind() {
                PatternKind::Named(name, inner) => {
                    let mut out = vec![name.to_string()];
                    out.extend(union(vec![inner]).into_iter().filter(|n| **n != **name));
                    out
                }
                PatternKind::Alt(a, b) => {
                    let right = union(vec![b]);
                    union(vec![a])
                        .into_iter()
                        .filter(|n| right.contains(n))
                        .collect()
                }
                PatternKind::Dominates { parent, child, .. } => union(vec![parent, child]),
                _ => union(p.children()),
            };
            memo.insert(Arc::as_ptr(&p.0), out.clone());
            out
        }
        walk(self, &mut HashMap::new())
    }

    /// A call with this pattern as the callee and these argument patterns.
    pub fn call(&self, args: impl IntoIterator<Item = Pattern>) -> Pattern {
        Pattern::new(PatternKind::Call {
            callee: self.clone(),
            args: Some(args.into_iter().collect()),
        })
    }

    /// A call with this pattern as the callee and any arguments (TVM's `pattern(None)`).
    pub fn call_any(&self) -> Pattern {
        Pattern::new(PatternKind::Call {
            callee: self.clone(),
            args: None,
        })
    }

    /// This pattern, its match captured under `name`.
    pub fn named(&self, name: &str) -> Pattern {
        Pattern::new(PatternKind::Named(name.into(), self.clone()))
    }

    /// This pattern or `other`.
    pub fn or(&self, other: &Pattern) -> Pattern {
        Pattern::new(PatternKind::Alt(self.clone(), other.clone()))
    }

    /// This pattern, or `wrap` applied to it (TVM's `optional`): `conv.optional(|p|
    /// is_op("nn.bias_add").call([p, wildcard()]))` matches a convolution with or without a bias.
    pub fn optional(&self, wrap: impl FnOnce(Pattern) -> Pattern) -> Pattern {
        let wrapped = wrap(self.clone());
        wrapped.or(self)
    }

    /// This pattern where the match has these attributes.
    pub fn has_attrs<I, S>(&self, attrs: I) -> Pattern
    where
        I: IntoIterator<Item = (S, AttrValue)>,
        S: Into<String>,
    {
        Pattern::new(PatternKind::HasAttrs(
            self.clone(),
            Attrs::from_pairs(attrs),
        ))
    }

    /// This pattern where the match has type `ty`.
    pub fn has_type(&self, ty: Type) -> Pattern {
        Pattern::new(PatternKind::HasType(self.clone(), ty))
    }

    /// This pattern where the match is a tensor of `dtype`.
    pub fn has_dtype(&self, dtype: DType) -> Pattern {
        Pattern::new(PatternKind::HasDtype(self.clone(), dtype))
    }

    /// This pattern where the match is a tensor of `shape`.
    pub fn has_shape(&self, shape: &[i64]) -> Pattern {
        let dims = shape.iter().map(|&d| Dim::Static(d)).collect();
        Pattern::new(PatternKind::HasShape(self.clone(), dims))
    }

    /// A projection of this pattern's match, at `index`.
    pub fn proj(&self, index: u32) -> Pattern {
        Pattern::new(PatternKind::Proj(self.clone(), Some(index)))
    }

    /// Whether this pattern matches node `e` of `f` (types, for type constraints, from
    /// `types` when given, else inferred locally).
    pub fn matches(&self, f: &crate::ArenaFunction, e: crate::ExprId) -> bool {
        self.find(f, e).is_some()
    }

    /// The match of this pattern at node `e` of `f`, with its captures. An operator name no
    /// operator has matches nothing here; [`CompiledPattern::new`] reports it.
    pub fn find(&self, f: &crate::ArenaFunction, e: crate::ExprId) -> Option<Match> {
        let compiled = CompiledPattern::new_lenient(self);
        Matcher::new(&f.body, None).find(&compiled, e)
    }
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Any expression (TVM's `wildcard()`).
pub fn wildcard() -> Pattern {
    Pattern::new(PatternKind::Wildcard)
}

/// The operator `name`, to be called ([`Pattern::call`]): `is_op("add").call([wildcard(),
/// is_constant()])`.
pub fn is_op(name: &str) -> Pattern {
    Pattern::new(PatternKind::Op(name.into()))
}

/// A variable named `name` (any variable for `None`).
pub fn is_var(name: Option<&str>) -> Pattern {
    Pattern::new(PatternKind::Var(name.map(Into::into)))
}

/// Any constant.
pub fn is_constant() -> Pattern {
    Pattern::new(PatternKind::Constant)
}

/// A constant equal to `value` (dtype, shape and bits; TVM's `is_expr(relay.const(...))`).
pub fn is_literal(value: Tensor) -> Pattern {
    Pattern::new(PatternKind::Literal(Arc::new(value)))
}

/// A tuple of these fields (any tuple for `None`).
pub fn is_tuple(fields: Option<Vec<Pattern>>) -> Pattern {
    Pattern::new(PatternKind::Tuple(fields))
}

/// A projection of `tuple` at `index` (any index for `None`).
pub fn is_tuple_get_item(tuple: &Pattern, index: Option<u32>) -> Pattern {
    Pattern::new(PatternKind::Proj(tuple.clone(), index))
}

/// `if (cond) { then } else { otherwise }`.
pub fn is_if(cond: &Pattern, then: &Pattern, otherwise: &Pattern) -> Pattern {
    Pattern::new(PatternKind::If(
        cond.clone(),
        then.clone(),
        otherwise.clone(),
    ))
}

/// A block binding one variable: `let var = value; body`.
pub fn is_let(var: &Pattern, value: &Pattern, body: &Pattern) -> Pattern {
    Pattern::new(PatternKind::Let(var.clone(), value.clone(), body.clone()))
}

/// A closure with these parameters (any for `None`) and body.
pub fn is_function(params: Option<Vec<Pattern>>, body: &Pattern) -> Pattern {
    Pattern::new(PatternKind::Function(params, body.clone()))
}

/// `child` dominated by one node matching `parent`, every node between them matching `path`
/// (TVM's `dominates`).
pub fn dominates(parent: &Pattern, path: &Pattern, child: &Pattern) -> Pattern {
    Pattern::new(PatternKind::Dominates {
        parent: parent.clone(),
        path: path.clone(),
        child: child.clone(),
    })
}
