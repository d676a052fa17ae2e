//! `irpass.transform`'s passes: handles on Rust passes, passes written in Python, Sequential,
//! the registry and pipeline text.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use irpass::{
    BoxError, FunctionPass, ModulePass, Pass, PassContext, PassInfo, PassKind, Sequential,
};
use irpass_ir::{Function, Module};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rustc_hash::FxHashSet;

use crate::context::PyPassContext;
use crate::module::{PyFunction, PyIrModule};
use crate::rewriter::PyRewriter;
use crate::{errors, json};

/// Names of the passes built from Python (functions, classes, Sequentials): with the registry's,
/// the names a context's `required_pass` and `disabled_pass` may use.
static PYTHON_NAMES: Mutex<Option<FxHashSet<String>>> = Mutex::new(None);

fn python_names() -> MutexGuard<'static, Option<FxHashSet<String>>> {
    PYTHON_NAMES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records `name` as a pass built from Python.
pub fn remember(name: &str) {
    python_names()
        .get_or_insert_with(FxHashSet::default)
        .insert(name.to_string());
}

/// Every pass name a context may refer to: the registry's and those of passes built so far.
pub fn known_names() -> Vec<String> {
    let mut names: Vec<String> = irpass::registry::passes::<Module>()
        .iter()
        .map(|r| r.info.name.to_string())
        .collect();
    if let Some(own) = python_names().as_ref() {
        names.extend(own.iter().cloned());
    }
    names
}

/// A pass: call it on a module (`p(mod)`) to run it under the current `PassContext`.
#[pyclass(frozen, subclass, module = "irpass.transform", name = "Pass")]
pub struct PyPass {
    /// The pass.
    pub pass: Pass<Module>,
}

#[pymethods]
impl PyPass {
    /// A handle on the same pass (how the Python subclasses wrap a pass the extension built).
    #[new]
    fn new(handle: PyRef<'_, PyPass>) -> Self {
        PyPass {
            pass: handle.pass.clone(),
        }
    }

    /// The pass's name, opt level, requirements and kind.
    #[getter]
    fn info(&self) -> PyPassInfo {
        PyPassInfo {
            info: self.pass.info().clone(),
        }
    }

    /// The passes of a Sequential, in order (empty for other passes).
    #[getter]
    fn passes(&self) -> Vec<PyPass> {
        self.pass
            .passes()
            .map(|p| PyPass { pass: p.clone() })
            .collect()
    }

    /// Runs the pass on `module` under the current context; the GIL is released while Rust
    /// works. A failure raises `PassError`.
    fn __call__(&self, py: Python<'_>, module: &PyIrModule) -> PyResult<PyIrModule> {
        let input = module.get();
        let pass = self.pass.clone();
        py.detach(move || pass.run(input))
            .map(PyIrModule::new)
            .map_err(|e| errors::pass_error(py, e))
    }

    fn __repr__(&self) -> String {
        format!("<irpass.transform.Pass {}>", self.pass.info())
    }
}

/// A pass's metadata (TVM's `PassInfo(opt_level, name, required)`).
#[pyclass(frozen, module = "irpass.transform", name = "PassInfo")]
pub struct PyPassInfo {
    /// The metadata.
    pub info: PassInfo,
}

#[pymethods]
impl PyPassInfo {
    /// Metadata for a module pass.
    #[new]
    #[pyo3(signature = (opt_level, name, required = None))]
    fn new(opt_level: u32, name: String, required: Option<Vec<String>>) -> Self {
        PyPassInfo {
            info: PassInfo::new(name, opt_level, PassKind::Module)
                .with_required(required.unwrap_or_default()),
        }
    }

    /// The name.
    #[getter]
    fn name(&self) -> &str {
        &self.info.name
    }

    /// The lowest context opt level at which a Sequential runs the pass.
    #[getter]
    fn opt_level(&self) -> u32 {
        self.info.opt_level
    }

    /// The passes that must run before it.
    #[getter]
    fn required(&self) -> Vec<String> {
        self.info.required_names().map(str::to_string).collect()
    }

    /// `"module"`, `"function"` or `"sequential"`.
    #[getter]
    fn kind(&self) -> &'static str {
        kind_name(self.info.kind)
    }

    /// What the pass does.
    #[getter]
    fn description(&self) -> &str {
        &self.info.description
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyPassInfo>()
            .is_ok_and(|o| o.get().info == self.info)
    }

    fn __repr__(&self) -> String {
        format!("<irpass.transform.PassInfo {}>", self.info)
    }
}

/// A pass kind as Python names it.
fn kind_name(kind: PassKind) -> &'static str {
    match kind {
        PassKind::Module => "module",
        PassKind::Function => "function",
        PassKind::Sequential => "sequential",
    }
}

