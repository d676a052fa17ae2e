//! The exception classes of `irpass.errors`, and how Rust errors become them.
//!
//! Every error the package raises is an [`IrpassError`]; a failure inside a pass is a
//! [`PassError`] naming the pass, and an exception that Python code raised inside a pass or an
//! instrument is kept as that error's `__cause__`, traceback included.

use std::error::Error;

use irpass::{ContextError as RustContextError, FailureCause, PassError as RustPassError};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::module::PyIrModule;

pyo3::create_exception!(
    irpass.errors,
    IrpassError,
    PyException,
    "The base class of every error irpass raises."
);
pyo3::create_exception!(
    irpass.errors,
    IrError,
    IrpassError,
    "A program of the reference IR that does not parse, type-check or evaluate; `kind` says which \
     (`parse`, `type`, `well_formed`, `eval`), `str()` shows the source lines."
);
pyo3::create_exception!(
    irpass.errors,
    PassError,
    IrpassError,
    "A pass or an instrument failed while passes ran. `pass_name` and `path` name it, `module` is \
     the last module that was good, and an exception raised by Python code is the `__cause__`."
);
pyo3::create_exception!(
    irpass.errors,
    ContextError,
    IrpassError,
    "An instrument failed as a pass context was entered or left."
);
pyo3::create_exception!(
    irpass.errors,
    ConfigError,
    IrpassError,
    "An unknown config key or a value of the wrong type."
);
pyo3::create_exception!(
    irpass.errors,
    RegistryError,
    IrpassError,
    "An unknown pass or instrument name, or options a pass does not take."
);
pyo3::create_exception!(
    irpass.errors,
    PipelineError,
    IrpassError,
    "Pipeline text that does not parse."
);
pyo3::create_exception!(
    irpass.errors,
    OnnxError,
    IrpassError,
    "An ONNX model that cannot be read, imported or written."
);

/// Adds the exception classes to `m`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("IrpassError", py.get_type::<IrpassError>())?;
    m.add("IrError", py.get_type::<IrError>())?;
    m.add("PassError", py.get_type::<PassError>())?;
    m.add("ContextError", py.get_type::<ContextError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("RegistryError", py.get_type::<RegistryError>())?;
    m.add("PipelineError", py.get_type::<PipelineError>())?;
    m.add("OnnxError", py.get_type::<OnnxError>())?;
    Ok(())
}

/// The Python exception an error of the reference IR becomes.
pub fn ir_error(py: Python<'_>, err: &irpass_ir::IrError) -> PyErr {
    let e = IrError::new_err(err.render().trim_end().to_string());
    let kind = match err.kind {
        irpass_ir::ErrorKind::Parse => "parse",
        irpass_ir::ErrorKind::Type => "type",
        irpass_ir::ErrorKind::WellFormed => "well_formed",
        irpass_ir::ErrorKind::Eval => "eval",
    };
    let _ = e.value(py).setattr("kind", kind);
    e
}

/// Maps a reference-IR error.
pub fn ir(err: irpass_ir::IrError) -> PyErr {
    Python::attach(|py| ir_error(py, &err))
}

/// Maps an ONNX error.
pub fn onnx(err: irpass_onnx::OnnxError) -> PyErr {
    OnnxError::new_err(err.to_string())
}

/// Maps a config error.
pub fn config(err: irpass::ConfigError) -> PyErr {
    ConfigError::new_err(err.to_string())
}

/// Maps a registry error.
pub fn registry(err: impl std::fmt::Display) -> PyErr {
    RegistryError::new_err(err.to_string())
}

/// The Python exception inside an error's chain, if Python code raised it.
pub fn python_cause(py: Python<'_>, err: &(dyn Error + 'static)) -> Option<PyErr> {
    let mut next: Option<&(dyn Error + 'static)> = Some(err);
    while let Some(e) = next {
        if let Some(raised) = e.downcast_ref::<PyErr>() {
            return Some(raised.clone_ref(py));
        }
        next = e.source();
    }
    None
}

fn cause_of(py: Python<'_>, cause: &FailureCause) -> Option<PyErr> {
    match cause {
        FailureCause::Error(e) => python_cause(py, e.as_ref()),
        _ => None,
    }
}

/// A failed run: a `PassError` carrying the pass's name and path, the last good module, and the
/// Python exception that caused it as `__cause__`.
pub fn pass_error(py: Python<'_>, err: RustPassError<irpass_ir::Module>) -> PyErr {
    let e = PassError::new_err(err.to_string());
    let value = e.value(py);
    let _ = value.setattr("pass_name", err.pass_name());
    let _ = value.setattr("path", PyList::new(py, err.path()).ok());
    let _ = value.setattr("is_panic", err.is_panic());
    if let Some(cause) = cause_of(py, err.cause()) {
        e.set_cause(py, Some(cause));
    }
    let module = PyIrModule::new(err.into_module());
    if let Ok(module) = Py::new(py, module) {
        let _ = value.setattr("module", module);
    }
    e
}

/// A failed enter or exit of a context: a `ContextError`, the first Python exception as cause.
pub fn context_error(py: Python<'_>, err: RustContextError) -> PyErr {
    let e = ContextError::new_err(err.to_string());
    let first = match &err {
        RustContextError::Hook { first, .. } => cause_of(py, &first.cause),
        RustContextError::OutOfOrder { also, .. } => {
            also.first().and_then(|h| cause_of(py, &h.cause))
        }
    };
    if let Some(cause) = first {
        e.set_cause(py, Some(cause));
    }
    e
}
