//! Tensors between ONNX and the IR: element types, `TensorProto` data (typed fields, raw
//! little-endian bytes, external files) and back.

use std::path::{Component, Path};
use std::sync::Arc;

use bytes::Bytes;

use irpass_ir::{DType, Tensor};

use crate::error::{OnnxError, Result};
use crate::proto::TensorProto;
use crate::proto::tensor_proto::{DataLocation, DataType};

/// The IR's element type of an ONNX element type.
pub fn dtype_of(elem_type: i32) -> Result<DType> {
    Ok(match DataType::try_from(elem_type) {
        Ok(DataType::Float) => DType::Float32,
        Ok(DataType::Double) => DType::Float64,
        Ok(DataType::Float16) => DType::Float16,
        Ok(DataType::Bfloat16) => DType::BFloat16,
        Ok(DataType::Int8) => DType::Int8,
        Ok(DataType::Int16) => DType::Int16,
        Ok(DataType::Int32) => DType::Int32,
        Ok(DataType::Int64) => DType::Int64,
        Ok(DataType::Uint8) => DType::UInt8,
        Ok(DataType::Uint16) => DType::UInt16,
        Ok(DataType::Uint32) => DType::UInt32,
        Ok(DataType::Uint64) => DType::UInt64,
        Ok(DataType::Bool) => DType::Bool,
        Ok(DataType::Float8e4m3fn) => DType::Float8E4M3FN,
        Ok(DataType::Float8e4m3fnuz) => DType::Float8E4M3FNUZ,
        Ok(DataType::Float8e5m2) => DType::Float8E5M2,
        Ok(DataType::Float8e5m2fnuz) => DType::Float8E5M2FNUZ,
        Ok(DataType::Float8e8m0) => DType::Float8E8M0,
        Ok(DataType::Float4e2m1) => DType::Float4E2M1,
        Ok(DataType::Int4) => DType::Int4,
        Ok(DataType::Uint4) => DType::UInt4,
        Ok(DataType::Int2) => DType::Int2,
        Ok(DataType::Uint2) => DType::UInt2,
        Ok(other) => {
            return Err(OnnxError::Invalid(format!(
                "element type {} is not supported (every numeric type and bool are; string, complex and float6 are not)",
                other.as_str_name()
            )));
        }
        Err(_) => {
            return Err(OnnxError::Invalid(format!(
                "unknown element type {elem_type}"
            )));
        }
    })
}

/// The ONNX element type of an IR element type.
pub fn elem_type_of(dtype: DType) -> i32 {
    (match dtype {
        DType::Float32 => DataType::Float,
        DType::Float64 => DataType::Double,
        DType::Float16 => DataType::Float16,
        DType::BFloat16 => DataType::Bfloat16,
        DType::Int8 => DataType::Int8,
        DType::Int16 => DataType::Int16,
        DType::Int32 => DataType::Int32,
        DType::Int64 => DataType::Int64,
        DType::UInt8 => DataType::Uint8,
        DType::UInt16 => DataType::Uint16,
        DType::UInt32 => DataType::Uint32,
        DType::UInt64 => DataType::Uint64,
        DType::Bool => DataType::Bool,
        DType::Float8E4M3FN => DataType::Float8e4m3fn,
        DType::Float8E4M3FNUZ => DataType::Float8e4m3fnuz,
        DType::Float8E5M2 => DataType::Float8e5m2,
        DType::Float8E5M2FNUZ => DataType::Float8e5m2fnuz,
        DType::Float8E8M0 => DataType::Float8e8m0,
        DType::Float4E2M1 => DataType::Float4e2m1,
        DType::Int4 => DataType::Int4,
        DType::UInt4 => DataType::Uint4,
        DType::Int2 => DataType::Int2,
        DType::UInt2 => DataType::Uint2,
    }) as i32
}

/// Where external data is read from: the model's folder, or none (a model given as bytes).
#[derive(Clone, Copy, Debug)]
pub struct DataDir<'a>(pub Option<&'a Path>);

