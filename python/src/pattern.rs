//! `irpass.pattern`: TVM's dataflow patterns, rewrite rules and partitioning, matched by Rust.
//!
//! Python is called once per match (a rule's replacement or guard, a partition's check) with a
//! [`PyMatch`]: what each hole captured, read in Rust before the call.

use std::cell::RefCell;
use std::sync::Arc;

use irpass::{FunctionPass, Pass, PassContext, PassInfo, PassKind};
use irpass_ir::body::{Body, ExprId, Idx, Node};
use irpass_ir::pattern::{self, Match, PartitionOptions, Pattern, Rule, RuleCx, RuleSet, Template};
use irpass_ir::{Attrs, DType, Function, Module, Tensor};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::module::PyFunction;
use crate::pass::PyPass;
use crate::{value, view};

thread_local! {
    /// The first exception a Python callback raised during the current rule application or
    /// partition on this thread (a callback cannot return it through Rust's matcher).
    static RAISED: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

fn stash(e: PyErr) {
    RAISED.with(|r| {
        r.borrow_mut().get_or_insert(e);
    });
}

fn take_raised() -> Option<PyErr> {
    RAISED.with(|r| r.borrow_mut().take())
}

/// What a match's holes captured: `(name, node id)`.
type Captures = Vec<(String, usize)>;

fn pattern_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A dataflow pattern. Build one with the functions of `irpass.pattern` (`is_op("add")(x, y)`,
/// `wildcard()`, `p | q`, ...) or from text (`Pattern.parse("nn.relu(add(?x, const))")`).
#[pyclass(frozen, from_py_object, module = "irpass.pattern", name = "Pattern")]
#[derive(Clone)]
pub struct PyPattern {
    p: Pattern,
}

fn wrap(p: Pattern) -> PyPattern {
    PyPattern { p }
}

#[pymethods]
impl PyPattern {
    /// The pattern that text describes (the rule language: `add(?x, const)`, `_`, `a | b`).
    #[staticmethod]
    fn parse(text: &str) -> PyResult<PyPattern> {
        Pattern::parse(text).map(wrap).map_err(pattern_error)
    }

    /// A call of this (operator) pattern on argument patterns: `is_op("add")(x, y)`.
    #[pyo3(signature = (*args))]
    fn __call__(&self, args: Vec<PyPattern>) -> PyPattern {
        wrap(self.p.call(args.into_iter().map(|a| a.p)))
    }

    fn __or__(&self, other: &PyPattern) -> PyPattern {
        wrap(self.p.or(&other.p))
    }

    /// This pattern, or `wrap(this)`: `conv.optional(lambda x: is_op("nn.relu")(x))`.
    fn optional(&self, wrap_fn: &Bound<'_, PyAny>) -> PyResult<PyPattern> {
        let out = wrap_fn.call1((self.clone(),))?;
        let wrapped: PyPattern = out
            .extract()
            .map_err(|_| PyTypeError::new_err("optional's function must return a Pattern"))?;
        Ok(wrap(self.p.optional(|_| wrapped.p)))
    }

    /// This pattern, for calls with these attributes (`{"axis": 1}`).
    fn has_attr(&self, attrs: &Bound<'_, PyDict>) -> PyResult<PyPattern> {
        let mut pairs = Vec::new();
        for (k, v) in attrs.iter() {
            pairs.push((k.extract::<String>()?, view::attr_from_python(&v)?));
        }
        Ok(wrap(self.p.has_attrs(pairs)))
    }

    /// This pattern, for tensors of this dtype.
    fn has_dtype(&self, dtype: &str) -> PyResult<PyPattern> {
        let d = DType::from_name(dtype)
            .ok_or_else(|| PyValueError::new_err(format!("no dtype named {dtype:?}")))?;
        Ok(wrap(self.p.has_dtype(d)))
    }

    /// This pattern, for tensors of this shape.
    fn has_shape(&self, shape: Vec<i64>) -> PyPattern {
        wrap(self.p.has_shape(&shape))
    }

    /// This pattern, its match captured as hole `name`.
    fn named(&self, name: &str) -> PyPattern {
        wrap(self.p.named(name))
    }

    /// Field `index` of a tuple this pattern matches.
    fn proj(&self, index: u32) -> PyPattern {
        wrap(self.p.proj(index))
    }

    /// The hole names.
    fn holes(&self) -> Vec<String> {
        self.p.holes()
    }

    /// Whether the pattern matches node `n` of `func`.
    #[pyo3(name = "match")]
    fn matches(&self, func: &PyFunction, n: i64) -> PyResult<bool> {
        let id = view::node_id(&func.function, n)?;
        Ok(self.p.matches(&func.function.code, id))
    }

    /// What the holes captured when the pattern matches node `n` of `func` (`{name: id}`),
    /// else `None`.
    fn find(&self, func: &PyFunction, n: i64) -> PyResult<Option<Captures>> {
        let id = view::node_id(&func.function, n)?;
        Ok(self.p.find(&func.function.code, id).map(|m| {
            m.captures()
                .map(|(k, v)| (k.to_string(), v.index()))
                .collect()
        }))
    }

    /// Every node of `func` the pattern matches, with its captures: `[(id, {name: id})]`, in
    /// operand-first order.
    fn find_all(&self, func: &PyFunction) -> PyResult<Vec<(usize, Captures)>> {
        let compiled = pattern::CompiledPattern::new(&self.p).map_err(pattern_error)?;
        let code = &func.function.code;
        let mut matcher = pattern::Matcher::new(&code.body, None);
        Ok(irpass_ir::body::post_order(&code.body, code.root)
            .into_iter()
            .filter_map(|e| {
                matcher.find(&compiled, e).map(|m| {
                    let caps = m
                        .captures()
                        .map(|(k, v)| (k.to_string(), v.index()))
                        .collect();
                    (e.index(), caps)
                })
            })
            .collect())
    }

    fn __repr__(&self) -> String {
        format!("<irpass.pattern.Pattern {:?}>", self.p)
    }
}

/// Any expression.
#[pyfunction]
pub fn wildcard() -> PyPattern {
    wrap(pattern::wildcard())
}

/// A call of operator `name` (call it on argument patterns: `is_op("add")(x, y)`).
#[pyfunction]
pub fn is_op(name: &str) -> PyResult<PyPattern> {
    irpass_ir::Op::get(name).map_err(PyValueError::new_err)?;
    Ok(wrap(pattern::is_op(name)))
}

/// A variable (named `name` when given).
#[pyfunction]
#[pyo3(signature = (name = None))]
pub fn is_var(name: Option<&str>) -> PyPattern {
    wrap(pattern::is_var(name))
}

/// A constant.
#[pyfunction]
pub fn is_constant() -> PyPattern {
    wrap(pattern::is_constant())
}

/// A tuple of these fields (any tuple when `None`).
#[pyfunction]
#[pyo3(signature = (fields = None))]
pub fn is_tuple(fields: Option<Vec<PyPattern>>) -> PyPattern {
    wrap(pattern::is_tuple(
        fields.map(|f| f.into_iter().map(|p| p.p).collect()),
    ))
}

/// Field `index` (any field when `None`) of a tuple `tuple` matches.
#[pyfunction]
#[pyo3(signature = (tuple, index = None))]
pub fn is_tuple_get_item(tuple: &PyPattern, index: Option<u32>) -> PyPattern {
    wrap(pattern::is_tuple_get_item(&tuple.p, index))
}

/// `if cond { then } else { otherwise }`.
#[pyfunction]
pub fn is_if(cond: &PyPattern, then: &PyPattern, otherwise: &PyPattern) -> PyPattern {
    wrap(pattern::is_if(&cond.p, &then.p, &otherwise.p))
}

/// TVM's dominator pattern: `child`, reached from `parent` only through `path` nodes.
#[pyfunction]
pub fn dominates(parent: &PyPattern, path: &PyPattern, child: &PyPattern) -> PyPattern {
    wrap(pattern::dominates(&parent.p, &path.p, &child.p))
}

/// What one hole (or the root) of a match is.
#[pyclass(frozen, module = "irpass.pattern", name = "Node")]
#[derive(Clone)]
pub struct PyNode {
    /// The node's id in the body being matched.
    #[pyo3(get)]
    id: usize,
    /// Its kind (`call`, `constant`, `var`, ...).
    #[pyo3(get)]
    kind: &'static str,
    /// The operator, for an operator call.
    #[pyo3(get)]
    op: Option<&'static str>,
    dtype: Option<DType>,
    /// The shape, when known.
    #[pyo3(get)]
    shape: Option<Vec<usize>>,
    constant: Option<Arc<Tensor>>,
    attrs: Option<Attrs>,
}

#[pymethods]
impl PyNode {
    /// The dtype's name, when known.
    #[getter]
    fn dtype(&self) -> Option<&'static str> {
        self.dtype.map(DType::name)
    }

    /// A constant's value as a numpy array (`None` for other nodes).
    #[getter]
    fn value<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.constant
            .as_ref()
            .map(|t| value::tensor_to_python(py, t))
            .transpose()
    }

    /// An operator call's attributes as written.
    #[getter]
    fn attrs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        if let Some(attrs) = &self.attrs {
            for (k, v) in attrs.iter() {
                out.set_item(k, view::attr_to_python(py, v)?)?;
            }
        }
        Ok(out)
    }

    fn __repr__(&self) -> String {
        format!(
            "<irpass.pattern.Node {} {}{}>",
            self.id,
            self.op.unwrap_or(self.kind),
            self.dtype
                .map_or(String::new(), |d| format!(" {}", d.name()))
        )
    }
}