fn info_for(kind: PassKind, name: String, opt_level: u32, required: Vec<String>) -> PassInfo {
    PassInfo::new(name, opt_level, kind).with_required(required)
}

/// A module pass whose body is a Python callable `(mod, ctx) -> mod`.
struct PythonModulePass {
    info: PassInfo,
    func: Py<PyAny>,
}

impl ModulePass<Module> for PythonModulePass {
    fn info(&self) -> &PassInfo {
        &self.info
    }

    fn transform_module(&self, module: Module, ctx: &PassContext) -> irpass::Result<Module> {
        Python::attach(|py| {
            let ctx = PyPassContext::wrap(py, ctx)?;
            let out = self.func.call1(py, (PyIrModule::new(module), ctx))?;
            let out = out.bind(py);
            match out.cast::<PyIrModule>() {
                Ok(m) => Ok(m.get().get()),
                Err(_) => Err(PyTypeError::new_err(format!(
                    "module pass `{}` returned {}, not an irpass.ir.Module",
                    self.info.name,
                    type_name(out)
                ))),
            }
        })
        .map_err(|e: PyErr| Box::new(e) as BoxError)
    }
}

/// A function pass whose body is a Python callable `(func, mod, ctx) -> func`; `None` keeps
/// the function.
struct PythonFunctionPass {
    info: PassInfo,
    func: Py<PyAny>,
    /// Where the last function was found in its module: the functions come in module order,
    /// so the next one is usually just after it.
    next: AtomicUsize,
}

impl PythonFunctionPass {
    /// The name `func` has in `module` (found in O(1) when functions come in order).
    fn name_of(&self, module: &Module, func: &Function) -> String {
        let hint = self.next.load(Ordering::Relaxed);
        let at = |i: usize| {
            module
                .iter()
                .nth(i)
                .filter(|(_, f)| Function::ptr_eq(f, func))
        };
        let found = at(hint).map(|(n, _)| (hint, n)).or_else(|| {
            module
                .iter()
                .enumerate()
                .find(|(_, (_, f))| Function::ptr_eq(f, func))
                .map(|(i, (n, _))| (i, n))
        });
        match found {
            Some((i, name)) => {
                self.next.store(i + 1, Ordering::Relaxed);
                name.to_string()
            }
            None => String::new(),
        }
    }
}

impl FunctionPass<Module> for PythonFunctionPass {
    fn info(&self) -> &PassInfo {
        &self.info
    }

    /// One function after the other: calls into Python take turns on the GIL anyway, and
    /// threads handing it back and forth cost more than the calls (BENCHMARKS.md, "The Python
    /// package", has the figures).
    fn parallel(&self) -> bool {
        false
    }

    fn transform_function(
        &self,
        func: Function,
        module: &Module,
        ctx: &PassContext,
    ) -> irpass::Result<Function> {
        let name = self.name_of(module, &func);
        let new = Python::attach(|py| {
            let ctx = PyPassContext::wrap(py, ctx)?;
            let arg = PyFunction::new(&name, func.clone());
            let out = self
                .func
                .call1(py, (arg, PyIrModule::new(module.clone()), ctx))?;
            let out = out.bind(py);
            if out.is_none() {
                return Ok(None);
            }
            if let Ok(rw) = out.cast::<PyRewriter>() {
                return rw.get().apply().map(Some);
            }
            match out.cast::<PyFunction>() {
                Ok(f) => Ok(Some(f.get().function.clone())),
                Err(_) => Err(PyTypeError::new_err(format!(
                    "function pass `{}` returned {} for @{name}, not an irpass.ir.Function, a \
                     Rewriter or None",
                    self.info.name,
                    type_name(out)
                ))),
            }
        })
        .map_err(|e: PyErr| Box::new(e) as BoxError)?;
        let Some(new) = new.filter(|new| !Function::ptr_eq(new, &func)) else {
            return Ok(func);
        };
        // What Python built is checked here, so that a mistake is this pass's error.
        if !name.is_empty() {
            let mut checked = module.clone();
            checked.replace(&name, new.clone());
            checked.types_of(&name)?;
        }
        Ok(new)
    }
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "an object".to_string(), |n| format!("a {n}"))
}

