//! Tensor values: constants in the IR and values in the interpreter.

mod permute;

use std::borrow::Cow;
use std::fmt;
use std::hash::{Hash, Hasher};

use bytes::Bytes;
use ndarray::{ArrayD, IxDyn};

use super::{DType, TensorType};

/// The elements of a tensor, stored by kind: floats as `f64` (rounded to the dtype's precision),
/// integers as `i64` (wrapped to the dtype's width), booleans as `bool`; float32 tensors read
/// from a model may keep their `f32`s ([`Tensor::from_f32`]), half the memory. The two float
/// forms of the same values are equal and hash alike.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum TensorData {
    /// float16/32/64 elements.
    Float(ArrayD<f64>),
    /// float32 elements kept as `f32`.
    Float32(ArrayD<f32>),
    /// float32 elements still in the little-endian bytes they were read from, shared with
    /// their source (a model file's buffer): nothing is copied until they are computed with.
    Float32Le(F32Le),
    /// int8/16/32/64 and uint8 elements.
    Int(ArrayD<i64>),
    /// bool elements.
    Bool(ArrayD<bool>),
}

/// float32 elements as little-endian bytes shared with their source ([`Tensor::from_f32_le`]).
#[derive(Clone, Debug)]
pub struct F32Le {
    bytes: Bytes,
    shape: Vec<usize>,
}

impl F32Le {
    /// The bytes (4 per element, row-major).
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// The elements, row-major.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = f32> + '_ {
        self.bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
    }

    /// The element at row-major position `i`.
    ///
    /// # Panics
    /// When `i` is not below the number of elements.
    pub fn get(&self, i: usize) -> f32 {
        let c = &self.bytes[4 * i..4 * i + 4];
        f32::from_le_bytes([c[0], c[1], c[2], c[3]])
    }

    /// The elements as an array.
    pub fn to_array(&self) -> ArrayD<f32> {
        ArrayD::from_shape_vec(IxDyn(&self.shape), self.iter().collect())
            .expect("the length was checked when it was made")
    }
}

/// A tensor: dtype and elements (the shape is the array's).
#[derive(Clone, Debug)]
pub struct Tensor {
    dtype: DType,
    data: TensorData,
}

impl Tensor {
    /// A tensor of `dtype` from float data, rounded/wrapped/converted to the dtype.
    pub fn from_f64(dtype: DType, mut data: ArrayD<f64>) -> Tensor {
        let data = if dtype.is_float() {
            data.mapv_inplace(|v| dtype.round_float(v));
            TensorData::Float(data)
        } else if dtype == DType::Bool {
            TensorData::Bool(data.mapv(|v| v != 0.0))
        } else {
            TensorData::Int(data.mapv(|v| dtype.wrap_int(float_to_i64(v))))
        };
        Tensor { dtype, data }
    }

    /// A float32 tensor of `shape` from row-major `f32` values, stored as they are (no
    /// conversion to `f64`: a model's weights take the memory they take in the file).
    ///
    /// # Errors
    /// When the number of values does not match the shape.
    pub fn from_f32(shape: &[usize], values: Vec<f32>) -> Result<Tensor, String> {
        let data = ArrayD::from_shape_vec(IxDyn(shape), values).map_err(|e| e.to_string())?;
        Ok(Tensor {
            dtype: DType::Float32,
            data: TensorData::Float32(data),
        })
    }

    /// A float32 tensor of `shape` whose elements are the little-endian `bytes` (4 per
    /// element), kept as they are: a view of its source (a model file's buffer) that costs no
    /// memory of its own and is written back without a copy ([`Tensor::f32_le_bytes`]).
    ///
    /// # Errors
    /// When the number of bytes is not 4 per element of the shape.
    pub fn from_f32_le(shape: &[usize], bytes: Bytes) -> Result<Tensor, String> {
        let n: usize = shape.iter().product();
        if bytes.len() != n * 4 {
            return Err(format!(
                "a float32 tensor of shape {shape:?} takes {} bytes, {} given",
                n * 4,
                bytes.len()
            ));
        }
        Ok(Tensor {
            dtype: DType::Float32,
            data: TensorData::Float32Le(F32Le {
                bytes,
                shape: shape.to_vec(),
            }),
        })
    }

