//! numpy arrays in and out of the interpreter. Values cross as bytes in the interpreter's
//! element types (float64, int64, bool), converted by numpy, so the extension needs numpy only
//! where arrays are used and links against no numpy C API (the wheel stays abi3).

use irpass_ir::{DType, Tensor, Value};
use ndarray::{ArrayD, IxDyn};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

/// A tensor value from a numpy array, or from anything `numpy.asarray` takes (a list, a
/// number), which is read as `declared`, the parameter's dtype, when known; an array of
/// strings is a tensor of strings (`irpass_onnx::Strings`).
pub fn from_python(obj: &Bound<'_, PyAny>, declared: Option<DType>) -> PyResult<Value> {
    let py = obj.py();
    let np = py.import("numpy")?;
    let is_array = obj.is_instance(&np.getattr("ndarray")?)?;
    let array = match declared.filter(|_| !is_array) {
        Some(dtype) => np.call_method1("asarray", (obj, dtype.name()))?,
        None => np.call_method1("asarray", (obj,))?,
    };
    let kind: String = array.getattr("dtype")?.getattr("kind")?.extract()?;
    if kind == "U" || kind == "O" {
        return strings_from_python(&array);
    }
    let dtype_name: String = array.getattr("dtype")?.getattr("name")?.extract()?;
    let dtype = DType::from_name(&dtype_name).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "the interpreter takes no arrays of dtype {dtype_name} (it takes {})",
            DType::ALL.map(DType::name).join(", ")
        ))
    })?;
    let shape: Vec<usize> = array.getattr("shape")?.extract()?;
    let wide = if dtype.is_float() {
        "<f8"
    } else if dtype == DType::Bool {
        "bool"
    } else {
        "<i8"
    };
    let contiguous = np.call_method1("ascontiguousarray", (array, wide))?;
    let bytes = contiguous.call_method0("tobytes")?;
    let bytes = bytes.cast::<PyBytes>()?.as_bytes();
    let tensor = if dtype.is_float() {
        Tensor::from_vec(dtype, &shape, bytes_to_f64(bytes)).map_err(PyValueError::new_err)?
    } else if dtype == DType::Bool {
        let data: Vec<bool> = bytes.iter().map(|b| *b != 0).collect();
        let array = ndarray_shape(&shape, data)?;
        Tensor::from_bool(array)
    } else {
        let array = ndarray_shape(&shape, bytes_to_i64(bytes))?;
        Tensor::from_i64(dtype, array)
    };
    Ok(Value::tensor(tensor))
}

fn ndarray_shape<T>(shape: &[usize], data: Vec<T>) -> PyResult<ArrayD<T>> {
    ArrayD::from_shape_vec(IxDyn(shape), data).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A numpy array (a tuple of them for a tuple value; an array of `str` objects for a tensor of
/// strings; `None` or its value for an optional).
pub fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    match value {
        Value::Tensor(t) => tensor_to_python(py, t),
        Value::Tuple(items) => {
            let items = items
                .iter()
                .map(|v| to_python(py, v))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(PyTuple::new(py, items)?.into_any())
        }
        Value::Closure(_) => Err(PyTypeError::new_err(
            "the result is a function value, which has no numpy form",
        )),
        Value::Opaque(v) => {
            if let Some(s) = v.as_any().downcast_ref::<irpass_onnx::Strings>() {
                return strings_to_python(py, s);
            }
            if let Some(o) = v.as_any().downcast_ref::<irpass_onnx::Optional>() {
                return match &o.0 {
                    Some(inner) => to_python(py, inner),
                    None => Ok(py.None().into_bound(py)),
                };
            }
            Err(PyTypeError::new_err(format!(
                "the result is a value of an opaque type ({v}), which has no numpy form"
            )))
        }
    }
}

/// A tensor of strings as a numpy array of `str` objects of its shape.
fn strings_to_python<'py>(
    py: Python<'py>,
    s: &irpass_onnx::Strings,
) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    let items: Vec<&str> = s.0.iter().map(String::as_str).collect();
    let flat = np.call_method1("array", (items, "object"))?;
    flat.call_method1("reshape", (s.0.shape().to_vec(),))
}

/// A tensor of strings from a numpy array of `str` (dtype kind `U`, or `O` holding `str`s).
fn strings_from_python(array: &Bound<'_, PyAny>) -> PyResult<Value> {
    let shape: Vec<usize> = array.getattr("shape")?.extract()?;
    let items: Vec<String> = array
        .call_method0("ravel")?
        .call_method0("tolist")?
        .extract()?;
    let array = ndarray_shape(&shape, items)?;
    Ok(Value::opaque(irpass_onnx::Strings(array)))
}

/// A numpy array of the tensor's dtype (float32 for bfloat16, which numpy lacks) and shape.
pub fn tensor_to_python<'py>(py: Python<'py>, t: &Tensor) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    let (bytes, wide): (Vec<u8>, &str) = match t.data() {
        irpass_ir::TensorData::Float(a) => {
            (a.iter().flat_map(|v| v.to_le_bytes()).collect(), "<f8")
        }
        irpass_ir::TensorData::Int(a) => (a.iter().flat_map(|v| v.to_le_bytes()).collect(), "<i8"),
        irpass_ir::TensorData::Bool(a) => (a.iter().map(|v| u8::from(*v)).collect(), "bool"),
        _ => (
            t.float_values()
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
            "<f8",
        ),
    };
    let flat = np.call_method1("frombuffer", (PyBytes::new(py, &bytes), wide))?;
    // numpy has no bfloat16, float8, float4, 4- or 2-bit integers: such a tensor comes back
    // in the narrowest numpy type that holds its values exactly.
    let name = match t.dtype() {
        DType::Int4 | DType::Int2 => "int8",
        DType::UInt4 | DType::UInt2 => "uint8",
        d if d.is_float() && d.bits() < 32 && d != DType::Float16 => "float32",
        d => d.name(),
    };
    let typed = flat.call_method1("astype", (name,))?;
    typed.call_method1("reshape", (PyTuple::new(py, t.shape())?,))
}

fn bytes_to_f64(bytes: &[u8]) -> Vec<f64> {
    let mut word = [0u8; 8];
    bytes
        .chunks_exact(8)
        .map(|c| {
            word.copy_from_slice(c);
            f64::from_le_bytes(word)
        })
        .collect()
}

fn bytes_to_i64(bytes: &[u8]) -> Vec<i64> {
    let mut word = [0u8; 8];
    bytes
        .chunks_exact(8)
        .map(|c| {
            word.copy_from_slice(c);
            i64::from_le_bytes(word)
        })
        .collect()
}
