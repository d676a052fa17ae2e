//! `irpass.transform.PassContext`: TVM's `with PassContext(...)` on irpass's contexts.
//!
//! `__enter__` makes the context current on the calling thread (its instruments get
//! `enter_pass_ctx` there), `__exit__` leaves it; passes called inside see it, whichever thread
//! a function pass runs on.

use std::cell::RefCell;
use std::sync::{Arc, Mutex};

use irpass::{ContextGuard, PassContext, PassInstrument};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::instrument::to_rust;
use crate::{errors, json, pass};

thread_local! {
    /// The guards of the contexts entered on this thread, innermost last.
    static GUARDS: RefCell<Vec<ContextGuard>> = const { RefCell::new(Vec::new()) };
}

/// The Python objects of the contexts entered on any thread, so that `PassContext.current()`
/// and the `ctx` a pass receives are the object the user entered (with its instruments).
static ENTERED: Mutex<Vec<Py<PyPassContext>>> = Mutex::new(Vec::new());

/// The Rust side of the instruments given to a context.
type InstrumentArcs = Vec<Arc<dyn PassInstrument>>;

/// The settings passes run under: opt level, required and disabled passes, instruments, config.
///
/// `required_pass` and `disabled_pass` name passes (registered, or built from Python before the
/// context); an unknown name is a `RegistryError` with the closest names, and an unknown config
/// key a `ConfigError`.
#[pyclass(frozen, module = "irpass.transform", name = "PassContext")]
pub struct PyPassContext {
    ctx: PassContext,
    instruments: Mutex<Vec<Py<PyAny>>>,
}

impl PyPassContext {
    /// The Python object for `ctx`: the one the user entered, or a new view of it.
    pub fn wrap(py: Python<'_>, ctx: &PassContext) -> PyResult<Py<PyPassContext>> {
        let entered = ENTERED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(obj) = entered.iter().rev().find(|o| o.get().ctx.same_as(ctx)) {
            return Ok(obj.clone_ref(py));
        }
        drop(entered);
        Py::new(
            py,
            PyPassContext {
                ctx: ctx.clone(),
                instruments: Mutex::new(Vec::new()),
            },
        )
    }

    fn instruments_of(
        py: Python<'_>,
        list: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<(Vec<Py<PyAny>>, InstrumentArcs)> {
        let mut objects = Vec::new();
        let mut rust = Vec::new();
        if let Some(list) = list.filter(|l| !l.is_none()) {
            for item in list.try_iter()? {
                let item = item?;
                rust.push(to_rust(py, &item)?);
                objects.push(item.unbind());
            }
        }
        Ok((objects, rust))
    }
}

fn check_names(what: &str, names: &[String]) -> PyResult<()> {
    if names.is_empty() {
        return Ok(());
    }
    let known = pass::known_names();
    for name in names {
        if !known.iter().any(|k| k == name) {
            let close = irpass::suggest::closest(name, known.iter().map(String::as_str));
            return Err(errors::RegistryError::new_err(format!(
                "{what} names `{name}`, which is no registered pass nor one built from Python{}",
                irpass::suggest::did_you_mean(&close)
            )));
        }
    }
    Ok(())
}

#[pymethods]
impl PyPassContext {
    /// A context (TVM's signature, plus `threads` for the function passes' parallelism).
    #[new]
    #[pyo3(signature = (opt_level = 2, required_pass = None, disabled_pass = None, instruments = None, config = None, threads = None))]
    fn new(
        py: Python<'_>,
        opt_level: u32,
        required_pass: Option<Vec<String>>,
        disabled_pass: Option<Vec<String>>,
        instruments: Option<&Bound<'_, PyAny>>,
        config: Option<&Bound<'_, PyDict>>,
        threads: Option<usize>,
    ) -> PyResult<Self> {
        let required = required_pass.unwrap_or_default();
        let disabled = disabled_pass.unwrap_or_default();
        check_names("required_pass", &required)?;
        check_names("disabled_pass", &disabled)?;
        let mut builder = PassContext::builder().opt_level(opt_level);
        for name in required {
            builder = builder.required_pass(name);
        }
        for name in disabled {
            builder = builder.disabled_pass(name);
        }
        if let Some(config) = config {
            for (key, value) in config.iter() {
                let key: String = key.extract()?;
                builder = builder.config_json(&key, json::to_json(&value)?);
            }
        }
        if let Some(threads) = threads {
            builder = builder.threads(threads);
        }
        let (objects, rust) = Self::instruments_of(py, instruments)?;
        for instrument in rust {
            builder = builder.instrument_arc(instrument);
        }
        let ctx = builder.build().map_err(errors::config)?;
        Ok(PyPassContext {
            ctx,
            instruments: Mutex::new(objects),
        })
    }