    /// The same tensor in less memory, if it has a smaller form: a float32 tensor of at least
    /// [`Tensor::COMPACT_ELEMENTS`] elements held as `f64` (a folded constant) becomes `f32`s,
    /// half the memory, equal and hashed alike. Smaller tensors stay as they are: the kernels
    /// read `f64`s in place, and a constant folded again would be converted back each time.
    pub fn compacted(&self) -> Option<Tensor> {
        match &self.data {
            TensorData::Float(a)
                if self.dtype == DType::Float32 && a.len() >= Self::COMPACT_ELEMENTS =>
            {
                Some(Tensor {
                    dtype: DType::Float32,
                    data: TensorData::Float32(a.as_standard_layout().mapv(|v| v as f32)),
                })
            }
            _ => None,
        }
    }

    /// The size from which [`Tensor::compacted`] stores float32 tensors as `f32`s: 4096
    /// elements (16 KiB), above the 1024-element results `FoldConstant` expands by default,
    /// below the weights of a convolution layer.
    pub const COMPACT_ELEMENTS: usize = 4096;

    /// The little-endian bytes of a tensor made by [`Tensor::from_f32_le`].
    pub fn f32_le_bytes(&self) -> Option<&Bytes> {
        match &self.data {
            TensorData::Float32Le(le) => Some(&le.bytes),
            _ => None,
        }
    }

    /// The elements as a row-major `f32` slice, if stored that way ([`Tensor::from_f32`]).
    pub fn f32_slice(&self) -> Option<&[f32]> {
        match &self.data {
            TensorData::Float32(a) => a.as_slice(),
            _ => None,
        }
    }

    /// A tensor of `dtype` from integer data.
    pub fn from_i64(dtype: DType, data: ArrayD<i64>) -> Tensor {
        let data = if dtype.is_float() {
            TensorData::Float(data.mapv(|v| dtype.round_float(v as f64)))
        } else if dtype == DType::Bool {
            TensorData::Bool(data.mapv(|v| v != 0))
        } else {
            TensorData::Int(data.mapv(|v| dtype.wrap_int(v)))
        };
        Tensor { dtype, data }
    }

    /// A boolean tensor.
    pub fn from_bool(data: ArrayD<bool>) -> Tensor {
        Tensor {
            dtype: DType::Bool,
            data: TensorData::Bool(data),
        }
    }

    /// A tensor of `dtype` and `shape` from row-major float values.
    ///
    /// # Errors
    /// When the number of values does not match the shape.
    pub fn from_vec(dtype: DType, shape: &[usize], values: Vec<f64>) -> Result<Tensor, String> {
        let n: usize = shape.iter().product();
        if values.len() != n {
            return Err(format!(
                "a tensor of shape {shape:?} has {n} elements, {} given",
                values.len()
            ));
        }
        let data = ArrayD::from_shape_vec(IxDyn(shape), values).map_err(|e| e.to_string())?;
        Ok(Tensor::from_f64(dtype, data))
    }

    /// A scalar.
    pub fn scalar(dtype: DType, value: f64) -> Tensor {
        Tensor::from_f64(dtype, ArrayD::from_elem(IxDyn(&[]), value))
    }

    /// An integer scalar (exact for all of int64).
    pub fn scalar_i64(dtype: DType, value: i64) -> Tensor {
        Tensor::from_i64(dtype, ArrayD::from_elem(IxDyn(&[]), value))
    }

