//! A function seen from Python: its nodes by integer id, queried in bulk.
//!
//! Ids are the arena's: operands have smaller ids than their users. A query returns ids or
//! lists of ids, so a pass written in Python crosses into Rust once per question, never once
//! per node of a walk, and no Python recursion is involved.

use std::sync::Arc;

use irpass_ir::body::{ExprId, Idx, Node, post_order};
use irpass_ir::{AttrValue, Attrs, Function};
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::module::PyFunction;
use crate::rewriter::PyRewriter;
use crate::types::PyType;
use crate::value;

/// Node `n` of `f`, or an `IndexError`.
pub fn node_id(f: &Function, n: i64) -> PyResult<ExprId> {
    let len = f.code.body.len();
    usize::try_from(n)
        .ok()
        .filter(|&i| i < len)
        .map(ExprId::new)
        .ok_or_else(|| PyIndexError::new_err(format!("no node {n} (the function has {len})")))
}

/// What a node is, as Python sees it: `var`, `global`, `constant`, `call` (of an operator),
/// `call_function`, `let`, `tuple`, `proj`, `if` or `function`.
pub fn kind_of(node: &Node) -> &'static str {
    match node {
        Node::Var(_) => "var",
        Node::Global(_) => "global",
        Node::Constant(_) => "constant",
        Node::CallOp { .. } => "call",
        Node::Call { .. } => "call_function",
        Node::Let { .. } => "let",
        Node::Tuple(_) => "tuple",
        Node::Proj(..) => "proj",
        Node::If(..) => "if",
        Node::Closure(_) => "function",
    }
}

/// An attribute value as a Python object.
pub fn attr_to_python<'py>(py: Python<'py>, v: &AttrValue) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        AttrValue::Int(i) => i.into_pyobject(py)?.into_any(),
        AttrValue::Float(f) => f.into_pyobject(py)?.into_any(),
        AttrValue::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        AttrValue::Str(s) => s.into_pyobject(py)?.into_any(),
        AttrValue::List(items) => PyList::new(
            py,
            items
                .iter()
                .map(|i| attr_to_python(py, i))
                .collect::<PyResult<Vec<_>>>()?,
        )?
        .into_any(),
        AttrValue::Null => py.None().into_bound(py),
    })
}

