//! `Function.rewriter()`: replacements recorded from Python, applied by Rust in one walk.
//!
//! New nodes get ids after the function's own (`len(body)`, `len(body) + 1`, ...), so a
//! replacement may use old nodes, new ones, or both. `finish()` (or returning the rewriter from
//! a function pass) walks the function once with the reference IR's rewriter: sharing and
//! scoping kept, every node's operands already final when it is replaced, dead nodes gone.

use std::sync::{Arc, Mutex};

use irpass_ir::body::{ExprId, Idx};
use irpass_ir::rewrite::{OldId, Rewrite, RewriteCx};
use irpass_ir::{Attrs, Function, Op, Tensor};
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rustc_hash::FxHashMap;

use crate::module::PyFunction;
use crate::{value, view};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ref {
    Old(ExprId),
    New(usize),
}

enum NewNode {
    Call {
        op: Op,
        args: Vec<Ref>,
        attrs: Attrs,
    },
    Constant(Arc<Tensor>),
    Tuple(Vec<Ref>),
    Proj(Ref, u32),
}

impl NewNode {
    fn refs(&self) -> &[Ref] {
        match self {
            NewNode::Call { args, .. } | NewNode::Tuple(args) => args,
            NewNode::Constant(_) => &[],
            NewNode::Proj(t, _) => std::slice::from_ref(t),
        }
    }
}

#[derive(Default)]
struct State {
    nodes: Vec<NewNode>,
    replace: FxHashMap<ExprId, Ref>,
}

/// Records replacements of a function's nodes; Rust applies them when the function pass
/// returns the rewriter, or at `finish()`.
#[pyclass(frozen, module = "irpass.ir", name = "Rewriter")]
pub struct PyRewriter {
    name: String,
    function: Function,
    state: Mutex<State>,
}

impl PyRewriter {
    /// A rewriter of `function`, named `name` in its module.
    pub fn new(name: String, function: Function) -> Self {
        PyRewriter {
            name,
            function,
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn reference(&self, state: &State, n: i64) -> PyResult<Ref> {
        let old = self.function.code.body.len();
        let i = usize::try_from(n).ok();
        match i {
            Some(i) if i < old => Ok(Ref::Old(ExprId::new(i))),
            Some(i) if i < old + state.nodes.len() => Ok(Ref::New(i - old)),
            _ => Err(PyIndexError::new_err(format!(
                "no node {n} (the function has {old}, the rewriter made {})",
                state.nodes.len()
            ))),
        }
    }

    fn push(&self, state: &mut State, node: NewNode) -> usize {
        state.nodes.push(node);
        self.function.code.body.len() + state.nodes.len() - 1
    }

    /// The function with the replacements applied (the same function when there are none).
    pub fn apply(&self) -> PyResult<Function> {
        let state = self.lock();
        if state.replace.is_empty() {
            return Ok(self.function.clone());
        }
        let code = &self.function.code;
        let mut apply = Apply {
            state: &state,
            built: vec![None; state.nodes.len()],
            error: None,
        };
        let out = code.rewrite(&mut apply);
        if let Some(e) = apply.error {
            return Err(PyValueError::new_err(format!(
                "rewriting @{}: {e}",
                self.name
            )));
        }
        Ok(self.function.with_code(out))
    }
}

#[pymethods]
impl PyRewriter {
    /// A new call of operator `op` on `args` (node ids) with attributes as keywords; its id.
    #[pyo3(signature = (op, args, **attrs))]
    fn call(&self, op: &str, args: Vec<i64>, attrs: Option<&Bound<'_, PyDict>>) -> PyResult<usize> {
        let op = Op::get(op).map_err(PyValueError::new_err)?;
        let attrs = op
            .normalize_attrs(view::attrs_from_kwargs(attrs)?)
            .map_err(PyValueError::new_err)?;
        let mut state = self.lock();
        let args = args
            .into_iter()
            .map(|a| self.reference(&state, a))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(self.push(&mut state, NewNode::Call { op, args, attrs }))
    }

    /// A new constant from a numpy array (or a number or list, read as `dtype`); its id.
    #[pyo3(signature = (value, dtype = None))]
    fn constant(&self, value: &Bound<'_, PyAny>, dtype: Option<&str>) -> PyResult<usize> {
        let dtype = dtype
            .map(|d| {
                irpass_ir::DType::from_name(d)
                    .ok_or_else(|| PyValueError::new_err(format!("no dtype named {d:?}")))
            })
            .transpose()?;
        let tensor = match value::from_python(value, dtype)? {
            irpass_ir::Value::Tensor(t) => t,
            _ => return Err(PyValueError::new_err("a constant is a tensor")),
        };
        let tensor = match dtype {
            Some(d) if d != tensor.dtype() => Arc::new(tensor.cast(d)),
            _ => tensor,
        };
        let mut state = self.lock();
        Ok(self.push(&mut state, NewNode::Constant(tensor)))
    }

    /// A new tuple of `fields` (node ids); its id.
    fn tuple(&self, fields: Vec<i64>) -> PyResult<usize> {
        let mut state = self.lock();
        let fields = fields
            .into_iter()
            .map(|a| self.reference(&state, a))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(self.push(&mut state, NewNode::Tuple(fields)))
    }

    /// A new projection `tuple.index`; its id.
    fn proj(&self, tuple: i64, index: u32) -> PyResult<usize> {
        let mut state = self.lock();
        let t = self.reference(&state, tuple)?;
        Ok(self.push(&mut state, NewNode::Proj(t, index)))
    }

    /// Replaces node `old` of the function by node `new` (old or made by this rewriter)
    /// everywhere it is used.
    fn replace(&self, old: i64, new: i64) -> PyResult<()> {
        let mut state = self.lock();
        let Ref::Old(old_id) = self.reference(&state, old)? else {
            return Err(PyValueError::new_err(format!(
                "node {old} was made by this rewriter; only the function's own nodes are replaced"
            )));
        };
        let new = self.reference(&state, new)?;
        state.replace.insert(old_id, new);
        Ok(())
    }

    /// How many replacements are recorded.
    fn __len__(&self) -> usize {
        self.lock().replace.len()
    }

    /// The function with the replacements applied (not type-checked; a function pass that
    /// returns the rewriter also checks the result's types).
    fn finish(&self) -> PyResult<PyFunction> {
        Ok(PyFunction::new(&self.name, self.apply()?))
    }
}

struct Apply<'a> {
    state: &'a State,
    built: Vec<Option<ExprId>>,
    error: Option<String>,
}

impl Apply<'_> {
    fn old(cx: &RewriteCx<'_>, r: ExprId, old: OldId, new: ExprId) -> Result<ExprId, String> {
        if r == old.id() {
            return Ok(new);
        }
        cx.new_id(cx.old.at(r)).ok_or_else(|| {
            format!(
                "the replacement of node {} uses node {}, which is not computed before it",
                old.index(),
                r.index()
            )
        })
    }