/// A pass whose body is Python: `kind` is `"module"` (`func(mod, ctx)`) or `"function"`
/// (`func(func, mod, ctx)`).
#[pyfunction]
#[pyo3(signature = (kind, func, name, opt_level, required = None, description = None))]
pub fn python_pass(
    kind: &str,
    func: Py<PyAny>,
    name: String,
    opt_level: u32,
    required: Option<Vec<String>>,
    description: Option<String>,
) -> PyResult<PyPass> {
    let required = required.unwrap_or_default();
    let description = description.unwrap_or_default();
    remember(&name);
    let pass = match kind {
        "module" => Pass::module(PythonModulePass {
            info: info_for(PassKind::Module, name, opt_level, required)
                .with_description(description),
            func,
        }),
        "function" => Pass::function(PythonFunctionPass {
            info: info_for(PassKind::Function, name, opt_level, required)
                .with_description(description),
            func,
            next: AtomicUsize::new(0),
        }),
        other => {
            return Err(PyValueError::new_err(format!(
                "a pass kind is \"module\" or \"function\", not {other:?}"
            )));
        }
    };
    pass.check_requirements().map_err(errors::registry)?;
    Ok(PyPass { pass })
}

/// A Rust function pass that returns every function as it is: the baseline against which
/// the cost of a function pass written in Python is measured.
struct Unchanged(PassInfo);

impl FunctionPass<Module> for Unchanged {
    fn info(&self) -> &PassInfo {
        &self.0
    }

    fn transform_function(
        &self,
        func: Function,
        _module: &Module,
        _ctx: &PassContext,
    ) -> irpass::Result<Function> {
        Ok(func)
    }
}

/// A function pass, written in Rust, that leaves every function as it is (a baseline for
/// benchmarks of Python passes).
#[pyfunction]
#[pyo3(signature = (opt_level = 0))]
pub fn unchanged_function_pass(opt_level: u32) -> PyPass {
    PyPass {
        pass: Pass::function(Unchanged(PassInfo::new(
            "Unchanged",
            opt_level,
            PassKind::Function,
        ))),
    }
}

/// A Sequential of `passes` (TVM's `Sequential(passes, opt_level, name, required)`).
#[pyfunction]
#[pyo3(signature = (passes, opt_level = 0, name = "sequential".to_string(), required = None))]
pub fn sequential(
    passes: Vec<PyRef<'_, PyPass>>,
    opt_level: u32,
    name: String,
    required: Option<Vec<String>>,
) -> PyResult<PyPass> {
    remember(&name);
    let info = info_for(
        PassKind::Sequential,
        name,
        opt_level,
        required.unwrap_or_default(),
    );
    let steps: Vec<Pass<Module>> = passes.iter().map(|p| p.pass.clone()).collect();
    let seq = Sequential::with_info(info, steps).map_err(errors::registry)?;
    Ok(PyPass { pass: seq.into() })
}

/// The registered pass `name`, built with `options` (a dict, as `Name{key=value}` in pipeline
/// text) when given.
#[pyfunction]
#[pyo3(signature = (name, options = None))]
pub fn lookup(name: &str, options: Option<&Bound<'_, PyDict>>) -> PyResult<PyPass> {
    let pass = match options.filter(|o| !o.is_empty()) {
        None => irpass::registry::lookup::<Module>(name),
        Some(options) => {
            let json = json::to_json(options.as_any())?;
            irpass::registry::lookup_with_options::<Module>(name, &json)
        }
    };
    pass.map(|pass| PyPass { pass }).map_err(errors::registry)
}

/// The pass that pipeline text describes (`"FoldConstant,opt(SimplifyExpr,DeadCodeElimination)"`,
/// `"O3"`), as `irpass-opt -p` reads it.
#[pyfunction]
pub fn parse_pipeline(text: &str) -> PyResult<PyPass> {
    let spec =
        irpass::pipeline::parse(text).map_err(|e| errors::PipelineError::new_err(e.to_string()))?;
    let pass = spec.build::<Module>().map_err(errors::registry)?;
    Ok(PyPass { pass })
}

/// The standard pipeline at opt level `level` (0 to 3): what `irpass-opt -O<level>` runs.
#[pyfunction]
pub fn standard_pipeline(level: u32) -> PyResult<PyPass> {
    if level > 3 {
        return Err(PyValueError::new_err(format!(
            "the standard pipelines are O0 to O3, not O{level}"
        )));
    }
    Ok(PyPass {
        pass: irpass_passes::pipeline(level).into(),
    })
}

/// The registered passes: `(name, kind, opt_level, description)`, sorted by name.
#[pyfunction]
pub fn list_passes() -> Vec<(String, &'static str, u32, String)> {
    irpass::registry::passes::<Module>()
        .iter()
        .map(|r| {
            (
                r.info.name.to_string(),
                kind_name(r.info.kind),
                r.info.opt_level,
                r.info.description.to_string(),
            )
        })
        .collect()
}

/// Whether the registered pass `name` can be built without options.
#[pyfunction]
pub fn takes_options(name: &str) -> Option<(bool, bool)> {
    irpass::registry::passes::<Module>()
        .iter()
        .find(|r| r.info.name == name)
        .map(|r| (r.create.is_some(), r.with_options.is_some()))
}