/// A Python value as an attribute value (int, float, bool, str, None, lists or tuples of
/// them), read directly: a float keeps its value, infinities and NaN included (`a_max=inf`).
pub fn attr_from_python(obj: &Bound<'_, PyAny>) -> PyResult<AttrValue> {
    if obj.is_none() {
        return Ok(AttrValue::Null);
    }
    // bool before int: a Python bool is an int.
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(AttrValue::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        return obj.extract::<i64>().map(AttrValue::Int).map_err(|_| {
            PyValueError::new_err(format!("the integer {obj} does not fit an attribute (i64)"))
        });
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(AttrValue::Float(f.value()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(AttrValue::Str(s.extract::<String>()?));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        return Ok(AttrValue::List(
            obj.try_iter()?
                .map(|item| attr_from_python(&item?))
                .collect::<PyResult<_>>()?,
        ));
    }
    Err(PyTypeError::new_err(format!(
        "an attribute value is an int, float, bool, str, None or a list of them, not {}",
        obj.get_type().name()?
    )))
}

/// Attributes from keyword arguments.
pub fn attrs_from_kwargs(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Attrs> {
    let mut attrs = Attrs::new();
    if let Some(kwargs) = kwargs {
        for (k, v) in kwargs.iter() {
            attrs.set(&k.extract::<String>()?, attr_from_python(&v)?);
        }
    }
    Ok(attrs)
}

#[pymethods]
impl PyFunction {
    /// The id of the function's result node.
    #[getter]
    fn root(&self) -> usize {
        self.function.code.root.index()
    }

    /// The ids of the parameters' nodes (`None` for a parameter the body never uses).
    #[getter]
    fn param_nodes(&self) -> Vec<Option<usize>> {
        let code = &self.function.code;
        code.params
            .iter()
            .map(|&v| code.body.var_node(v).map(Idx::index))
            .collect()
    }

    /// The nodes the result depends on, operands before their users (each once).
    fn nodes(&self) -> Vec<usize> {
        let code = &self.function.code;
        post_order(&code.body, code.root)
            .into_iter()
            .map(Idx::index)
            .collect()
    }

    /// What node `n` is: `var`, `global`, `constant`, `call` (of an operator),
    /// `call_function`, `let`, `tuple`, `proj`, `if` or `function`.
    fn kind(&self, n: i64) -> PyResult<&'static str> {
        let id = node_id(&self.function, n)?;
        Ok(kind_of(self.function.code.body.node(id)))
    }

    /// The operator node `n` calls (`None` when it is no operator call).
    fn op(&self, n: i64) -> PyResult<Option<&'static str>> {
        let id = node_id(&self.function, n)?;
        Ok(self
            .function
            .code
            .body
            .op_call(id)
            .map(|(op, ..)| op.name()))
    }

    /// The operands of node `n`: a call's arguments (a function call's callee first), a
    /// tuple's fields, a projection's tuple, an `if`'s condition and branches, a `let`'s values
    /// and body.
    fn args(&self, n: i64) -> PyResult<Vec<usize>> {
        let id = node_id(&self.function, n)?;
        let mut out = Vec::new();
        self.function
            .code
            .body
            .for_each_operand(id, |o| out.push(o.index()));
        Ok(out)
    }

    /// The attributes of operator call `n`, as written (defaults left out).
    fn attrs<'py>(&self, py: Python<'py>, n: i64) -> PyResult<Bound<'py, PyDict>> {
        let id = node_id(&self.function, n)?;
        let out = PyDict::new(py);
        if let Some((_, _, attrs)) = self.function.code.body.op_call(id) {
            for (k, v) in attrs.iter() {
                out.set_item(k, attr_to_python(py, v)?)?;
            }
        }
        Ok(out)
    }

    /// Attribute `name` of operator call `n`, its schema's default when not written.
    fn attr<'py>(&self, py: Python<'py>, n: i64, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let id = node_id(&self.function, n)?;
        let value = self
            .function
            .code
            .body
            .op_call(id)
            .and_then(|(op, _, attrs)| op.attr_value(attrs, name));
        match value {
            Some(v) => attr_to_python(py, &v),
            None => Err(PyValueError::new_err(format!(
                "node {n} has no attribute `{name}`"
            ))),
        }
    }

    /// The nodes that use node `n` as an operand (among the nodes the result depends on).
    fn users(&self, n: i64) -> PyResult<Vec<usize>> {
        let target = node_id(&self.function, n)?;
        let users = self.users_table();
        Ok(users[target.index()].clone())
    }

    /// The nodes the result depends on that are calls of `op` (`find(op="add")`), or of kind
    /// `kind` (`find(kind="constant")`), in operand-first order.
    #[pyo3(signature = (op = None, kind = None))]
    fn find(&self, op: Option<&str>, kind: Option<&str>) -> PyResult<Vec<usize>> {
        if let Some(op) = op {
            irpass_ir::Op::get(op).map_err(PyValueError::new_err)?;
        }
        let code = &self.function.code;
        let body = &code.body;
        Ok(post_order(body, code.root)
            .into_iter()
            .filter(|&e| {
                op.is_none_or(|op| body.op_call(e).is_some_and(|(o, ..)| o.name() == op))
                    && kind.is_none_or(|k| kind_of(body.node(e)) == k)
            })
            .map(Idx::index)
            .collect())
    }

    /// The value of constant node `n`, as a numpy array.
    fn constant<'py>(&self, py: Python<'py>, n: i64) -> PyResult<Bound<'py, PyAny>> {
        let id = node_id(&self.function, n)?;
        let body = &self.function.code.body;
        match body.node(id) {
            Node::Constant(k) => value::tensor_to_python(py, body.constant(*k)),
            _ => Err(PyValueError::new_err(format!("node {n} is not a constant"))),
        }
    }

    /// The name of variable or global node `n` (without `%` or `@`), or `None`.
    fn name_of(&self, n: i64) -> PyResult<Option<String>> {
        let id = node_id(&self.function, n)?;
        let body = &self.function.code.body;
        Ok(match body.node(id) {
            Node::Var(v) => Some(body.var(*v).name.to_string()),
            Node::Global(g) => Some(body.global(*g).to_string()),
            _ => None,
        })
    }

    /// The type of node `n`, once the module's types are inferred (`Module.infer_types()`);
    /// `None` before.
    fn type_of(&self, py: Python<'_>, n: i64) -> PyResult<Option<Py<PyType>>> {
        let id = node_id(&self.function, n)?;
        self.function
            .types()
            .map(|t| PyType::wrap(py, t.of(id).clone()))
            .transpose()
    }

    /// A rewriter for this function: record replacements, then return it from a function pass
    /// (or call `finish()`) to have them applied.
    fn rewriter(&self) -> PyRewriter {
        PyRewriter::new(self.name.clone(), self.function.clone())
    }
}

impl PyFunction {
    /// Who uses each node (computed once per function object).
    fn users_table(&self) -> Arc<Vec<Vec<usize>>> {
        self.users
            .get_or_init(|| {
                let code = &self.function.code;
                let body = &code.body;
                let mut users = vec![Vec::new(); body.len()];
                for e in post_order(body, code.root) {
                    body.for_each_operand(e, |o| {
                        let list: &mut Vec<usize> = &mut users[o.index()];
                        if list.last() != Some(&e.index()) {
                            list.push(e.index());
                        }
                    });
                }
                Arc::new(users)
            })
            .clone()
    }
}
