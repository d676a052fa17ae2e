//! The engine that applies a compiled rule set in one walk of a body: at each node, after
//! its operands, the rules that may match are tried in order; a guard-accepted match is
//! replaced, and the rules are tried again at the replacement.

use super::cx::RuleCx;
use super::index::{Candidates, Replacement, Rules};
use super::{MAX_MATCHES, MAX_PER_NODE};

use rustc_hash::FxHashMap;

use crate::body::{Body, ExprId, Idx, Node, VarId};
use crate::infer::{BodyTypes, LocalTyper};
use crate::pattern::matcher::Buffers;
use crate::pattern::uses::Uses;
use crate::pattern::{Match, Matcher, PatternError, Skip};
use crate::rewrite::{LetAction, OldId, Rewrite, RewriteCx};

pub(crate) struct Apply<'r> {
    pub(crate) rules: &'r Rules,
    /// The input's types (first round only: later rounds rewrite a body they do not
    /// describe).
    pub(crate) node_types: Option<&'r BodyTypes>,
    pub(crate) typer: LocalTyper,
    pub(crate) first_round: bool,
    pub(crate) fired: Vec<u32>,
    pub(crate) error: Option<PatternError>,
    pub(crate) known: Known,
    pub(crate) buffers: Buffers,
    pub(crate) skip: Skip,
    /// Whether a replacement built, below its root, a node some rule may match: such a node
    /// is not visited in this round, so another round is needed.
    pub(crate) new_candidates: bool,
    /// The rules to try at each node of the body being built.
    pub(crate) candidates: Candidates<'r>,
    /// The input's users of each node of the body being built.
    pub(crate) uses: Uses,
}

/// The operator calls of the body being built, by operator, attributes and operands: a
/// replacement that builds a call the body already has becomes that call, so a rule never
/// duplicates a computation (a dominator region replaced by its convolution is the
/// convolution the rest of the graph already uses).
#[derive(Default)]
pub(crate) struct Known {
    calls: FxHashMap<u64, ExprId>,
    /// The nodes indexed so far (the body only grows).
    upto: usize,
}

impl Known {
    /// `e`, or an earlier call identical to it.
    fn existing(&mut self, b: &Body, e: ExprId) -> ExprId {
        let Node::CallOp { .. } = b.node(e) else {
            return e;
        };
        if self.calls.capacity() == 0 {
            // Every call before `e` is indexed now: room for them at once.
            self.calls.reserve(e.index());
        }
        while self.upto < e.index() {
            let id = ExprId::new(self.upto);
            self.upto += 1;
            if let Some(h) = call_hash(b, id) {
                self.calls.entry(h).or_insert(id);
            }
        }
        match call_hash(b, e).and_then(|h| self.calls.get(&h)) {
            Some(&prev) if b.node(prev) == b.node(e) || same_call(b, prev, e) => prev,
            _ => e,
        }
    }
}

/// A hash of an operator call's signature and operands.
fn call_hash(b: &Body, e: ExprId) -> Option<u64> {
    use std::hash::{Hash, Hasher};
    let Node::CallOp { sig, args } = b.node(e) else {
        return None;
    };
    let mut h = rustc_hash::FxHasher::default();
    sig.index().hash(&mut h);
    for a in b.list(*args) {
        a.index().hash(&mut h);
    }
    Some(h.finish())
}

/// Whether two operator calls have the same signature and operands.
fn same_call(b: &Body, x: ExprId, y: ExprId) -> bool {
    match (b.node(x), b.node(y)) {
        (Node::CallOp { sig: s1, args: a1 }, Node::CallOp { sig: s2, args: a2 }) => {
            s1 == s2 && b.list(*a1) == b.list(*a2)
        }
        _ => false,
    }
}

impl Apply<'_> {
    /// Gives rebuilt node `new` the type its old node `old` had (when complete).
    fn seed(&mut self, old: OldId, new: ExprId) {
        if let Some(types) = self.node_types {
            self.typer.seed_from(types, old, new);
        }
    }
}