    /// A tensor of `shape` filled with `value`.
    pub fn full(dtype: DType, shape: &[usize], value: f64) -> Tensor {
        // The value converted to the dtype once, as `from_f64` converts each element.
        let shape = IxDyn(shape);
        let data = if dtype.is_float() {
            TensorData::Float(ArrayD::from_elem(shape, dtype.round_float(value)))
        } else if dtype == DType::Bool {
            TensorData::Bool(ArrayD::from_elem(shape, value != 0.0))
        } else {
            TensorData::Int(ArrayD::from_elem(
                shape,
                dtype.wrap_int(float_to_i64(value)),
            ))
        };
        Tensor { dtype, data }
    }

    /// The dtype.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        match &self.data {
            TensorData::Float(a) => a.shape(),
            TensorData::Float32(a) => a.shape(),
            TensorData::Float32Le(le) => &le.shape,
            TensorData::Int(a) => a.shape(),
            TensorData::Bool(a) => a.shape(),
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.shape().iter().product()
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The tensor's type.
    pub fn tensor_type(&self) -> TensorType {
        let shape: Vec<i64> = self.shape().iter().map(|&d| d as i64).collect();
        TensorType::new(&shape, self.dtype)
    }

    /// The elements.
    pub fn data(&self) -> &TensorData {
        &self.data
    }

    /// The elements as floats (integers and booleans converted).
    pub fn to_f64(&self) -> ArrayD<f64> {
        match &self.data {
            TensorData::Float(a) => a.clone(),
            TensorData::Float32(a) => a.mapv(f64::from),
            TensorData::Float32Le(le) => le.to_array().mapv(f64::from),
            TensorData::Int(a) => a.mapv(|v| v as f64),
            TensorData::Bool(a) => a.mapv(|v| if v { 1.0 } else { 0.0 }),
        }
    }

    /// The elements as integers (floats truncated toward zero, booleans 0/1).
    pub fn to_i64(&self) -> ArrayD<i64> {
        match &self.data {
            TensorData::Float(a) => a.mapv(float_to_i64),
            TensorData::Float32(a) => a.mapv(|v| float_to_i64(f64::from(v))),
            TensorData::Float32Le(le) => le.to_array().mapv(|v| float_to_i64(f64::from(v))),
            TensorData::Int(a) => a.clone(),
            TensorData::Bool(a) => a.mapv(i64::from),
        }
    }

    /// The elements as booleans (non-zero is true).
    pub fn to_bool(&self) -> ArrayD<bool> {
        match &self.data {
            TensorData::Float(a) => a.mapv(|v| v != 0.0),
            TensorData::Float32(a) => a.mapv(|v| v != 0.0),
            TensorData::Float32Le(le) => le.to_array().mapv(|v| v != 0.0),
            TensorData::Int(a) => a.mapv(|v| v != 0),
            TensorData::Bool(a) => a.clone(),
        }
    }

    /// The elements as floats, row-major.
    pub fn values(&self) -> Vec<f64> {
        self.float_values().into_owned()
    }

