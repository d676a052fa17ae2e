//! The native half of the `irpass` Python package (`irpass._native`): the reference IR's
//! modules, the pass library and the framework's contexts and instruments, for the Python
//! layer in `python/irpass/` to present with TVM's names.
//!
//! Python is called once per pass, per hook or per match, never once per node, and the GIL is
//! released while Rust works.

mod context;
mod errors;
mod instrument;
mod json;
mod module;
mod pass;
mod pattern;
mod rewriter;
mod types;
mod value;
mod view;

use pyo3::prelude::*;

// Names the pass library, so that its registrations are linked into the extension.
use irpass_passes as _;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<module::PyIrModule>()?;
    m.add_class::<module::PyFunction>()?;
    m.add_class::<types::PyType>()?;
    m.add_class::<rewriter::PyRewriter>()?;
    m.add_class::<pass::PyPass>()?;
    m.add_class::<pass::PyPassInfo>()?;
    m.add_class::<context::PyPassContext>()?;
    m.add_class::<instrument::PyNativeInstrument>()?;
    m.add_class::<instrument::PyPassTiming>()?;
    m.add_class::<pattern::PyPattern>()?;
    m.add_class::<pattern::PyNode>()?;
    m.add_class::<pattern::PyMatch>()?;
    m.add_class::<pattern::PyRule>()?;
    m.add_class::<pattern::PyRuleSet>()?;
    m.add_function(wrap_pyfunction!(pattern::wildcard, m)?)?;
    m.add_function(wrap_pyfunction!(pattern::is_op, m)?)?;
    m.add_function(wrap_pyfunction!(pattern::is_var, m)?)?;
    m.add_function(wrap_pyfunction!(pattern::is_constant, m)?)?;
    m.add_function(wrap_pyfunction!(pattern::is_tuple, m)?)?;
    m.add_function(wrap_pyfunction!(pattern::is_tuple_get_item, m)?)?;
    m.add_function(wrap_pyfunction!(pattern::is_if, m)?)?;
    m.add_function(wrap_pyfunction!(pattern::dominates, m)?)?;
    m.add_function(wrap_pyfunction!(pattern::partition, m)?)?;
    m.add_function(wrap_pyfunction!(pass::python_pass, m)?)?;
    m.add_function(wrap_pyfunction!(pass::sequential, m)?)?;
    m.add_function(wrap_pyfunction!(pass::unchanged_function_pass, m)?)?;
    m.add_function(wrap_pyfunction!(pass::lookup, m)?)?;
    m.add_function(wrap_pyfunction!(pass::parse_pipeline, m)?)?;
    m.add_function(wrap_pyfunction!(pass::standard_pipeline, m)?)?;
    m.add_function(wrap_pyfunction!(pass::list_passes, m)?)?;
    m.add_function(wrap_pyfunction!(pass::takes_options, m)?)?;
    m.add_function(wrap_pyfunction!(instrument::lookup_instrument, m)?)?;
    m.add_function(wrap_pyfunction!(instrument::list_instruments, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