/// A match: `m.root` and `m["x"]` for each hole.
#[pyclass(frozen, module = "irpass.pattern", name = "Match")]
pub struct PyMatch {
    /// The matched node.
    #[pyo3(get)]
    root: PyNode,
    holes: Vec<(String, PyNode)>,
}

#[pymethods]
impl PyMatch {
    fn __getitem__(&self, name: &str) -> PyResult<PyNode> {
        self.holes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, node)| node.clone())
            .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(format!("no hole ?{name}")))
    }

    fn __contains__(&self, name: &str) -> bool {
        self.holes.iter().any(|(n, _)| n == name)
    }

    /// The hole names that captured something.
    fn keys(&self) -> Vec<String> {
        self.holes.iter().map(|(n, _)| n.clone()).collect()
    }
}

fn node_of(body: &Body, e: ExprId, ty: Option<(Option<DType>, Option<Vec<usize>>)>) -> PyNode {
    let (dtype, shape) = ty.unwrap_or((None, None));
    let call = body.op_call(e);
    PyNode {
        id: e.index(),
        kind: view::kind_of(body.node(e)),
        op: call.map(|(op, ..)| op.name()),
        dtype,
        shape,
        constant: match body.node(e) {
            Node::Constant(k) => Some(body.constant(*k).clone()),
            _ => None,
        },
        attrs: call.map(|(_, _, attrs)| attrs.clone()),
    }
}