    /// The elements as floats, row-major, borrowed when they are stored as floats in that
    /// order (no copy; what the kernels read), converted otherwise.
    pub fn float_values(&self) -> Cow<'_, [f64]> {
        match &self.data {
            TensorData::Float(a) => match a.as_slice() {
                Some(s) => Cow::Borrowed(s),
                None => Cow::Owned(a.iter().copied().collect()),
            },
            TensorData::Float32(a) => {
                let mut v = Vec::with_capacity(a.len());
                row_major(a, |x| v.push(f64::from(x)));
                Cow::Owned(v)
            }
            TensorData::Float32Le(le) => Cow::Owned(le.iter().map(f64::from).collect()),
            _ => Cow::Owned(self.to_f64().iter().copied().collect()),
        }
    }

    /// The largest magnitude among the elements (0 for an empty tensor; NaNs are passed
    /// over), read in the dtype they are stored in: no float copy of a large weight is made.
    pub fn max_abs(&self) -> f64 {
        let top = |m: f64, v: f64| m.max(v.abs());
        match &self.data {
            TensorData::Float(a) => a.iter().fold(0.0, |m, &v| top(m, v)),
            TensorData::Float32(a) => f64::from(a.iter().fold(0.0f32, |m, &v| m.max(v.abs()))),
            TensorData::Float32Le(le) => f64::from(le.iter().fold(0.0f32, |m, v| m.max(v.abs()))),
            TensorData::Int(a) => a.iter().fold(0.0, |m, &v| top(m, v as f64)),
            TensorData::Bool(a) => f64::from(u8::from(a.iter().any(|&b| b))),
        }
    }

    /// The only element of a one-element tensor, as a float.
    pub fn scalar_value(&self) -> Option<f64> {
        (self.len() == 1).then(|| self.to_f64().iter().next().copied().unwrap_or(0.0))
    }

    /// The same values in another dtype (`cast`): floats to integers truncate toward zero
    /// and wrap, floats to floats round as [`DType::cast_float`] does.
    pub fn cast(&self, dtype: DType) -> Tensor {
        match &self.data {
            TensorData::Int(a) => Tensor::from_i64(dtype, a.clone()),
            TensorData::Bool(a) if dtype == DType::Bool => Tensor::from_bool(a.clone()),
            _ if dtype.is_int() => Tensor::from_i64(dtype, self.to_i64()),
            _ if dtype.is_float() => {
                Tensor::from_f64(dtype, self.to_f64().mapv(|v| dtype.cast_float(v)))
            }
            _ => Tensor::from_f64(dtype, self.to_f64()),
        }
    }

    /// The same elements with a new shape (same count).
    ///
    /// # Errors
    /// When the element counts differ.
    pub fn reshape(&self, shape: &[usize]) -> Result<Tensor, String> {
        fn re<T: Clone>(a: &ArrayD<T>, shape: &[usize]) -> Result<ArrayD<T>, String> {
            let v: Vec<T> = a.iter().cloned().collect();
            ArrayD::from_shape_vec(IxDyn(shape), v).map_err(|e| e.to_string())
        }
        let data = match &self.data {
            TensorData::Float(a) => TensorData::Float(re(a, shape)?),
            TensorData::Float32(a) => TensorData::Float32(re(a, shape)?),
            TensorData::Float32Le(le) => {
                if shape.iter().product::<usize>() != le.iter().len() {
                    return Err(format!(
                        "cannot reshape {} elements to {shape:?}",
                        le.iter().len()
                    ));
                }
                TensorData::Float32Le(F32Le {
                    bytes: le.bytes.clone(),
                    shape: shape.to_vec(),
                })
            }
            TensorData::Int(a) => TensorData::Int(re(a, shape)?),
            TensorData::Bool(a) => TensorData::Bool(re(a, shape)?),
        };
        Ok(Tensor {
            dtype: self.dtype,
            data,
        })
    }

    /// Applies an axis permutation (`transpose`): output axis `i` is input axis `axes[i]`.
    ///
    /// A permutation that moves whole blocks of axes (a matrix transpose, or a batch of them)
    /// is copied tile by tile; others element by element.
    pub fn permute(&self, axes: &[usize]) -> Tensor {
        fn permuted<T: Copy + Default>(
            a: &ArrayD<T>,
            axes: &[usize],
            shape: &[usize],
            batched: Option<permute::Batched>,
        ) -> ArrayD<T> {
            match (batched, a.as_slice()) {
                (Some(b), Some(src)) => ArrayD::from_shape_vec(IxDyn(shape), b.apply(src))
                    .expect("a permutation keeps the element count"),
                _ => a
                    .view()
                    .permuted_axes(IxDyn(axes))
                    .as_standard_layout()
                    .into_owned(),
            }
        }
        let batched = permute::as_batched_transpose(self.shape(), axes);
        let shape: Vec<usize> = axes.iter().map(|&i| self.shape()[i]).collect();
        let data = match &self.data {
            TensorData::Float(a) => TensorData::Float(permuted(a, axes, &shape, batched)),
            TensorData::Float32(a) => TensorData::Float32(permuted(a, axes, &shape, batched)),
            TensorData::Float32Le(le) => match batched {
                // The little-endian bytes move four at a time: the result stays bytes.
                Some(b) => {
                    let elements: &[[u8; 4]] = bytemuck::cast_slice(&le.bytes);
                    TensorData::Float32Le(F32Le {
                        bytes: permute::transposed_bytes(b, elements),
                        shape,
                    })
                }
                None => TensorData::Float32(permuted(&le.to_array(), axes, &shape, None)),
            },
            TensorData::Int(a) => TensorData::Int(permuted(a, axes, &shape, batched)),
            TensorData::Bool(a) => TensorData::Bool(permuted(a, axes, &shape, batched)),
        };
        Tensor {
            dtype: self.dtype,
            data,
        }
    }

    /// Whether both have the same dtype, shape and bit-identical elements.
    pub fn bit_eq(&self, other: &Tensor) -> bool {
        if self.dtype != other.dtype || self.shape() != other.shape() {
            return false;
        }
        match (&self.data, &other.data) {
            (TensorData::Float(a), TensorData::Float(b)) => a
                .iter()
                .zip(b.iter())
                .all(|(x, y)| x.to_bits() == y.to_bits()),
            (TensorData::Float32(a), TensorData::Float32(b)) => a
                .iter()
                .zip(b.iter())
                .all(|(x, y)| x.to_bits() == y.to_bits()),
            (TensorData::Float32Le(a), TensorData::Float32Le(b)) => a.bytes == b.bytes,
            (
                TensorData::Float(_) | TensorData::Float32(_) | TensorData::Float32Le(_),
                TensorData::Float(_) | TensorData::Float32(_) | TensorData::Float32Le(_),
            ) => self
                .float_values()
                .iter()
                .zip(other.float_values().iter())
                .all(|(x, y)| x.to_bits() == y.to_bits()),
            (TensorData::Int(a), TensorData::Int(b)) => a == b,
            (TensorData::Bool(a), TensorData::Bool(b)) => a == b,
            _ => false,
        }
    }

    /// Hashes dtype, shape and the bits of at most 64 elements (`HASHED_ELEMENTS`): the first
    /// and the last 32 (consistent with [`Tensor::bit_eq`]: bit-equal tensors hash alike). A
    /// large weight costs a few reads at its two ends, not a pass over its bytes (nor, for a
    /// weight mapped from a file, a page read at each of 64 places); telling two tensors apart
    /// that agree there is [`Tensor::bit_eq`]'s job.
    pub fn hash_bits<H: Hasher>(&self, state: &mut H) {
        self.dtype.hash(state);
        self.shape().hash(state);
        let len = self.len();
        let mut each = |i: usize| match &self.data {
            TensorData::Float(a) => at_flat(a, i).to_bits().hash(state),
            TensorData::Float32(a) => f64::from(at_flat(a, i)).to_bits().hash(state),
            TensorData::Float32Le(le) => f64::from(le.get(i)).to_bits().hash(state),
            TensorData::Int(a) => at_flat(a, i).hash(state),
            TensorData::Bool(a) => at_flat(a, i).hash(state),
        };
        if len <= HASHED_ELEMENTS {
            (0..len).for_each(&mut each);
        } else {
            let half = HASHED_ELEMENTS / 2;
            (0..half).chain(len - half..len).for_each(&mut each);
        }
    }

    /// One element as text in the format's tensor literals (no suffix).
    pub fn element_text(&self, flat_index: usize) -> String {
        match &self.data {
            TensorData::Float(a) => {
                let v = a.iter().nth(flat_index).copied().unwrap_or(0.0);
                float_text_for(self.dtype, v)
            }
            TensorData::Float32(a) => {
                let v = a.iter().nth(flat_index).copied().unwrap_or(0.0);
                float_text_for(self.dtype, f64::from(v))
            }
            TensorData::Float32Le(le) => {
                let v = le.iter().nth(flat_index).unwrap_or(0.0);
                float_text_for(self.dtype, f64::from(v))
            }
            TensorData::Int(a) => a.iter().nth(flat_index).copied().unwrap_or(0).to_string(),
            TensorData::Bool(a) => {
                bool_text(a.iter().nth(flat_index).copied().unwrap_or(false)).to_string()
            }
        }
    }

    /// All elements as text, row-major.
    pub fn elements_text(&self) -> Vec<String> {
        let mut texts = Vec::with_capacity(self.len());
        let mut one = String::new();
        self.each_element_text(&mut one, |one| texts.push(std::mem::take(one)));
        texts
    }

    /// Appends the tensor literal, `Tensor[(2), float32]{1, 2.5}`, to `out` (what `Display`
    /// writes), without allocating per element.
    pub fn write_literal(&self, out: &mut String) {
        use fmt::Write as _;
        let _ = write!(out, "{}{{", self.tensor_type());
        let mut any = false;
        self.each_element_text(out, |out| {
            out.push_str(", ");
            any = true;
        });
        if any {
            out.truncate(out.len() - 2);
        }
        out.push('}');
    }

    /// Appends each element's text to `buf`, row-major, calling `then(buf)` after each.
    fn each_element_text(&self, buf: &mut String, mut then: impl FnMut(&mut String)) {
        use fmt::Write as _;
        match &self.data {
            TensorData::Float(a) => row_major(a, |v| {
                push_float(buf, self.dtype, v);
                then(buf);
            }),
            TensorData::Float32(a) => row_major(a, |v| {
                push_float(buf, self.dtype, f64::from(v));
                then(buf);
            }),
            TensorData::Float32Le(le) => le.iter().for_each(|v| {
                push_float(buf, self.dtype, f64::from(v));
                then(buf);
            }),
            TensorData::Int(a) => row_major(a, |v| {
                let _ = write!(buf, "{v}");
                then(buf);
            }),
            TensorData::Bool(a) => row_major(a, |v| {
                buf.push_str(bool_text(v));
                then(buf);
            }),
        }
    }
}