/// The tensor a `TensorProto` holds.
///
/// # Errors
/// An unsupported element type, data that does not fit the dimensions, a negative dimension,
/// or external data that cannot be read or lies outside the model's folder.
pub fn tensor_of(t: &TensorProto, dir: DataDir<'_>) -> Result<Tensor> {
    let name = t.name.as_deref().unwrap_or("");
    let dtype = dtype_of(t.data_type.unwrap_or(0))
        .map_err(|e| OnnxError::Invalid(format!("tensor `{name}`: {e}")))?;
    let mut shape = Vec::with_capacity(t.dims.len());
    for &d in &t.dims {
        let d = usize::try_from(d).map_err(|_| {
            OnnxError::Invalid(format!("tensor `{name}` has a negative dimension {d}"))
        })?;
        shape.push(d);
    }
    let n = shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| OnnxError::Invalid(format!("tensor `{name}` has too many elements")))?;
    let external = t.data_location == Some(DataLocation::External as i32);
    let raw: Option<Bytes> = if external {
        Some(read_external(t, dir, name)?)
    } else {
        t.raw_data.clone()
    };
    if dtype == DType::Float32 {
        // float32, the common case, is kept as it is: the raw bytes are a view of the model's
        // buffer (no copy, no f64), typed fields become `f32`s.
        return match raw {
            Some(bytes) => {
                check_len(&bytes, n, 4, name)?;
                Tensor::from_f32_le(&shape, bytes).map_err(OnnxError::Invalid)
            }
            None if t.float_data.len() == n => {
                Tensor::from_f32(&shape, t.float_data.clone()).map_err(OnnxError::Invalid)
            }
            None => Err(wrong_count(name, &shape, t.float_data.len(), n)),
        };
    }
    let values: Vec<f64> = match raw.as_deref() {
        Some(bytes) => decode_raw(dtype, bytes, n, name)?,
        None => typed_values(t, dtype, name, n)?,
    };
    if values.len() != n {
        return Err(wrong_count(name, &shape, values.len(), n));
    }
    Tensor::from_vec(dtype, &shape, values).map_err(OnnxError::Invalid)
}

fn wrong_count(name: &str, shape: &[usize], have: usize, n: usize) -> OnnxError {
    OnnxError::Invalid(format!(
        "tensor `{name}` of shape {shape:?} holds {have} values, not {n}"
    ))
}

/// Raw data of `n` elements of `size` bytes.
fn check_len(bytes: &[u8], n: usize, size: usize, name: &str) -> Result<()> {
    if bytes.len() == n * size {
        return Ok(());
    }
    Err(OnnxError::Invalid(format!(
        "tensor `{name}` has {} bytes of data, not {} ({n} elements of {size} bytes)",
        bytes.len(),
        n * size
    )))
}

/// The values of a tensor held in the model itself (not external data), if it reads.
pub(crate) fn values_of(t: &TensorProto) -> Option<Vec<f64>> {
    tensor_of(t, DataDir(None)).ok().map(|t| t.values())
}

/// The values of the typed fields (`float_data`, `int64_data`, ...).
fn typed_values(t: &TensorProto, dtype: DType, name: &str, n: usize) -> Result<Vec<f64>> {
    Ok(match dtype {
        // The dtypes of 8 bits or fewer hold in int32_data the bytes raw_data would (one
        // element, or two or four packed, in each).
        _ if dtype.bits() <= 8 => {
            let bytes: Vec<u8> = t.int32_data.iter().map(|&v| v as u8).collect();
            decode_raw(dtype, &bytes, n, name)?
        }
        DType::Float32 => t.float_data.iter().map(|&v| f64::from(v)).collect(),
        DType::Float64 => t.double_data.clone(),
        DType::Int64 => t.int64_data.iter().map(|&v| v as f64).collect(),
        // float16 and bfloat16 are stored as their bits in int32_data.
        DType::Float16 => t
            .int32_data
            .iter()
            .map(|&v| f64::from(half::f16::from_bits(v as u16)))
            .collect(),
        DType::BFloat16 => t
            .int32_data
            .iter()
            .map(|&v| f64::from(half::bf16::from_bits(v as u16)))
            .collect(),
        // uint32 and uint64 are stored in uint64_data, the other integers in int32_data.
        DType::UInt32 => t.uint64_data.iter().map(|&v| v as f64).collect(),
        DType::UInt64 => t
            .uint64_data
            .iter()
            .map(|&v| u64_value(v, name))
            .collect::<Result<_>>()?,
        _ => t.int32_data.iter().map(|&v| f64::from(v)).collect(),
    })
}

