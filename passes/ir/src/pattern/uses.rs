//! What a rule knows of users: how many users each node of the body being built had in the
//! input, for guards (`cx.uses(e)`) and for `exclusive` rules, whose match must not replace a
//! value something outside it still uses.

use std::cell::OnceCell;

use super::Match;
use crate::body::{Body, ExprId, Idx, Node};
use crate::rewrite::OldId;

/// The entry of [`Uses::input_of`] for a node with no input counterpart.
const NONE: u32 = u32::MAX;

/// Per round of a rule set: which input node each node of the body being built stands for,
/// and (computed when first asked) the input's use counts.
pub(super) struct Uses {
    root: ExprId,
    counts: OnceCell<Vec<u32>>,
    /// For each node of the body being built, the input node whose users it has: the node it
    /// was rebuilt from, or that a replacement replaced.
    input_of: Vec<u32>,
}

impl Uses {
    /// For a round rewriting a body whose result is `root`.
    pub(super) fn new(root: ExprId) -> Self {
        Uses {
            root,
            counts: OnceCell::new(),
            input_of: Vec::new(),
        }
    }

    /// Node `new` of the body being built takes the users of input node `old`.
    #[inline]
    pub(super) fn record(&mut self, new: ExprId, old: OldId) {
        let i = new.index();
        if self.input_of.len() <= i {
            self.input_of.resize(i + 1, NONE);
        }
        self.input_of[i] = old.index() as u32;
    }

    /// The view a guard reads, `input` being the body the round rewrites.
    pub(super) fn view<'a>(&'a self, input: &'a Body) -> UseView<'a> {
        UseView { uses: self, input }
    }
}

/// [`Uses`] with the input body at hand.
#[derive(Clone, Copy)]
pub(super) struct UseView<'a> {
    uses: &'a Uses,
    input: &'a Body,
}

impl UseView<'_> {
    /// How many users node `e` of the body being built had in the input (a user using it twice
    /// counts twice); `None` for a node a replacement built inside itself.
    pub(super) fn of(self, e: ExprId) -> Option<u32> {
        let &old = self.uses.input_of.get(e.index())?;
        if old == NONE {
            return None;
        }
        let counts = self
            .uses
            .counts
            .get_or_init(|| self.input.use_counts(self.uses.root));
        Some(counts[old as usize])
    }

    /// Whether every node inside `m` (its region, the root and constants aside) has all its
    /// users inside `m`: replacing the root then leaves none of them computed for someone
    /// else. `m` must record its region.
    pub(super) fn exclusive(self, b: &Body, m: &Match) -> bool {
        let inner: Vec<ExprId> = m
            .region
            .iter()
            .copied()
            .filter(|&e| e != m.root && !matches!(b.node(e), Node::Constant(_)))
            .collect();
        inner.iter().all(|&e| {
            let inside: usize = m
                .region
                .iter()
                .map(|&user| {
                    let mut n = 0;
                    b.for_each_operand(user, |o| n += usize::from(o == e));
                    n
                })
                .sum();
            self.of(e).is_some_and(|total| total as usize == inside)
        })
    }
}