    /// The innermost context entered (on any thread of this process that runs passes), or the
    /// default one.
    #[staticmethod]
    fn current(py: Python<'_>) -> PyResult<Py<PyPassContext>> {
        Self::wrap(py, &PassContext::current())
    }

    /// The registered config keys: `{name: {"type": ..., "doc": ...}}`.
    #[staticmethod]
    fn list_configs<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for option in irpass::registry::list_configs() {
            let entry = PyDict::new(py);
            entry.set_item("type", option.type_name)?;
            entry.set_item("doc", option.doc)?;
            out.set_item(option.name, entry)?;
        }
        Ok(out)
    }

    fn __enter__(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
        let py = slf.py();
        let guard = slf
            .get()
            .ctx
            .enter()
            .map_err(|e| errors::context_error(py, e))?;
        GUARDS.with(|g| g.borrow_mut().push(guard));
        ENTERED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(slf.clone().unbind());
        Ok(slf)
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        {
            let mut entered = ENTERED.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(i) = entered.iter().rposition(|o| o.get().ctx.same_as(&self.ctx)) {
                entered.remove(i);
            }
        }
        let guard = GUARDS.with(|g| {
            let mut guards = g.borrow_mut();
            let i = guards
                .iter()
                .rposition(|guard| guard.context().same_as(&self.ctx))?;
            Some(guards.remove(i))
        });
        if let Some(guard) = guard {
            guard.exit().map_err(|e| errors::context_error(py, e))?;
        }
        Ok(false)
    }

    /// Replaces the instruments (the old ones get `exit_pass_ctx`, the new `enter_pass_ctx`).
    fn override_instruments(&self, py: Python<'_>, instruments: &Bound<'_, PyAny>) -> PyResult<()> {
        let (objects, rust) = Self::instruments_of(py, Some(instruments))?;
        *self.instruments.lock().unwrap_or_else(|e| e.into_inner()) = objects;
        self.ctx
            .override_instruments(rust)
            .map_err(|e| errors::context_error(py, e))
    }

    /// The opt level.
    #[getter]
    fn opt_level(&self) -> u32 {
        self.ctx.opt_level()
    }

    /// The passes that run whatever their opt level, sorted.
    #[getter]
    fn required_pass(&self) -> Vec<String> {
        let mut v: Vec<String> = self.ctx.required_passes().map(str::to_string).collect();
        v.sort();
        v
    }

    /// The passes that do not run, sorted.
    #[getter]
    fn disabled_pass(&self) -> Vec<String> {
        let mut v: Vec<String> = self.ctx.disabled_passes().map(str::to_string).collect();
        v.sort();
        v
    }

    /// The instruments, as given.
    #[getter]
    fn instruments<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let objects = self.instruments.lock().unwrap_or_else(|e| e.into_inner());
        PyList::new(py, objects.iter().map(|o| o.clone_ref(py)))
    }

    /// The config values, by key.
    #[getter]
    fn config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json::to_python(py, &self.ctx.config().to_json())
    }

    /// The number of threads function passes may use (`None`: rayon's default).
    #[getter]
    fn threads(&self) -> Option<usize> {
        self.ctx.threads()
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.ctx)
    }
}
