//! Rules (a pattern and its replacement) and rule sets applied to a fixpoint.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, OnceLock};

use rustc_hash::FxHashMap;

use super::compile::RootKey;
use super::matcher::Buffers;
use super::uses::{UseView, Uses};
use super::{CompiledPattern, Match, Matcher, Pattern, PatternError, Skip, Template};
use crate::body::{ArenaFunction, Body, BodyBuilder, ExprId, Idx, Node, VarId};
use crate::infer::{BodyTypes, LocalTyper};
use crate::rewrite::{LetAction, OldId, Rewrite, RewriteCx};
use crate::{Attrs, DType, Op, Tensor, TensorType, Type};

/// A guard: whether a match may be rewritten (a dtype or shape condition, a value).
pub type Guard = Arc<dyn Fn(&mut RuleCx<'_>, &Match) -> bool + Send + Sync>;

/// A computed replacement: the new node, or `None` to leave the match as it is.
type Compute = Arc<dyn Fn(&mut RuleCx<'_>, &Match) -> Option<ExprId> + Send + Sync>;

/// How many rounds [`RuleSet::apply`] runs at most before it calls a rule set divergent
/// (TVM's `rewrite` stops at 100 too).
pub const MAX_ROUNDS: usize = 100;

/// How many matches of one rule at one node a guard may refuse before the rule is given up
/// there.
const MAX_MATCHES: usize = 16;

/// How many rules may fire in a row at one node within a round.
const MAX_PER_NODE: usize = 64;

/// A rewrite rule: a pattern, a replacement (a [`Template`] or Rust code) and an optional
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
    name: Cow<'static, str>,
    description: Cow<'static, str>,
    pattern: Source,
    action: Action,
    guard: Option<Guard>,
    once: bool,
    exclusive: bool,
}

#[derive(Clone)]
enum Source {
    Text(Cow<'static, str>),
    Built(Pattern),
}

#[derive(Clone)]
enum Action {
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

/// What a guard or a computed replacement sees: the body being built (the match's ids are
/// its ids), its types, and helpers for what rules ask most.
pub struct RuleCx<'a> {
    /// The body being built: build replacements here.
    pub builder: &'a mut BodyBuilder,
    typer: &'a mut LocalTyper,
    uses: UseView<'a>,
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
        super::template::scalar_attr(self.builder, e)
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

struct CompiledRule {
    name: Cow<'static, str>,
    pattern: CompiledPattern,
    replacement: Replacement,
    guard: Option<Guard>,
    once: bool,
    exclusive: bool,
}

enum Replacement {
    Template(Template),
    Compute(Compute),
}

/// A checked rule set: every pattern and template parsed and compiled, the rules indexed by
/// the operator at their root.
pub struct Rules {
    rules: Vec<CompiledRule>,
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
struct Candidates<'r> {
    rules: &'r Rules,
    /// Per signature of the body, once looked up.
    by_sig: Vec<Option<&'r [u32]>>,
}

impl<'r> Candidates<'r> {
    fn new(rules: &'r Rules) -> Self {
        Candidates {
            rules,
            by_sig: Vec::new(),
        }
    }

    /// The rules that may match node `e` of `b` (always the same body).
    #[inline]
    fn of(&mut self, b: &Body, e: ExprId) -> &'r [u32] {
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

fn compile_rule(r: &Rule) -> Result<CompiledRule, PatternError> {
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

struct Apply<'r> {
    rules: &'r Rules,
    /// The input's types (first round only: later rounds rewrite a body they do not
    /// describe).
    node_types: Option<&'r BodyTypes>,
    typer: LocalTyper,
    first_round: bool,
    fired: Vec<u32>,
    error: Option<PatternError>,
    known: Known,
    buffers: Buffers,
    skip: Skip,
    /// Whether a replacement built, below its root, a node some rule may match: such a node
    /// is not visited in this round, so another round is needed.
    new_candidates: bool,
    /// The rules to try at each node of the body being built.
    candidates: Candidates<'r>,
    /// The input's users of each node of the body being built.
    uses: Uses,
}

/// The operator calls of the body being built, by operator, attributes and operands: a
/// replacement that builds a call the body already has becomes that call, so a rule never
/// duplicates a computation (a dominator region replaced by its convolution is the
/// convolution the rest of the graph already uses).
#[derive(Default)]
struct Known {
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

    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: OldId, new: ExprId) -> Option<ExprId> {
        self.seed(old, new);
        self.uses.record(new, old);
        let mut cur = new;
        let mut fired_here = 0;
        'again: loop {
            for &i in self.candidates.of(cx.new.body(), cur) {
                let rule = &self.rules.rules[i as usize];
                if rule.once && !self.first_round {
                    continue;
                }
                // The first match the guard accepts (operands of `add` either way round, each
                // side of an alternative), at most `MAX_MATCHES` tried.
                let built_from = cx.new.body().len();
                self.skip.reset();
                let mut accepted = None;
                for _ in 0..MAX_MATCHES {
                    let buf = std::mem::take(&mut self.buffers);
                    let mut matcher =
                        Matcher::with_buffers(cx.new.body(), &mut self.typer, buf, rule.exclusive);
                    let found = matcher.find_next(&rule.pattern, cur, &mut self.skip);
                    self.buffers = matcher.into_buffers();
                    let Some(m) = found else {
                        break;
                    };
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
                        accepted = Some(m);
                        break;
                    }
                }
                let Some(m) = accepted else {
                    continue;
                };
                let mut rcx = RuleCx {
                    builder: &mut cx.new,
                    typer: &mut self.typer,
                    uses: self.uses.view(cx.old.body()),
                };
                let out = match &rule.replacement {
                    Replacement::Template(t) => match t.build(&mut rcx, &m) {
                        Ok(e) => e,
                        Err(e) => {
                            self.error.get_or_insert_with(|| {
                                PatternError::new(format!(
                                    "rule `{}` built a replacement its operator refuses: {e}",
                                    rule.name
                                ))
                            });
                            None
                        }
                    },
                    Replacement::Compute(f) => f(&mut rcx, &m),
                };
                let Some(out) = out
                    .map(|o| self.known.existing(cx.new.body(), o))
                    .filter(|&o| o != cur)
                else {
                    continue;
                };
                self.fired[i as usize] += 1;
                if !self.new_candidates {
                    let b = cx.new.body();
                    self.new_candidates = (built_from..b.len())
                        .map(ExprId::new)
                        .any(|e| e != out && !self.candidates.of(b, e).is_empty());
                }
                cur = out;
                fired_here += 1;
                if fired_here >= MAX_PER_NODE {
                    self.error.get_or_insert_with(|| {
                        PatternError::new(format!(
                            "rule `{}` fired {MAX_PER_NODE} times in a row at one node without settling: its replacement matches a rule again",
                            rule.name
                        ))
                    });
                    break 'again;
                }
                if rule.once {
                    break 'again;
                }
                continue 'again;
            }
            break;
        }
        if cur != new {
            // The replacement takes the node's users.
            self.uses.record(cur, old);
        }
        (cur != new).then_some(cur)
    }
}
