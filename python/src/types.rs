//! Types as Python objects: a tensor's shape and dtype, a tuple's fields, a function's
//! parameters and result, read as attributes rather than parsed out of text.

use std::hash::{Hash, Hasher};

use irpass_ir::{Dim, Type};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// A type of the reference IR: a tensor (`kind == "tensor"`, with `shape` and `dtype`), a
/// tuple (`"tuple"`, with `fields`), a function (`"func"`, with `params` and `ret`), or not
/// known yet (`"unknown"`). `str(t)` is its text form (`Tensor[(2, 4), float32]`).
#[pyclass(frozen, module = "irpass.ir", name = "Type")]
pub struct PyType(pub Type);

impl PyType {
    /// The Python object for `ty`.
    pub fn wrap(py: Python<'_>, ty: Type) -> PyResult<Py<PyType>> {
        Py::new(py, PyType(ty))
    }
}

#[pymethods]
impl PyType {
    /// `"tensor"`, `"tuple"`, `"func"`, `"opaque"` (a kind of value the IR does not model,
    /// such as an ONNX sequence; `str(type)` names it) or `"unknown"`.
    #[getter]
    fn kind(&self) -> &'static str {
        match &self.0 {
            Type::Tensor(_) => "tensor",
            Type::Tuple(_) => "tuple",
            Type::Func(_) => "func",
            Type::Opaque(_) => "opaque",
            Type::Unknown => "unknown",
        }
    }

    /// A tensor's dimensions (an `int` each, a `str` for a size known by name such as
    /// `"batch"`, `None` for a size not known); `None` for other kinds.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let Type::Tensor(t) = &self.0 else {
            return Ok(None);
        };
        let dims: Vec<Bound<'py, PyAny>> = t
            .shape
            .iter()
            .map(|d: &Dim| match *d {
                Dim::Static(n) => n.into_pyobject(py).unwrap().into_any(),
                Dim::Named(s) => s.as_str().into_pyobject(py).unwrap().into_any(),
                Dim::Any => py.None().into_bound(py),
            })
            .collect();
        PyTuple::new(py, dims).map(Some)
    }

    /// A tensor's rank; `None` for other kinds.
    #[getter]
    fn rank(&self) -> Option<usize> {
        match &self.0 {
            Type::Tensor(t) => Some(t.rank()),
            _ => None,
        }
    }

    /// A tensor's element type (`"float32"`, ...); `None` for other kinds.
    #[getter]
    fn dtype(&self) -> Option<&'static str> {
        match &self.0 {
            Type::Tensor(t) => Some(t.dtype.name()),
            _ => None,
        }
    }

    /// A tuple's field types; `None` for other kinds.
    #[getter]
    fn fields(&self, py: Python<'_>) -> PyResult<Option<Vec<Py<PyType>>>> {
        match &self.0 {
            Type::Tuple(fields) => fields
                .iter()
                .map(|f| PyType::wrap(py, f.clone()))
                .collect::<PyResult<_>>()
                .map(Some),
            _ => Ok(None),
        }
    }

    /// A function's parameter types; `None` for other kinds.
    #[getter]
    fn params(&self, py: Python<'_>) -> PyResult<Option<Vec<Py<PyType>>>> {
        match &self.0 {
            Type::Func(f) => f
                .params
                .iter()
                .map(|p| PyType::wrap(py, p.clone()))
                .collect::<PyResult<_>>()
                .map(Some),
            _ => Ok(None),
        }
    }

    /// A function's result type; `None` for other kinds.
    #[getter]
    fn ret(&self, py: Python<'_>) -> PyResult<Option<Py<PyType>>> {
        match &self.0 {
            Type::Func(f) => PyType::wrap(py, f.ret.clone()).map(Some),
            _ => Ok(None),
        }
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<PyType>().is_ok_and(|o| o.get().0 == self.0)
    }

    fn __hash__(&self) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.0.hash(&mut h);
        h.finish()
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }

    fn __repr__(&self) -> String {
        format!("<irpass.ir.Type {}>", self.0)
    }
}