/// Little-endian elements of `dtype`.
fn decode_raw(dtype: DType, bytes: &[u8], n: usize, name: &str) -> Result<Vec<f64>> {
    if dtype.bits() < 8 {
        return unpack(dtype, bytes, n, name);
    }
    let size = dtype.bytes();
    check_len(bytes, n, size, name)?;
    let chunks = bytes.chunks_exact(size);
    Ok(match dtype {
        DType::Float32 => chunks
            .map(|c| f64::from(f32::from_le_bytes(c.try_into().expect("4 bytes"))))
            .collect(),
        DType::Float64 => chunks
            .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect(),
        DType::BFloat16 => chunks
            .map(|c| f64::from(half::bf16::from_le_bytes(c.try_into().expect("2 bytes"))))
            .collect(),
        DType::Float16 => chunks
            .map(|c| f64::from(half::f16::from_le_bytes(c.try_into().expect("2 bytes"))))
            .collect(),
        _ if size == 1 => chunks
            .map(|c| dtype.from_byte_code(c[0]).expect("an 8-bit dtype"))
            .collect(),
        DType::Int16 => chunks
            .map(|c| f64::from(i16::from_le_bytes(c.try_into().expect("2 bytes"))))
            .collect(),
        DType::Int32 => chunks
            .map(|c| f64::from(i32::from_le_bytes(c.try_into().expect("4 bytes"))))
            .collect(),
        DType::Int64 => chunks
            .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")) as f64)
            .collect(),
        DType::UInt16 => chunks
            .map(|c| f64::from(u16::from_le_bytes(c.try_into().expect("2 bytes"))))
            .collect(),
        DType::UInt32 => chunks
            .map(|c| f64::from(u32::from_le_bytes(c.try_into().expect("4 bytes"))))
            .collect(),
        DType::UInt64 => chunks
            .map(|c| u64_value(u64::from_le_bytes(c.try_into().expect("8 bytes")), name))
            .collect::<Result<_>>()?,
        _ => unreachable!("every dtype of 16 bits or more is listed"),
    })
}

/// Elements of fewer than 8 bits, packed from the least significant bits of each byte up
/// (two 4-bit or four 2-bit elements a byte; the last byte's unused bits are ignored).
fn unpack(dtype: DType, bytes: &[u8], n: usize, name: &str) -> Result<Vec<f64>> {
    let bits = dtype.bits();
    let per_byte = 8 / bits;
    let want = n.div_ceil(per_byte);
    if bytes.len() != want {
        return Err(OnnxError::Invalid(format!(
            "tensor `{name}` has {} bytes of data, not {want} ({n} elements of {bits} bits)",
            bytes.len()
        )));
    }
    let mask = (1u8 << bits) - 1;
    Ok((0..n)
        .map(|i| {
            let code = (bytes[i / per_byte] >> (bits * (i % per_byte))) & mask;
            dtype
                .from_byte_code(code)
                .expect("a dtype of fewer than 8 bits")
        })
        .collect())
}

/// [`unpack`]'s inverse: the codes of `values` packed from the low bits of each byte up.
fn pack(dtype: DType, values: &[f64]) -> Vec<u8> {
    let bits = dtype.bits();
    let per_byte = 8 / bits;
    let mut out = vec![0u8; values.len().div_ceil(per_byte)];
    for (i, &v) in values.iter().enumerate() {
        let code = dtype.byte_code(v).expect("a dtype of fewer than 8 bits");
        out[i / per_byte] |= code << (bits * (i % per_byte));
    }
    out
}

/// A uint64 element as the IR holds it: below 2^63, or the error naming the tensor.
fn u64_value(v: u64, name: &str) -> Result<f64> {
    if v > i64::MAX as u64 {
        return Err(OnnxError::Invalid(format!(
            "tensor `{name}` holds the uint64 {v}, and irpass holds uint64 values below 2^63 only"
        )));
    }
    Ok(v as f64)
}

/// External tensors at least this large are mapped ([`irpass::mapped`]) rather than read: the
/// weights stay in the page cache, and are written out again by the kernel when nothing
/// changes them.
const MAP_AT_LEAST: u64 = 64 << 10;

/// The bytes of an external tensor: `location` relative to the model's folder (never outside
/// it), from `offset`, `length` bytes (or to the end); a large one mapped, not read.
fn read_external(t: &TensorProto, dir: DataDir<'_>, name: &str) -> Result<Bytes> {
    let entry = |key: &str| {
        t.external_data
            .iter()
            .find(|e| e.key.as_deref() == Some(key))
            .and_then(|e| e.value.clone())
    };
    let location = entry("location")
        .ok_or_else(|| OnnxError::Invalid(format!("external tensor `{name}` has no location")))?;
    let rel = Path::new(&location);
    if !rel
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(OnnxError::Invalid(format!(
            "external tensor `{name}`: location `{location}` leaves the model's folder"
        )));
    }
    let Some(dir) = dir.0 else {
        return Err(OnnxError::Invalid(format!(
            "external tensor `{name}`: a model read from bytes has no folder to read `{location}` from"
        )));
    };
    let path = dir.join(rel);
    let io = |e: std::io::Error| OnnxError::Io {
        path: path.display().to_string(),
        message: format!("external data of tensor `{name}`: {e}"),
    };
    let parse = |key: &str| -> Result<Option<u64>> {
        entry(key)
            .map(|v| {
                v.parse::<u64>().map_err(|_| {
                    OnnxError::Invalid(format!("external tensor `{name}`: {key} `{v}`"))
                })
            })
            .transpose()
    };
    let (offset, length) = (parse("offset")?.unwrap_or(0), parse("length")?);
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(&path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    let length = length.unwrap_or(size.saturating_sub(offset));
    if offset.checked_add(length).is_none_or(|end| end > size) {
        return Err(OnnxError::Invalid(format!(
            "external tensor `{name}`: bytes {offset}..{} are past the end of `{location}` ({size} bytes)",
            offset.saturating_add(length)
        )));
    }
    let len = usize::try_from(length)
        .map_err(|_| OnnxError::Invalid(format!("external tensor `{name}`: {length} bytes")))?;
    if length >= MAP_AT_LEAST {
        return irpass::mapped::map_file(&file, &path, offset, len).map_err(io);
    }
    file.seek(SeekFrom::Start(offset)).map_err(io)?;
    let mut bytes = vec![0; len];
    file.read_exact(&mut bytes).map_err(io)?;
    Ok(Bytes::from(bytes))
}

