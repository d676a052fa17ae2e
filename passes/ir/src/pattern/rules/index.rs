//! A rule set compiled and indexed by the operator at each rule's root: [`Rules`], and the
//! lookup of the rules that may match a node.

use super::{Action, Compute, Guard, Rule, Source};
use std::borrow::Cow;

use rustc_hash::FxHashMap;

use crate::body::{Body, ExprId, Idx, Node};
use crate::pattern::compile::RootKey;
use crate::pattern::{CompiledPattern, Pattern, PatternError, Template};

pub(crate) struct CompiledRule {
    pub(crate) name: Cow<'static, str>,
    pub(crate) pattern: CompiledPattern,
    pub(crate) replacement: Replacement,
    pub(crate) guard: Option<Guard>,
    pub(crate) once: bool,
    pub(crate) exclusive: bool,
}

pub(crate) enum Replacement {
    Template(Template),
    Compute(Compute),
}

/// A checked rule set: every pattern and template parsed and compiled, the rules indexed by
/// the operator at their root.
pub struct Rules {
    pub(crate) rules: Vec<CompiledRule>,
    /// For each operator some rule's root calls (by its definition's address): the rules to
    /// try at its calls, in order (those rooted at it and those rooted anywhere).
    by_root: FxHashMap<RootKey, Vec<u32>>,
    /// The rules whose root is not one operator's call.
    generic: Vec<u32>,
    /// The rules to try at each kind of node other than an operator call
    /// ([`RootKey::Kind`]).
    by_kind: Vec<Vec<u32>>,
}

impl Rules {
    /// Compiles `rules`.
    ///
    /// # Errors
    /// Every rule's problems (syntax, unknown operators with the closest names, holes the
    /// pattern does not bind), each prefixed with its rule's name.
    pub fn compile(rules: &[Rule]) -> Result<Rules, PatternError> {
        let mut out = Vec::with_capacity(rules.len());
        let mut errors: Vec<PatternError> = Vec::new();
        for r in rules {
            match compile_rule(r) {
                Ok(c) => out.push(c),
                Err(e) => errors.push(e.context(&format!("rule `{}`", r.name))),
            }
        }
        if let Some(first) = errors.first() {
            if errors.len() == 1 {
                return Err(first.clone());
            }
            let all: Vec<String> = errors.iter().map(ToString::to_string).collect();
            return Err(PatternError::new(all.join("\n")));
        }
        let mut by_root: FxHashMap<RootKey, Vec<u32>> = FxHashMap::default();
        let mut generic = Vec::new();
        for (i, r) in out.iter().enumerate() {
            match r.pattern.root_keys() {
                Some(keys) => {
                    for &k in keys {
                        by_root.entry(k).or_default().push(i as u32);
                    }
                }
                None => generic.push(i as u32),
            }
        }
        for list in by_root.values_mut() {
            list.extend(&generic);
            list.sort_unstable();
            list.dedup();
        }
        let by_kind = (0..RootKey::KINDS)
            .map(|k| by_root.get(&RootKey::Kind(k)).unwrap_or(&generic).clone())
            .collect();
        Ok(Rules {
            rules: out,
            by_root,
            generic,
            by_kind,
        })
    }

    /// The number of rules.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The rules that may match node `e`: one table lookup.
    fn candidates(&self, b: &Body, e: ExprId) -> &[u32] {
        self.by_root
            .get(&RootKey::of(b, e))
            .map_or(&self.generic, |v| v)
    }
}

/// [`Rules::candidates`] for the nodes of one body, the rules of each operator call's
/// signature looked up once: most nodes cost an index into a short vector, not a hash.
pub(crate) struct Candidates<'r> {
    rules: &'r Rules,
    /// Per signature of the body, once looked up.
    by_sig: Vec<Option<&'r [u32]>>,
}

impl<'r> Candidates<'r> {
    pub(crate) fn new(rules: &'r Rules) -> Self {
        Candidates {
            rules,
            by_sig: Vec::new(),
        }
    }

    /// The rules that may match node `e` of `b` (always the same body).
    #[inline]
    pub(crate) fn of(&mut self, b: &Body, e: ExprId) -> &'r [u32] {
        let node = b.node(e);
        if let Node::CallOp { sig, .. } = node {
            if let Some(Some(c)) = self.by_sig.get(sig.index()) {
                return c;
            }
            return self.look_up(b, e, sig.index());
        }
        let kind = RootKey::kind(node).unwrap_or(0);
        &self.rules.by_kind[usize::from(kind)]
    }

    /// The rules of operator call `e`, signature `i`, looked up and remembered.
    #[cold]
    fn look_up(&mut self, b: &Body, e: ExprId, i: usize) -> &'r [u32] {
        if self.by_sig.len() <= i {
            // The body gains signatures as it is built: room for twice as many.
            let len = (2 * b.sig_count()).max(i + 1).max(16);
            self.by_sig.resize(len, None);
        }
        let c = self.rules.candidates(b, e);
        self.by_sig[i] = Some(c);
        c
    }
}

pub(crate) fn compile_rule(r: &Rule) -> Result<CompiledRule, PatternError> {
    let pattern = match &r.pattern {
        Source::Text(t) => Pattern::parse(t)?,
        Source::Built(p) => p.clone(),
    };
    let pattern = CompiledPattern::new(&pattern)?;
    let replacement = match &r.action {
        Action::Template(t) => {
            let t = Template::parse(t)?;
            let bound: Vec<&str> = pattern.names().collect();
            t.check(&bound)?;
            Replacement::Template(t)
        }
        Action::Compute(f) => Replacement::Compute(f.clone()),
    };
    Ok(CompiledRule {
        name: r.name.clone(),
        pattern,
        replacement,
        guard: r.guard.clone(),
        once: r.once,
        exclusive: r.exclusive,
    })
}