    fn resolve(
        &mut self,
        cx: &mut RewriteCx<'_>,
        r: Ref,
        old: OldId,
        new: ExprId,
    ) -> Result<ExprId, String> {
        let k = match r {
            Ref::Old(x) => return Self::old(cx, x, old, new),
            Ref::New(k) => k,
        };
        // The new nodes `k` needs that are not built yet, built operands first with an explicit
        // stack (a new node uses only earlier ones, so this ends): no recursion however long a
        // chain Python made, and no work for nodes built already.
        let mut stack = vec![k];
        while let Some(&j) = stack.last() {
            if self.built[j].is_some() {
                stack.pop();
                continue;
            }
            let before = stack.len();
            for r in self.state.nodes[j].refs() {
                if let Ref::New(i) = *r
                    && self.built[i].is_none()
                {
                    stack.push(i);
                }
            }
            if stack.len() > before {
                continue;
            }
            stack.pop();
            let get = |this: &Self, cx: &RewriteCx<'_>, r: &Ref| match r {
                Ref::Old(x) => Self::old(cx, *x, old, new),
                Ref::New(i) => this.built[*i].ok_or_else(|| "a new node out of order".to_string()),
            };
            let id = match &self.state.nodes[j] {
                NewNode::Call { op, args, attrs } => {
                    let args = args
                        .iter()
                        .map(|r| get(self, cx, r))
                        .collect::<Result<Vec<_>, _>>()?;
                    cx.new.call_op(*op, &args, attrs.clone())
                }
                NewNode::Constant(t) => cx.new.constant(t.clone()),
                NewNode::Tuple(fields) => {
                    let fields = fields
                        .iter()
                        .map(|r| get(self, cx, r))
                        .collect::<Result<Vec<_>, _>>()?;
                    cx.new.tuple(&fields)
                }
                NewNode::Proj(t, i) => {
                    let t = get(self, cx, t)?;
                    cx.new.proj(t, *i)
                }
            };
            self.built[j] = Some(id);
        }
        self.built[k].ok_or_else(|| "a new node was not built".to_string())
    }
}

impl Rewrite for Apply<'_> {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: OldId, new: ExprId) -> Option<ExprId> {
        if self.error.is_some() {
            return None;
        }
        let r = *self.state.replace.get(&old.id())?;
        match self.resolve(cx, r, old, new) {
            Ok(id) if id != new => Some(id),
            Ok(_) => None,
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }
}
