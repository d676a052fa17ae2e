//! Instruments: Python objects with TVM's hook methods, and the registered Rust instruments.

use std::sync::Arc;

use irpass::instrument::PassTiming;
use irpass::{BoxError, ModuleView, PassInfo, PassInstrument};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::errors;
use crate::module::PyIrModule;
use crate::pass::PyPassInfo;

/// Which of TVM's hooks a Python instrument defines (the others cost no call into Python).
#[derive(Clone, Copy, Default)]
struct Hooks {
    enter: bool,
    exit: bool,
    should_run: bool,
    before: bool,
    after: bool,
}

/// A Python object used as an instrument: the hooks it defines are called with the GIL held.
struct PythonInstrument {
    obj: Py<PyAny>,
    name: String,
    hooks: Hooks,
}

fn boxed(e: PyErr) -> BoxError {
    Box::new(e)
}

impl PythonInstrument {
    fn call(
        &self,
        method: &str,
        module: Option<(&dyn ModuleView, &PassInfo)>,
    ) -> irpass::Result<bool> {
        Python::attach(|py| {
            let out = match module {
                None => self.obj.call_method0(py, method)?,
                Some((module, info)) => {
                    let module = match module.downcast_ref::<irpass_ir::Module>() {
                        Some(m) => Py::new(py, PyIrModule::new(m.clone()))?.into_any(),
                        None => py.None(),
                    };
                    let info = PyPassInfo { info: info.clone() };
                    self.obj.call_method1(py, method, (module, info))?
                }
            };
            out.bind(py).is_truthy()
        })
        .map_err(boxed)
    }
}

impl PassInstrument for PythonInstrument {
    fn name(&self) -> &str {
        &self.name
    }

    fn enter_pass_ctx(&self) -> irpass::Result<()> {
        if self.hooks.enter {
            self.call("enter_pass_ctx", None)?;
        }
        Ok(())
    }

    fn exit_pass_ctx(&self) -> irpass::Result<()> {
        if self.hooks.exit {
            self.call("exit_pass_ctx", None)?;
        }
        Ok(())
    }

    fn should_run(&self, module: &dyn ModuleView, info: &PassInfo) -> irpass::Result<bool> {
        if !self.hooks.should_run {
            return Ok(true);
        }
        self.call("should_run", Some((module, info)))
    }

    fn run_before_pass(&self, module: &dyn ModuleView, info: &PassInfo) -> irpass::Result<()> {
        if self.hooks.before {
            self.call("run_before_pass", Some((module, info)))?;
        }
        Ok(())
    }

    fn run_after_pass(&self, module: &dyn ModuleView, info: &PassInfo) -> irpass::Result<()> {
        if self.hooks.after {
            self.call("run_after_pass", Some((module, info)))?;
        }
        Ok(())
    }
}

/// An instrument implemented in Rust (a registered one, by name).
#[pyclass(
    frozen,
    subclass,
    module = "irpass.instrument",
    name = "NativeInstrument"
)]
pub struct PyNativeInstrument {
    inner: Arc<dyn PassInstrument>,
}

#[pymethods]
impl PyNativeInstrument {
    /// The instrument's name.
    #[getter]
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn __repr__(&self) -> String {
        format!("<irpass.instrument {}>", self.inner.name())
    }
}

/// The registered instrument `name` (as `IRPASS_INSTRUMENTS` and `irpass-opt` switch them on).
#[pyfunction]
pub fn lookup_instrument(name: &str) -> PyResult<PyNativeInstrument> {
    irpass::registry::lookup_instrument(name)
        .map(|inner| PyNativeInstrument { inner })
        .map_err(errors::registry)
}

/// The registered instruments: `(name, description)`.
#[pyfunction]
pub fn list_instruments() -> Vec<(&'static str, &'static str)> {
    irpass::registry::instruments()
        .iter()
        .map(|r| (r.name, r.description))
        .collect()
}

/// Times every pass, nested as the passes nest (TVM's `PassTimingInstrument`).
#[pyclass(frozen, module = "irpass.instrument", name = "PassTimingInstrument")]
pub struct PyPassTiming {
    inner: Arc<PassTiming>,
}

#[pymethods]
impl PyPassTiming {
    /// A timer with no records.
    #[new]
    fn new() -> Self {
        PyPassTiming {
            inner: Arc::new(PassTiming::new()),
        }
    }

    /// The timings as an indented table (one line per pass, nested passes below their parent).
    fn render(&self) -> String {
        self.inner.render()
    }

    /// The timings as nested dicts (`name`, `ns`, `children`, ...).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::json::to_python(py, &self.inner.to_json())
    }

    /// Forgets the records.
    fn clear(&self) {
        self.inner.clear()
    }
}

/// The Rust instrument for a Python object given in `instruments=[...]`.
pub fn to_rust(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Arc<dyn PassInstrument>> {
    if let Ok(timing) = obj.cast::<PyPassTiming>() {
        return Ok(timing.get().inner.clone());
    }
    if let Ok(native) = obj.cast::<PyNativeInstrument>() {
        return Ok(native.get().inner.clone());
    }
    if obj.is_instance_of::<pyo3::types::PyType>() {
        return Err(PyTypeError::new_err(format!(
            "instruments are instances, not classes: write {}() in `instruments=[...]`",
            obj.getattr("__name__")?
        )));
    }
    // A hook counts when the object has it and it is not `PassInstrument`'s no-op default
    // (marked `_irpass_default`), so hooks nobody wrote cost no call into Python.
    let has = |name: &str| match obj.getattr(name) {
        Ok(method) => !method
            .getattr("_irpass_default")
            .and_then(|d| d.is_truthy())
            .unwrap_or(false),
        Err(_) => false,
    };
    let hooks = Hooks {
        enter: has("enter_pass_ctx"),
        exit: has("exit_pass_ctx"),
        should_run: has("should_run"),
        before: has("run_before_pass"),
        after: has("run_after_pass"),
    };
    if !(hooks.enter || hooks.exit || hooks.should_run || hooks.before || hooks.after) {
        return Err(PyTypeError::new_err(format!(
            "{} is not an instrument: it has none of enter_pass_ctx, exit_pass_ctx, should_run, \
             run_before_pass, run_after_pass",
            obj.repr()?
        )));
    }
    let name: String = obj.get_type().name()?.extract()?;
    let _ = py;
    Ok(Arc::new(PythonInstrument {
        obj: obj.clone().unbind(),
        name,
        hooks,
    }))
}
