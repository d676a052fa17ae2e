//! `irpass.ir.Module` and `irpass.ir.Function`: the reference IR's modules and functions.

use std::path::PathBuf;
use std::sync::RwLock;

use irpass_ir::{Function, Module};
use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::types::PyType;
use crate::{errors, value};

/// A module of the reference IR: global functions by name, in definition order.
///
/// Built by `Module.parse(text)` or `Module.from_onnx(path_or_bytes)`; `str(mod)` is its text,
/// `mod["main"]` a function, iteration gives the function names. Two modules compare equal when
/// they are structurally equal (same functions, same graphs, sharing included).
#[pyclass(frozen, module = "irpass.ir", name = "Module")]
pub struct PyIrModule {
    inner: RwLock<Module>,
}

impl PyIrModule {
    /// Wraps a module.
    pub fn new(module: Module) -> Self {
        PyIrModule {
            inner: RwLock::new(module),
        }
    }

    /// The module (an O(1) clone).
    pub fn get(&self) -> Module {
        self.inner.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

fn read_model(py: Python<'_>, model: &Bound<'_, PyAny>) -> PyResult<(Vec<u8>, Option<PathBuf>)> {
    if let Ok(bytes) = model.cast::<PyBytes>() {
        return Ok((bytes.as_bytes().to_vec(), None));
    }
    let path: PathBuf = model.extract().map_err(|_| {
        PyTypeError::new_err("from_onnx takes a path (str or os.PathLike) or the model's bytes")
    })?;
    let bytes = py
        .detach(|| std::fs::read(&path))
        .map_err(|e| errors::OnnxError::new_err(format!("{}: {e}", path.display())))?;
    Ok((bytes, Some(path)))
}

#[pymethods]
impl PyIrModule {
    /// An empty module.
    #[new]
    fn empty() -> Self {
        PyIrModule::new(Module::new())
    }

    /// Parses the text format (`def @main(%x: Tensor[(2, 3), float32]) { ... }`); `name` is
    /// the file name errors show.
    #[staticmethod]
    #[pyo3(signature = (text, name = None))]
    fn parse(py: Python<'_>, text: &str, name: Option<&str>) -> PyResult<Self> {
        let parsed = py.detach(|| match name {
            Some(name) => Module::parse_named(name, text),
            None => Module::parse(text),
        });
        parsed
            .map(PyIrModule::new)
            .map_err(|e| errors::ir_error(py, &e))
    }

    /// Imports an ONNX model from a path or from its bytes. `input_shapes` fixes unknown or
    /// symbolic input dimensions (`{"input": [1, 3, 224, 224]}`); external data is read relative
    /// to the model's folder.
    #[staticmethod]
    #[pyo3(signature = (model, input_shapes = None))]
    fn from_onnx(
        py: Python<'_>,
        model: &Bound<'_, PyAny>,
        input_shapes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let input_shapes = match input_shapes {
            None => Vec::new(),
            Some(shapes) => {
                let dict = shapes.cast::<pyo3::types::PyDict>().map_err(|_| {
                    PyTypeError::new_err(
                        "input_shapes takes a dict of input name to shape: {\"input\": [1, 3, 224, 224]}",
                    )
                })?;
                dict.iter()
                    .map(|(k, v)| {
                        let name: String = k.extract().map_err(|_| {
                            PyTypeError::new_err("input_shapes: the keys are input names (str)")
                        })?;
                        let shape: Vec<i64> = v.extract().map_err(|_| {
                            PyTypeError::new_err(format!(
                                "input_shapes[{name:?}]: a shape is a list of ints"
                            ))
                        })?;
                        Ok((name, shape))
                    })
                    .collect::<PyResult<Vec<_>>>()?
            }
        };
        let (bytes, path) = read_model(py, model)?;
        let options = irpass_onnx::ImportOptions {
            input_shapes,
            input_shapes_name: Some("input_shapes"),
        };
        let imported =
            py.detach(|| irpass_onnx::import_bytes_from(bytes, path.as_deref(), &options));
        Ok(PyIrModule::new(imported.map_err(errors::onnx)?.module))
    }

    /// Writes the module as an ONNX model file at `path` (at the imported model's opset, or
    /// `opset`); with `external_data` (a size in bytes) each initializer of at least that size
    /// goes into `PATH.data` beside it. FuseOps's groups are written inline, or as local
    /// functions from opset 15 with `local_functions` (a model viewer shows them; ONNX Runtime
    /// runs the inline form slightly faster).
    #[pyo3(signature = (path, opset = None, external_data = None, local_functions = false))]
    fn save_onnx(
        &self,
        py: Python<'_>,
        path: PathBuf,
        opset: Option<i64>,
        external_data: Option<u64>,
        local_functions: bool,
    ) -> PyResult<()> {
        let module = self.get();
        let options = irpass_onnx::ExportOptions {
            opset,
            local_functions,
        };
        py.detach(|| {
            let model = irpass_onnx::export_module(&module, None, &options)?;
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let files = irpass_onnx::model_files(model, name.as_deref(), external_data)?;
            let io = |p: &std::path::Path, e: std::io::Error| irpass_onnx::OnnxError::Io {
                path: p.display().to_string(),
                message: e.to_string(),
            };
            // The pieces one after another: the weights are not gathered into one buffer.
            let write = |path: &std::path::Path, pieces: &[bytes::Bytes]| -> std::io::Result<()> {
                let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
                for piece in pieces {
                    std::io::Write::write_all(&mut file, piece)?;
                }
                std::io::Write::flush(&mut file)
            };
            if let Some((data_name, data)) = &files.data {
                let data_path = path.with_file_name(data_name);
                write(&data_path, data).map_err(|e| io(&data_path, e))?;
            }
            write(&path, &files.model).map_err(|e| io(&path, e))
        })
        .map_err(errors::onnx)
    }

    /// The module as an ONNX model's bytes (at the imported model's opset, or `opset`; FuseOps's
    /// groups inline, or as local functions from opset 15 with `local_functions`).
    #[pyo3(signature = (opset = None, local_functions = false))]
    fn to_onnx<'py>(
        &self,
        py: Python<'py>,
        opset: Option<i64>,
        local_functions: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let module = self.get();
        let options = irpass_onnx::ExportOptions {
            opset,
            local_functions,
        };
        let bytes = py
            .detach(|| {
                irpass_onnx::export_module(&module, None, &options)
                    .map(|m| irpass_onnx::encode_model(&m))
            })
            .map_err(errors::onnx)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Infers the types of every function, or raises `IrError` (kind `type`).
    fn infer_types(&self, py: Python<'_>) -> PyResult<()> {
        let module = self.get();
        py.detach(|| module.infer_types()).map_err(errors::ir)
    }

    /// Checks well-formedness and types (what `irpass-opt` checks before any pass runs).
    fn verify(&self, py: Python<'_>) -> PyResult<()> {
        let module = self.get();
        py.detach(|| module.verify()).map_err(errors::ir)
    }

    /// Runs function `name` in the reference interpreter on numpy arrays (or anything
    /// `numpy.asarray` takes; an array of `str` is an ONNX tensor of strings); returns a numpy
    /// array (of `str` objects for strings), a tuple for a tuple result (a sequence), `None`
    /// or the value for an optional.
    #[pyo3(signature = (name, *args))]
    fn evaluate<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        args: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let module = self.get();
        let declared: Vec<Option<irpass_ir::DType>> = module
            .get(name)
            .map(|f| {
                f.param_types()
                    .into_iter()
                    .map(|t| match t {
                        Some(irpass_ir::Type::Tensor(t)) => Some(t.dtype),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let inputs = args
            .iter()
            .enumerate()
            .map(|(i, a)| value::from_python(&a, declared.get(i).copied().flatten()))
            .collect::<PyResult<Vec<_>>>()?;
        let name = name.to_string();
        let result = py
            .detach(move || irpass_ir::eval::eval_function(&module, &name, inputs))
            .map_err(|e| errors::ir_error(py, &e))?;
        value::to_python(py, &result)
    }

    /// A copy of the module in which the named parameters of function `function` are bound
    /// to the given arrays (TVM's `bind_params_by_name`): they become constants and leave the
    /// function's signature, so that constant folding and the batch-norm and scale foldings can
    /// use their values (a model's weights). Raises `IrError` for a name that is not a
    /// parameter or an array whose dtype or shape disagrees with the parameter's type, and
    /// `KeyError` when the module has no such function.
    #[pyo3(signature = (params, function = "main"))]
    fn bind_params(
        &self,
        params: &Bound<'_, pyo3::types::PyDict>,
        function: &str,
    ) -> PyResult<PyIrModule> {
        let mut module = self.get();
        let f = module.get(function).cloned().ok_or_else(|| {
            PyKeyError::new_err(format!("the module has no function `@{function}`"))
        })?;
        let declared: Vec<(String, Option<irpass_ir::DType>)> = f
            .params()
            .map(|p| {
                let dtype = match &p.annotation {
                    Some(irpass_ir::Type::Tensor(t)) => Some(t.dtype),
                    _ => None,
                };
                (p.name.to_string(), dtype)
            })
            .collect();
        let mut values = Vec::new();
        for (name, array) in params.iter() {
            let name: String = name
                .extract()
                .map_err(|_| PyTypeError::new_err("bind_params takes a dict of parameter names"))?;
            let dtype = declared
                .iter()
                .find(|(n, _)| *n == name)
                .and_then(|(_, d)| *d);
            let irpass_ir::Value::Tensor(tensor) = value::from_python(&array, dtype)? else {
                return Err(PyTypeError::new_err(format!(
                    "`{name}`: a parameter binds to an array"
                )));
            };
            values.push((name, tensor));
        }
        let bound = f
            .bind_params(values.iter().map(|(n, t)| (n.as_str(), t.clone())))
            .map_err(errors::ir)?;
        module.replace(function, bound);
        Ok(PyIrModule::new(module))
    }

    /// Whether both modules have the same functions, structurally (sharing included).
    fn structural_equal(&self, other: &PyIrModule) -> bool {
        self.get().structurally_equal(&other.get())
    }

    /// Whether both modules hold the very same function objects (no pass changed anything).
    fn same_as(&self, other: &PyIrModule) -> bool {
        self.get().same_as(&other.get())
    }

    /// A hash that agrees with structural equality.
    fn structural_hash(&self) -> u64 {
        self.get().structural_hash()
    }

    /// The function names, in definition order.
    fn names(&self) -> Vec<String> {
        self.get().names().map(str::to_string).collect()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyIrModule>()
            .is_ok_and(|o| self.structural_equal(o.get()))
    }

    fn __hash__(&self) -> u64 {
        self.structural_hash()
    }

    fn __str__(&self) -> String {
        self.get().to_string()
    }

    fn __repr__(&self) -> String {
        let names: Vec<String> = self.names().iter().map(|n| format!("@{n}")).collect();
        format!("<irpass.ir.Module [{}]>", names.join(", "))
    }

    fn __len__(&self) -> usize {
        self.get().len()
    }

    fn __contains__(&self, name: &str) -> bool {
        self.get().get(name).is_some()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let names = self.names();
        Ok(pyo3::types::PyList::new(py, names)?.try_iter()?.into_any())
    }

    fn __getitem__(&self, name: &str) -> PyResult<PyFunction> {
        let module = self.get();
        match module.get(name) {
            Some(f) => Ok(PyFunction::new(name, f.clone())),
            None => Err(PyKeyError::new_err(format!(
                "the module has no function `@{name}`"
            ))),
        }
    }

    /// Adds or replaces a function (TVM's `mod["name"] = func`).
    fn __setitem__(&self, name: &str, func: &PyFunction) {
        let mut module = self.inner.write().unwrap_or_else(|e| e.into_inner());
        if module.get(name).is_some() {
            module.replace(name, func.function.clone());
        } else {
            module.add(name, func.function.clone());
        }
    }

    fn __delitem__(&self, name: &str) -> PyResult<()> {
        let mut module = self.inner.write().unwrap_or_else(|e| e.into_inner());
        module
            .remove(name)
            .map(drop)
            .ok_or_else(|| PyKeyError::new_err(format!("the module has no function `@{name}`")))
    }
}

/// A function of the reference IR (immutable; a pass returns a new one).
#[pyclass(frozen, module = "irpass.ir", name = "Function")]
pub struct PyFunction {
    /// The name it had in its module.
    pub name: String,
    /// The function.
    pub function: Function,
    /// Who uses each node, computed on the first `users()` query.
    pub users: std::sync::OnceLock<std::sync::Arc<Vec<Vec<usize>>>>,
}

impl PyFunction {
    /// Wraps `function`, named `name` in its module.
    pub fn new(name: &str, function: Function) -> Self {
        PyFunction {
            name: name.to_string(),
            function,
            users: std::sync::OnceLock::new(),
        }
    }
}

#[pymethods]
impl PyFunction {
    /// The name the function had in the module it came from.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// The parameters' names (without `%`).
    #[getter]
    fn params(&self) -> Vec<String> {
        self.function.params().map(|p| p.name.to_string()).collect()
    }

    /// The function's type (`kind == "func"`, with `params` and `ret`), once types are known
    /// (`Module.infer_types()`); `None` before.
    #[getter]
    fn checked_type(&self, py: Python<'_>) -> PyResult<Option<Py<PyType>>> {
        self.function
            .function_type()
            .map(|t| PyType::wrap(py, t))
            .transpose()
    }

    /// Whether both functions are structurally equal (sharing included).
    fn structural_equal(&self, other: &PyFunction) -> bool {
        irpass_ir::structural::structurally_equal(&self.function.code, &other.function.code)
    }

    /// Whether both are the very same function object.
    fn same_as(&self, other: &PyFunction) -> bool {
        Function::ptr_eq(&self.function, &other.function)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyFunction>()
            .is_ok_and(|o| self.structural_equal(o.get()))
    }

    fn __hash__(&self) -> u64 {
        irpass_ir::structural::structural_hash(&self.function.code)
    }

    fn __str__(&self) -> String {
        let f = &self.function;
        irpass_ir::text::function_text(&self.name, &f.code, f.ret_type.as_ref(), &f.attrs)
    }

    fn __repr__(&self) -> String {
        format!("<irpass.ir.Function @{}>", self.name)
    }
}