/// A `TensorProto` named `name` holding `t` as raw little-endian data.
pub fn proto_of(name: &str, t: &Tensor) -> TensorProto {
    proto_with(name, t, Bytes::from(raw_bytes(t)))
}

/// [`proto_of`] of a shared tensor: a float32 tensor read from a model is not copied, its raw
/// data is the bytes it was read from ([`Tensor::f32_le_bytes`]) or a view of its `f32`s
/// ([`Tensor::f32_slice`], on little-endian machines, whose `f32`s are ONNX's bytes).
pub fn proto_of_shared(name: &str, t: &Arc<Tensor>) -> TensorProto {
    let raw = match (t.f32_le_bytes(), t.f32_slice()) {
        (Some(bytes), _) => bytes.clone(),
        (None, Some(_)) if cfg!(target_endian = "little") => Bytes::from_owner(F32Bytes(t.clone())),
        _ => Bytes::from(raw_bytes(t)),
    };
    proto_with(name, t, raw)
}

fn proto_with(name: &str, t: &Tensor, raw: Bytes) -> TensorProto {
    TensorProto {
        name: Some(name.to_string()),
        dims: t.shape().iter().map(|&d| d as i64).collect(),
        data_type: Some(elem_type_of(t.dtype())),
        raw_data: Some(raw),
        ..TensorProto::default()
    }
}

/// A float32 tensor's elements as bytes (what [`proto_of_shared`] hands `Bytes`).
struct F32Bytes(Arc<Tensor>);

impl AsRef<[u8]> for F32Bytes {
    fn as_ref(&self) -> &[u8] {
        bytemuck::cast_slice(self.0.f32_slice().unwrap_or_default())
    }
}

/// The tensor's elements as little-endian bytes of its dtype.
fn raw_bytes(t: &Tensor) -> Vec<u8> {
    let dtype = t.dtype();
    if let Some(bytes) = t.f32_le_bytes() {
        return bytes.to_vec();
    }
    if let Some(s) = t.f32_slice() {
        return s.iter().flat_map(|v| v.to_le_bytes()).collect();
    }
    if dtype.bits() < 8 {
        return pack(dtype, &t.float_values());
    }
    let mut raw = Vec::with_capacity(t.len() * dtype.bytes());
    for v in t.float_values().iter() {
        let v = *v;
        match dtype {
            DType::Float32 => raw.extend_from_slice(&(v as f32).to_le_bytes()),
            DType::Float64 => raw.extend_from_slice(&v.to_le_bytes()),
            DType::Float16 => raw.extend_from_slice(&half::f16::from_f64(v).to_le_bytes()),
            DType::BFloat16 => raw.extend_from_slice(&half::bf16::from_f64(v).to_le_bytes()),
            DType::Int16 => raw.extend_from_slice(&(v as i16).to_le_bytes()),
            DType::Int32 => raw.extend_from_slice(&(v as i32).to_le_bytes()),
            DType::Int64 => raw.extend_from_slice(&(v as i64).to_le_bytes()),
            DType::UInt16 => raw.extend_from_slice(&(v as u16).to_le_bytes()),
            DType::UInt32 => raw.extend_from_slice(&(v as u32).to_le_bytes()),
            // A uint64 is held as an i64 of the same bits.
            DType::UInt64 => raw.extend_from_slice(&(v as i64).to_le_bytes()),
            _ => raw.push(
                dtype
                    .byte_code(v)
                    .expect("the other dtypes have 8 bits or fewer"),
            ),
        }
    }
    raw
}
