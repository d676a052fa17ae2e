//! Rules (a pattern and its replacement) and rule sets applied to a fixpoint: the rule and the
//! set here, what a guard sees in [`cx`], the compiled and indexed set in [`index`], the engine
//! that applies it in [`apply`].

mod apply;
mod cx;
mod index;

use std::borrow::Cow;
use std::sync::{Arc, Mutex, OnceLock};

use crate::body::{ArenaFunction, ExprId};
use crate::infer::{BodyTypes, LocalTyper};
use crate::pattern::matcher::Buffers;
use crate::pattern::uses::Uses;
use crate::pattern::{Match, Pattern, PatternError, Skip};

pub use cx::RuleCx;
pub use index::Rules;

use apply::{Apply, Known};
use index::Candidates;

/// A guard: whether a match may be rewritten (a dtype or shape condition, a value).
pub type Guard = Arc<dyn Fn(&mut RuleCx<'_>, &Match) -> bool + Send + Sync>;

/// A computed replacement: the new node, or `None` to leave the match as it is.
pub(crate) type Compute = Arc<dyn Fn(&mut RuleCx<'_>, &Match) -> Option<ExprId> + Send + Sync>;

/// How many rounds [`RuleSet::apply`] runs at most before it calls a rule set divergent
/// (TVM's `rewrite` stops at 100 too).
pub const MAX_ROUNDS: usize = 100;

/// How many matches of one rule at one node a guard may refuse before the rule is given up
/// there.
pub(crate) const MAX_MATCHES: usize = 16;

/// How many rules may fire in a row at one node within a round.
pub(crate) const MAX_PER_NODE: usize = 64;

/// A rewrite rule: a pattern, a replacement (a [`Template`](crate::pattern::Template) or Rust code) and an optional
/// guard.
///
/// ```
/// use irpass_ir::pattern::{Rule, RuleSet};
/// use irpass_ir::Module;
///
/// // x + x is x * 2, for floats.
/// let double = Rule::template("double", "add(?x, ?x)", "multiply(?x, 2f)")
///     .when(|cx, m| cx.dtype(m["x"]) == Some(irpass_ir::DType::Float32));
/// let set = RuleSet::new("double", vec![double]);
/// let m = Module::parse("def @main(%a: float32, %i: int32) { (add(%a, %a), add(%i, %i)) }").unwrap();
/// let f = m.get("main").unwrap();
/// let out = set.apply(&f.code, None).unwrap().unwrap();
/// let text = Module::from_functions([("main", f.with_code(Some(out)))]).to_string();
/// assert!(text.contains("multiply(%a, 2f)") && text.contains("add(%i, %i)"), "{text}");
/// ```
#[derive(Clone)]
pub struct Rule {
    pub(crate) name: Cow<'static, str>,
    pub(crate) description: Cow<'static, str>,
    pub(crate) pattern: Source,
    pub(crate) action: Action,
    pub(crate) guard: Option<Guard>,
    pub(crate) once: bool,
    pub(crate) exclusive: bool,
}

#[derive(Clone)]
pub(crate) enum Source {
    Text(Cow<'static, str>),
    Built(Pattern),
}

#[derive(Clone)]
pub(crate) enum Action {
    Template(Cow<'static, str>),
    Compute(Compute),
}

impl Rule {
    /// A rule whose replacement is a template over the pattern's holes.
    pub fn template(
        name: impl Into<Cow<'static, str>>,
        pattern: impl Into<Cow<'static, str>>,
        replacement: impl Into<Cow<'static, str>>,
    ) -> Rule {
        Rule {
            name: name.into(),
            description: Cow::Borrowed(""),
            pattern: Source::Text(pattern.into()),
            action: Action::Template(replacement.into()),
            guard: None,
            once: false,
            exclusive: false,
        }
    }

    /// A rule whose replacement Rust computes from the match (`None`: no rewrite).
    pub fn compute(
        name: impl Into<Cow<'static, str>>,
        pattern: impl Into<Cow<'static, str>>,
        f: impl Fn(&mut RuleCx<'_>, &Match) -> Option<ExprId> + Send + Sync + 'static,
    ) -> Rule {
        Rule {
            name: name.into(),
            description: Cow::Borrowed(""),
            pattern: Source::Text(pattern.into()),
            action: Action::Compute(Arc::new(f)),
            guard: None,
            once: false,
            exclusive: false,
        }
    }

    /// A rule with a pattern built in Rust ([`Pattern`]'s builders) and a computed
    /// replacement.
    pub fn with_pattern(
        name: impl Into<Cow<'static, str>>,
        pattern: Pattern,
        f: impl Fn(&mut RuleCx<'_>, &Match) -> Option<ExprId> + Send + Sync + 'static,
    ) -> Rule {
        Rule {
            name: name.into(),
            description: Cow::Borrowed(""),
            pattern: Source::Built(pattern),
            action: Action::Compute(Arc::new(f)),
            guard: None,
            once: false,
            exclusive: false,
        }
    }

    /// The rule, rewriting only the matches `guard` accepts.
    pub fn when(
        mut self,
        guard: impl Fn(&mut RuleCx<'_>, &Match) -> bool + Send + Sync + 'static,
    ) -> Rule {
        self.guard = Some(Arc::new(guard));
        self
    }

    /// The rule, applied in the first round only and never to its own result (TVM's
    /// `rewrite_once`): for rules whose replacement matches their pattern again.
    pub fn once(mut self) -> Rule {
        self.once = true;
        self
    }

    /// The rule, rewriting only matches whose inner values have no users outside the match
    /// (as TVM's partitioning requires, MLIR's `hasOneUse` and onnxscript's rewriter check):
    /// for a fusion, which would otherwise compute a shared intermediate twice. Constants
    /// matched inside are exempt (sharing one costs nothing). Users are those the input had
    /// (a replacement has those of the node it replaced); a node a replacement built inside
    /// itself has none known, so a match over one is left as it is in that round (a later
    /// round, when the set runs one, sees it as input).
    pub fn exclusive(mut self) -> Rule {
        self.exclusive = true;
        self
    }

    /// The rule, with a description (what it rewrites and why it is sound).
    pub fn describe(mut self, text: impl Into<Cow<'static, str>>) -> Rule {
        self.description = text.into();
        self
    }

    /// The rule's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The rule's description (empty when none was given).
    pub fn description(&self) -> &str {
        &self.description
    }
}

/// A named set of rules, compiled when first used (so it can be a `static`), applied to a
/// fixpoint by [`RuleSet::apply`].
pub struct RuleSet {
    name: Cow<'static, str>,
    source: RulesSource,
    compiled: OnceLock<Result<Rules, PatternError>>,
}

enum RulesSource {
    Fn(fn() -> Vec<Rule>),
    Given(Mutex<Vec<Rule>>),
}

impl RuleSet {
    /// A rule set made by `make` when first used: `static SET: RuleSet = RuleSet::lazy(...)`.
    pub const fn lazy(name: &'static str, make: fn() -> Vec<Rule>) -> RuleSet {
        RuleSet {
            name: Cow::Borrowed(name),
            source: RulesSource::Fn(make),
            compiled: OnceLock::new(),
        }
    }

    /// A rule set of these rules.
    pub fn new(name: impl Into<Cow<'static, str>>, rules: Vec<Rule>) -> RuleSet {
        RuleSet {
            name: name.into(),
            source: RulesSource::Given(Mutex::new(rules)),
            compiled: OnceLock::new(),
        }
    }

    /// The set's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The compiled rules (compiled on the first call).
    ///
    /// # Errors
    /// What [`Rules::compile`] finds, prefixed with the set's name.
    pub fn rules(&self) -> Result<&Rules, PatternError> {
        self.compiled
            .get_or_init(|| {
                let rules = match &self.source {
                    RulesSource::Fn(make) => make(),
                    RulesSource::Given(m) => {
                        std::mem::take(&mut *m.lock().unwrap_or_else(|p| p.into_inner()))
                    }
                };
                Rules::compile(&rules).map_err(|e| e.context(&format!("rule set `{}`", self.name)))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Applies the rules to `f` until none fires, at most [`MAX_ROUNDS`] rounds. Each round is
    /// one [`ArenaFunction::rewrite`]: at each node, after its operands, the first rule (in order) whose
    /// pattern matches and whose guard accepts replaces it, and the rules are tried again at
    /// the replacement. `types` are `f`'s (for type constraints and guards; else types are
    /// inferred locally from the annotations). `None` when no rule fired.
    ///
    /// # Errors
    /// A rule set that does not compile; a replacement an operator refuses; rules that still
    /// fire after [`MAX_ROUNDS`] rounds (named, with how often they fired in the last round).
    pub fn apply(
        &self,
        f: &ArenaFunction,
        types: Option<&BodyTypes>,
    ) -> Result<Option<ArenaFunction>, PatternError> {
        self.apply_bounded(f, types, MAX_ROUNDS)
    }

    /// Whether some node of `f` is one a rule of the set can start at (a call of an operator
    /// some rule's root calls, or a node of a kind some rule's root is): when not,
    /// [`RuleSet::apply`] changes nothing, and a pass can skip what it needs only for it (the
    /// function's types). One table lookup a node.
    ///
    /// # Errors
    /// A rule set that does not compile.
    pub fn could_fire(&self, f: &ArenaFunction) -> Result<bool, PatternError> {
        let mut candidates = Candidates::new(self.rules()?);
        Ok(f.body.ids().any(|e| !candidates.of(&f.body, e).is_empty()))
    }

    /// [`RuleSet::apply`] with at most `max_rounds` rounds.
    ///
    /// # Errors
    /// As [`RuleSet::apply`].
    pub fn apply_bounded(
        &self,
        f: &ArenaFunction,
        types: Option<&BodyTypes>,
        max_rounds: usize,
    ) -> Result<Option<ArenaFunction>, PatternError> {
        // A body where no rule can match any node is left as it is, unwalked (most functions,
        // for a rule set about a few operators).
        if !self.could_fire(f)? {
            return Ok(None);
        }
        self.rounds(f, types, max_rounds)
    }

    /// [`RuleSet::apply`] with `f`'s types from `types`, called only when some node could
    /// start a rule ([`RuleSet::could_fire`]): a pass computes them for the functions the set
    /// has work in, not for every function.
    ///
    /// # Errors
    /// As [`RuleSet::apply`], and `types`'s.
    pub fn apply_with_types<E: From<PatternError>>(
        &self,
        f: &ArenaFunction,
        types: impl FnOnce() -> Result<Arc<BodyTypes>, E>,
    ) -> Result<Option<ArenaFunction>, E> {
        if !self.could_fire(f)? {
            return Ok(None);
        }
        let types = types()?;
        Ok(self.rounds(f, Some(&types), MAX_ROUNDS)?)
    }

    /// The rounds of [`RuleSet::apply_bounded`], once some node could start a rule.
    fn rounds(
        &self,
        f: &ArenaFunction,
        types: Option<&BodyTypes>,
        max_rounds: usize,
    ) -> Result<Option<ArenaFunction>, PatternError> {
        let rules = self.rules()?;
        let mut last: Option<ArenaFunction> = None;
        for round in 0..max_rounds {
            let code = last.as_ref().unwrap_or(f);
            let (body, root) = (&code.body, code.root);
            let mut apply = Apply {
                rules,
                // Later rounds (and a call without types) type the body being built locally,
                // on demand: from annotations, operands and the values let-bound variables get.
                node_types: if round == 0 { types } else { None },
                typer: types.map_or_else(LocalTyper::new, |t| LocalTyper::for_rewrite_of(body, t)),
                first_round: round == 0,
                fired: vec![0; rules.rules.len()],
                error: None,
                known: Known::default(),
                buffers: Buffers::default(),
                skip: Skip::default(),
                new_candidates: false,
                candidates: Candidates::new(rules),
                uses: Uses::new(root),
            };
            let out = code.rewrite(&mut apply);
            if let Some(e) = apply.error {
                return Err(e);
            }
            match out {
                // Every node was matched with its operands final: only a node a replacement
                // built inside itself (not its root) can match in another round.
                Some(next) if !apply.new_candidates => return Ok(Some(next)),
                Some(next) => last = Some(next),
                None => return Ok(last),
            }
            if round + 1 == max_rounds {
                let fired: Vec<String> = apply
                    .fired
                    .iter()
                    .enumerate()
                    .filter(|&(_, &n)| n > 0)
                    .map(|(i, n)| format!("`{}` ({n} times)", rules.rules[i].name))
                    .collect();
                return Err(PatternError::new(format!(
                    "rule set `{}` does not converge: after {max_rounds} rounds these rules still fire: {}",
                    self.name,
                    fired.join(", ")
                )));
            }
        }
        Ok(last)
    }
}