/// How many elements [`Tensor::hash_bits`] reads at most.
pub(crate) const HASHED_ELEMENTS: usize = 64;

/// The element at row-major position `i` of `a` (through the slice when `a` is laid out that
/// way, as constants are).
fn at_flat<T: Copy>(a: &ArrayD<T>, i: usize) -> T {
    if let Some(slice) = a.as_slice() {
        return slice[i];
    }
    let mut index = vec![0; a.ndim()];
    let mut rest = i;
    for (k, &n) in a.shape().iter().enumerate().rev() {
        index[k] = rest % n;
        rest /= n;
    }
    a[IxDyn(&index)]
}

/// Calls `f` on each element of `a` in row-major order (through the slice when `a` is laid out
/// that way, as constants are).
fn row_major<T: Copy>(a: &ArrayD<T>, f: impl FnMut(T)) {
    match a.as_slice() {
        Some(slice) => slice.iter().copied().for_each(f),
        None => a.iter().copied().for_each(f),
    }
}

fn bool_text(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}

/// Float to integer, saturating, NaN to 0 (Rust's `as`).
fn float_to_i64(v: f64) -> i64 {
    v as i64
}

/// The shortest text that reads back as exactly `v` (an `f64`): `1`, `0.5`, `1e-5`, `nan`, `inf`.
pub fn float_text(v: f64) -> String {
    float_text_for(DType::Float64, v)
}