fn match_in_rule(cx: &mut RuleCx<'_>, m: &Match) -> PyMatch {
    let node = |cx: &mut RuleCx<'_>, e: ExprId| {
        let ty = (cx.dtype(e), cx.shape(e));
        node_of(cx.body(), e, Some(ty))
    };
    let root = node(cx, m.root);
    let holes = m
        .captures()
        .map(|(k, e)| (k.to_string(), node(cx, e)))
        .collect();
    PyMatch { root, holes }
}

fn call_python<T>(f: impl FnOnce(Python<'_>) -> PyResult<T>) -> Option<T> {
    Python::attach(|py| f(py).map_err(stash).ok())
}

/// A rewrite rule (TVM's `DFPatternCallback`, declaratively).
#[pyclass(frozen, from_py_object, module = "irpass.pattern", name = "Rule")]
#[derive(Clone)]
pub struct PyRule {
    rule: Rule,
}

fn pattern_of(p: &Bound<'_, PyAny>) -> PyResult<Pattern> {
    if let Ok(text) = p.extract::<String>() {
        return Pattern::parse(&text).map_err(pattern_error);
    }
    p.extract::<PyPattern>()
        .map(|p| p.p)
        .map_err(|_| PyTypeError::new_err("a rule's pattern is a Pattern or pattern text"))
}

fn template_of(text: &str, holes: &[String]) -> PyResult<Template> {
    let t = Template::parse(text).map_err(pattern_error)?;
    let bound: Vec<&str> = holes.iter().map(String::as_str).collect();
    t.check(&bound).map_err(pattern_error)?;
    Ok(t)
}

#[pymethods]
impl PyRule {
    /// A rule named `name`: where `pattern` matches, the match becomes `replacement` — template
    /// text over the pattern's holes (`"multiply(?x, 2f)"`), or a function of the `Match`
    /// returning such text or `None` (no rewrite). `when(m)` refuses matches; `once` applies
    /// the rule in the first round only (TVM's `rewrite_once`); `exclusive` leaves a match
    /// whose inner values something outside it uses (for a fusion).
    #[new]
    #[pyo3(signature = (name, pattern, replacement, when = None, once = false, description = None, exclusive = false))]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments
    fn new(
        name: String,
        pattern: &Bound<'_, PyAny>,
        replacement: &Bound<'_, PyAny>,
        when: Option<Py<PyAny>>,
        once: bool,
        description: Option<String>,
        exclusive: bool,
    ) -> PyResult<PyRule> {
        let p = pattern_of(pattern)?;
        let holes = p.holes();
        let mut rule = if let Ok(text) = replacement.extract::<String>() {
            let t = template_of(&text, &holes)?;
            Rule::with_pattern(name, p, move |cx, m| match t.build(cx, m) {
                Ok(out) => out,
                Err(e) => {
                    Python::attach(|_| stash(PyValueError::new_err(e)));
                    None
                }
            })
        } else if replacement.is_callable() {
            let f = replacement.clone().unbind();
            let cache: Arc<std::sync::Mutex<rustc_hash::FxHashMap<String, Arc<Template>>>> =
                Arc::default();
            Rule::with_pattern(name, p, move |cx, m| {
                let snapshot = match_in_rule(cx, m);
                let text =
                    call_python(|py| f.call1(py, (snapshot,))?.extract::<Option<String>>(py))??;
                let t = {
                    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
                    match cache.get(&text) {
                        Some(t) => t.clone(),
                        None => {
                            let t =
                                Python::attach(|_| template_of(&text, &holes).map_err(stash).ok())?;
                            let t = Arc::new(t);
                            cache.insert(text, t.clone());
                            t
                        }
                    }
                };
                match t.build(cx, m) {
                    Ok(out) => out,
                    Err(e) => {
                        Python::attach(|_| stash(PyValueError::new_err(e)));
                        None
                    }
                }
            })
        } else {
            return Err(PyTypeError::new_err(
                "a rule's replacement is template text or a function of the match",
            ));
        };
        if let Some(when) = when {
            rule = rule.when(move |cx, m| {
                let snapshot = match_in_rule(cx, m);
                call_python(|py| when.call1(py, (snapshot,))?.is_truthy(py)).unwrap_or(false)
            });
        }
        if once {
            rule = rule.once();
        }
        if exclusive {
            rule = rule.exclusive();
        }
        if let Some(d) = description {
            rule = rule.describe(d);
        }
        Ok(PyRule { rule })
    }

    /// The rule's name.
    #[getter]
    fn name(&self) -> &str {
        self.rule.name()
    }
}

/// Rules applied together until none fires (first rule in order wins at a node).
#[pyclass(frozen, module = "irpass.pattern", name = "RuleSet")]
pub struct PyRuleSet {
    set: Arc<RuleSet>,
}

fn apply_set(set: &RuleSet, f: &Function) -> PyResult<Function> {
    take_raised();
    let out = set.apply(&f.code, f.types().as_deref());
    if let Some(e) = take_raised() {
        return Err(e);
    }
    Ok(f.with_code(out.map_err(pattern_error)?))
}

#[pymethods]
impl PyRuleSet {
    /// A rule set named `name`; it compiles here, so a bad pattern is an error now.
    #[new]
    fn new(name: String, rules: Vec<PyRule>) -> PyResult<PyRuleSet> {
        let set = RuleSet::new(name, rules.into_iter().map(|r| r.rule).collect());
        set.rules().map_err(pattern_error)?;
        Ok(PyRuleSet { set: Arc::new(set) })
    }

    /// `func` with the rules applied.
    fn apply(&self, py: Python<'_>, func: &PyFunction) -> PyResult<PyFunction> {
        let f = func.function.clone();
        let set = self.set.clone();
        let out = py.detach(move || apply_set(&set, &f))?;
        Ok(PyFunction::new(&func.name, out))
    }

    /// The rule set as a function pass named after it.
    #[pyo3(signature = (opt_level = 0, name = None))]
    fn as_pass(&self, opt_level: u32, name: Option<String>) -> PyPass {
        let name = name.unwrap_or_else(|| self.set.name().to_string());
        crate::pass::remember(&name);
        PyPass {
            pass: Pass::function(RulesPass {
                info: PassInfo::new(name, opt_level, PassKind::Function),
                set: self.set.clone(),
            }),
        }
    }
}

struct RulesPass {
    info: PassInfo,
    set: Arc<RuleSet>,
}

impl FunctionPass<Module> for RulesPass {
    fn info(&self) -> &PassInfo {
        &self.info
    }

    fn transform_function(
        &self,
        func: Function,
        module: &Module,
        _ctx: &PassContext,
    ) -> irpass::Result<Function> {
        take_raised();
        let out = pattern::run_pass(&self.set, func, module);
        if let Some(e) = take_raised() {
            return Err(Box::new(e));
        }
        Ok(out?)
    }
}

/// `func` with every match of `pattern` wrapped in a function (TVM's `partition`): each gets
/// `attrs` and `PartitionedFromPattern`; `check(m)` refuses matches.
#[pyfunction]
#[pyo3(signature = (pattern, func, attrs = None, check = None))]
pub fn partition(
    pattern: &PyPattern,
    func: &PyFunction,
    attrs: Option<&Bound<'_, PyDict>>,
    check: Option<Py<PyAny>>,
) -> PyResult<PyFunction> {
    let f = &func.function;
    let types = f.types();
    let typed = |e: ExprId| {
        types.as_ref().map(|t| match t.of(e) {
            irpass_ir::Type::Tensor(tt) => (
                Some(tt.dtype),
                tt.shape
                    .iter()
                    .map(|d| match d {
                        irpass_ir::Dim::Static(n) => usize::try_from(*n).ok(),
                        irpass_ir::Dim::Named(_) | irpass_ir::Dim::Any => None,
                    })
                    .collect::<Option<Vec<usize>>>(),
            ),
            _ => (None, None),
        })
    };
    let check_fn = check.map(|check| {
        move |body: &Body, m: &Match| {
            let snapshot = PyMatch {
                root: node_of(body, m.root, typed(m.root)),
                holes: m
                    .captures()
                    .map(|(k, e)| (k.to_string(), node_of(body, e, typed(e))))
                    .collect(),
            };
            call_python(|py| check.call1(py, (snapshot,))?.is_truthy(py)).unwrap_or(false)
        }
    });
    let options = PartitionOptions {
        attrs: view::attrs_from_kwargs(attrs)?,
        check: check_fn
            .as_ref()
            .map(|c| c as &dyn Fn(&Body, &Match) -> bool),
        types: types.as_deref(),
    };
    take_raised();
    let out = pattern::partition(&pattern.p, &f.code, &options);
    if let Some(e) = take_raised() {
        return Err(e);
    }
    let out = out.map_err(pattern_error)?;
    Ok(PyFunction::new(&func.name, f.with_code(out)))
}