impl Rewrite for Apply<'_> {
    fn visit_let(&mut self, _cx: &mut RewriteCx<'_>, var: VarId, value: ExprId) -> LetAction {
        // A use of `var` has the type of `value` (what the typer reads for a variable without
        // an annotation or a known type).
        self.typer.set_value(var, value);
        LetAction::Keep
    }

    /// At node `new` (rebuilt from `old`): the rules that may match are tried in order; the
    /// first whose match a guard accepts is replaced, and the rules are tried again at the
    /// replacement, until none fires (or a `once` rule has).
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: OldId, new: ExprId) -> Option<ExprId> {
        self.seed(old, new);
        self.uses.record(new, old);
        let mut cur = new;
        let mut fired_here = 0;
        while let Some((i, out)) = self.fire_first(cx, cur) {
            let rule = &self.rules.rules[i];
            cur = out;
            fired_here += 1;
            if fired_here >= MAX_PER_NODE {
                self.error.get_or_insert_with(|| {
                    PatternError::new(format!(
                        "rule `{}` fired {MAX_PER_NODE} times in a row at one node without settling: its replacement matches a rule again",
                        rule.name
                    ))
                });
                break;
            }
            if rule.once {
                break;
            }
        }
        if cur != new {
            // The replacement takes the node's users.
            self.uses.record(cur, old);
        }
        (cur != new).then_some(cur)
    }
}

impl Apply<'_> {
    /// The first rule that rewrites node `cur`, and what it built: a match its guard accepts,
    /// a replacement other than `cur` (hash-consed with the calls the body already has).
    fn fire_first(&mut self, cx: &mut RewriteCx<'_>, cur: ExprId) -> Option<(usize, ExprId)> {
        for &i in self.candidates.of(cx.new.body(), cur) {
            let i = i as usize;
            let rule = &self.rules.rules[i];
            if rule.once && !self.first_round {
                continue;
            }
            let built_from = cx.new.body().len();
            let Some(m) = self.accepted_match(cx, i, cur) else {
                continue;
            };
            let Some(out) = self
                .build(cx, i, &m)
                .map(|o| self.known.existing(cx.new.body(), o))
                .filter(|&o| o != cur)
            else {
                continue;
            };
            self.fired[i] += 1;
            self.note_new_candidates(cx.new.body(), built_from, out);
            return Some((i, out));
        }
        None
    }

    /// The first match of rule `i` at `cur` that its exclusivity and guard accept (operands
    /// of `add` either way round, each side of an alternative), at most [`MAX_MATCHES`] tried.
    fn accepted_match(&mut self, cx: &mut RewriteCx<'_>, i: usize, cur: ExprId) -> Option<Match> {
        let rule = &self.rules.rules[i];
        self.skip.reset();
        for _ in 0..MAX_MATCHES {
            let buf = std::mem::take(&mut self.buffers);
            let mut matcher =
                Matcher::with_buffers(cx.new.body(), &mut self.typer, buf, rule.exclusive);
            let found = matcher.find_next(&rule.pattern, cur, &mut self.skip);
            self.buffers = matcher.into_buffers();
            let m = found?;
            let uses = self.uses.view(cx.old.body());
            if rule.exclusive && !uses.exclusive(cx.new.body(), &m) {
                continue;
            }
            let mut rcx = RuleCx {
                builder: &mut cx.new,
                typer: &mut self.typer,
                uses,
            };
            if rule.guard.as_ref().is_none_or(|g| g(&mut rcx, &m)) {
                return Some(m);
            }
        }
        None
    }

    /// Rule `i`'s replacement of match `m`, built in the new body (`None`: the rule leaves
    /// the match; a template an operator refuses is recorded as the set's error).
    fn build(&mut self, cx: &mut RewriteCx<'_>, i: usize, m: &Match) -> Option<ExprId> {
        let rule = &self.rules.rules[i];
        let mut rcx = RuleCx {
            builder: &mut cx.new,
            typer: &mut self.typer,
            uses: self.uses.view(cx.old.body()),
        };
        match &rule.replacement {
            Replacement::Template(t) => t.build(&mut rcx, m).unwrap_or_else(|e| {
                self.error.get_or_insert_with(|| {
                    PatternError::new(format!(
                        "rule `{}` built a replacement its operator refuses: {e}",
                        rule.name
                    ))
                });
                None
            }),
            Replacement::Compute(f) => f(&mut rcx, m),
        }
    }

    /// Whether a replacement rooted at `out` built, below its root (from node `built_from`
    /// on), a node some rule may match: such a node is not visited in this round, so another
    /// round is needed.
    fn note_new_candidates(&mut self, b: &Body, built_from: usize, out: ExprId) {
        if !self.new_candidates {
            self.new_candidates = (built_from..b.len())
                .map(ExprId::new)
                .any(|e| e != out && !self.candidates.of(b, e).is_empty());
        }
    }
}