/// The shortest text that reads back as exactly `v` at `dtype`'s precision.
pub fn float_text_for(dtype: DType, v: f64) -> String {
    let mut out = String::new();
    push_float(&mut out, dtype, v);
    out
}

/// Appends [`float_text_for`]`(dtype, v)` to `out`.
fn push_float(out: &mut String, dtype: DType, v: f64) {
    use fmt::Write as _;
    let start = out.len();
    let _ = match dtype {
        DType::Float32 => write!(out, "{:?}", v as f32),
        DType::Float64 => write!(out, "{v:?}"),
        // 16-bit floats: the fewest significant digits that read back as the same value. (The
        // 8- and 4-bit floats print exactly, as float64s: a shortest text that rounds to the
        // value could be far from it where they saturate, `450` for float8e4m3fn's 448.)
        _ if v.is_finite() && dtype.bits() == 16 => {
            let h = dtype.round_float(v);
            let short = (0..8)
                .map(|p| format!("{v:.p$e}"))
                .find(|s| s.parse::<f64>().is_ok_and(|x| dtype.round_float(x) == h));
            match short {
                Some(s) => {
                    push_float(out, DType::Float64, s.parse::<f64>().unwrap_or(v));
                    if out.len() - start > s.len() {
                        out.truncate(start);
                        out.push_str(&s);
                    }
                }
                None => push_float(out, DType::Float64, v),
            }
            return;
        }
        _ => write!(out, "{v:?}"),
    };
    // Rust's `{:?}` writes `1.0` and `NaN`; the format writes `1` and `nan`.
    if &out[start..] == "NaN" {
        out.replace_range(start.., "nan");
    } else if out.ends_with(".0") {
        out.truncate(out.len() - 2);
    }
}

impl PartialEq for Tensor {
    fn eq(&self, other: &Self) -> bool {
        self.bit_eq(other)
    }
}

impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::new();
        self.write_literal(&mut text);
        f.write_str(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(t: &Tensor) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        t.hash_bits(&mut h);
        h.finish()
    }

    #[test]
    fn full_converts_its_value_as_from_f64_converts_each_element() {
        let dtypes = [
            DType::Float16,
            DType::Float32,
            DType::Float64,
            DType::Int8,
            DType::UInt8,
            DType::Int32,
            DType::Int64,
            DType::Bool,
        ];
        for dtype in dtypes {
            for v in [0.1, -2.7, 1e40, 300.0, -1.0, f64::NAN, f64::INFINITY, 0.0] {
                let full = Tensor::full(dtype, &[2, 3], v);
                let each = Tensor::from_f64(dtype, ArrayD::from_elem(IxDyn(&[2, 3]), v));
                assert!(full.bit_eq(&each), "{dtype:?} {v}: {full:?} vs {each:?}");
            }
        }
    }

    #[test]
    fn a_float32_tensor_kept_as_f32_equals_hashes_and_prints_as_the_f64_form() {
        let values = [0.1f32, -2.5, 1e-30, f32::NAN, 3.0, f32::INFINITY];
        let kept = Tensor::from_f32(&[2, 3], values.to_vec()).unwrap();
        let wide = Tensor::from_vec(
            DType::Float32,
            &[2, 3],
            values.iter().map(|&v| f64::from(v)).collect(),
        )
        .unwrap();
        assert!(matches!(kept.data(), TensorData::Float32(_)));
        assert!(matches!(wide.data(), TensorData::Float(_)));
        assert!(kept.bit_eq(&wide) && wide.bit_eq(&kept));
        assert_eq!(hash(&kept), hash(&wide));
        assert_eq!(kept.to_string(), wide.to_string());
        assert_eq!(kept.element_text(1), "-2.5");
        assert_eq!(kept.float_values().to_vec().len(), 6);
        // Layout changes keep the f32 form and agree with the f64 form's.
        let (p, q) = (kept.permute(&[1, 0]), wide.permute(&[1, 0]));
        assert!(p.f32_slice().is_some() && p.bit_eq(&q));
        let r = kept.reshape(&[3, 2]).unwrap();
        assert!(r.f32_slice().is_some() && r.bit_eq(&wide.reshape(&[3, 2]).unwrap()));
        // A different value is a different tensor.
        let big = Tensor::from_vec(
            DType::Float32,
            &[4096],
            (0..4096).map(|i| f64::from(i) / 3.0).collect(),
        )
        .unwrap();
        let small = big.compacted().unwrap();
        assert!(small.f32_slice().is_some() && small.bit_eq(&big) && hash(&small) == hash(&big));
        assert!(wide.compacted().is_none() && small.compacted().is_none());
        let other = Tensor::from_f32(&[2, 3], vec![0.1, -2.5, 1e-30, f32::NAN, 3.0, 4.0]).unwrap();
        assert!(!other.bit_eq(&wide));
        assert!(Tensor::from_f32(&[4], vec![1.0]).is_err());
        // The same values as little-endian bytes: equal, same hash and text, and reshaping
        // keeps the view.
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = Tensor::from_f32_le(&[2, 3], bytes.clone().into()).unwrap();
        assert!(view.bit_eq(&wide) && wide.bit_eq(&view) && view.bit_eq(&kept));
        assert_eq!(hash(&view), hash(&wide));
        assert_eq!(view.to_string(), wide.to_string());
        assert_eq!(view.element_text(1), "-2.5");
        assert!(view.permute(&[1, 0]).bit_eq(&q));
        let r = view.reshape(&[3, 2]).unwrap();
        assert_eq!(r.f32_le_bytes().map(|b| &b[..]), Some(&bytes[..]));
        assert!(view.reshape(&[4]).is_err());
        assert!(Tensor::from_f32_le(&[2], bytes.into()).is_err());
    }

    #[test]
    fn max_abs_reads_every_form_without_widening_and_passes_over_nan() {
        let values = [0.5f32, -3.25, f32::NAN, 2.0];
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let forms = [
            Tensor::from_f32(&[4], values.to_vec()).unwrap(),
            Tensor::from_f32_le(&[4], bytes.into()).unwrap(),
            Tensor::from_vec(
                DType::Float64,
                &[4],
                values.iter().map(|&v| f64::from(v)).collect(),
            )
            .unwrap(),
        ];
        for t in &forms {
            assert_eq!(t.max_abs(), 3.25, "{t:?}");
        }
        let ints = Tensor::from_vec(DType::Int64, &[3], vec![4.0, -7.0, 1.0]).unwrap();
        assert_eq!(ints.max_abs(), 7.0);
        assert_eq!(Tensor::full(DType::Float32, &[0], 1.0).max_abs(), 0.0);
    }

    #[test]
    fn a_large_tensor_hashes_a_sample_and_equal_tensors_hash_alike_in_every_form() {
        let n = 10 * HASHED_ELEMENTS + 3;
        let values: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
        let kept = Tensor::from_f32(&[n], values.clone()).unwrap();
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = Tensor::from_f32_le(&[n], bytes.into()).unwrap();
        let wide = Tensor::from_vec(
            DType::Float32,
            &[n],
            values.iter().map(|&v| f64::from(v)).collect(),
        )
        .unwrap();
        assert_eq!(hash(&kept), hash(&view));
        assert_eq!(hash(&kept), hash(&wide));
        // An element between the two sampled ends changes the tensor, not its hash: bit_eq
        // tells.
        let mut other = values.clone();
        other[n / 2] += 1.0;
        let other = Tensor::from_f32(&[n], other).unwrap();
        assert_eq!(hash(&other), hash(&kept));
        assert!(!other.bit_eq(&kept));
        // A sampled element changes the hash.
        let mut last = values;
        last[n - 1] += 1.0;
        assert_ne!(hash(&Tensor::from_f32(&[n], last).unwrap()), hash(&kept));
        // An array not in row-major memory order hashes like its row-major copy.
        let a = ArrayD::from_shape_fn(IxDyn(&[40, 30]), |ix| (ix[0] * 30 + ix[1]) as f64);
        let strided = Tensor::from_f64(DType::Float64, a.clone().reversed_axes());
        let standard = Tensor::from_f64(
            DType::Float64,
            a.reversed_axes().as_standard_layout().into_owned(),
        );
        assert!(strided.bit_eq(&standard));
        assert_eq!(hash(&strided), hash(&standard));
    }
}
