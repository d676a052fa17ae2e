//! Quantisation with its exact integer semantics: `QuantizeLinear` and `DequantizeLinear`
//! (per tensor, per axis and blocked; integers of 2 to 16 bits and the small floats),
//! `DynamicQuantizeLinear`, `MatMulInteger` and `QLinearMatMul`.

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader, Op, axis};
use irpass_ir::{Attrs, DType, Dim, Tensor, TensorType, Value};
use ndarray::{ArrayD, IxDyn};

use super::cast::cast_value;
use super::{Args, attr, native};

/// For each element of a tensor of `shape`, the position of its scale (or zero point) in a
/// tensor of `param` shape: one for the whole tensor, one per index along `axis`, or one per
/// block of `block` indices along it.
fn param_index(
    shape: &[usize],
    param: &[usize],
    ax: usize,
    block: usize,
) -> Result<Vec<usize>, String> {
    let n: usize = shape.iter().product();
    let count: usize = param.iter().product();
    if count == 1 {
        return Ok(vec![0; n]);
    }
    let strides: Vec<usize> = (0..shape.len())
        .map(|i| shape[i + 1..].iter().product())
        .collect();
    if block == 0 {
        if param.len() != 1 || param[0] != shape[ax] {
            return Err(format!(
                "a scale of shape {param:?} for {shape:?} along axis {ax}"
            ));
        }
        return Ok((0..n).map(|f| f / strides[ax] % shape[ax]).collect());
    }
    if param.len() != shape.len() {
        return Err(format!("a blocked scale of shape {param:?} for {shape:?}"));
    }
    let pstrides: Vec<usize> = (0..param.len())
        .map(|i| param[i + 1..].iter().product())
        .collect();
    Ok((0..n)
        .map(|f| {
            (0..shape.len())
                .map(|d| {
                    let i = f / strides[d] % shape[d];
                    let i = if d == ax { i / block } else { i };
                    i.min(param[d].saturating_sub(1)) * pstrides[d]
                })
                .sum()
        })
        .collect())
}

/// The dtype `QuantizeLinear` writes: its zero point's, else `output_dtype`, else uint8.
fn quantized_dtype(zp: Option<DType>, r: &AttrReader<'_>) -> Result<DType, String> {
    match (zp, r.int("output_dtype")) {
        (Some(d), _) => Ok(d),
        (None, 0) => Ok(DType::UInt8),
        (None, code) => {
            crate::tensor::dtype_of(code as i32).map_err(|e| format!("`onnx.QuantizeLinear`: {e}"))
        }
    }
}

/// `v` quantised into `to` (an integer: rounded half to even, plus the zero point, clamped;
/// a float: converted as `Cast` does, saturating unless `saturate=0`).
fn quantize_value(v: f64, zp: f64, to: DType, saturate: bool) -> f64 {
    match to.int_range() {
        Some((lo, hi)) => (v.round_ties_even() + zp).clamp(lo, hi),
        None => cast_value(v + zp, to, saturate, "up"),
    }
}

const QUANT_ATTRS: [irpass_ir::op::AttrSpec; 2] = [
    attr("axis", AttrKind::Int, AttrDefault::Int(1)),
    attr("block_size", AttrKind::Int, AttrDefault::Int(0)),
];

native! {
    /// x / scale rounded half to even plus the zero point, saturated to the zero point's
    /// dtype (per tensor, per `axis` or per block of `block_size` along it).
    "QuantizeLinear" {
        versions: &[10, 13, 19, 21, 23],
        attrs: [
            QUANT_ATTRS[0],
            QUANT_ATTRS[1],
            attr("output_dtype", AttrKind::Int, AttrDefault::Int(0)),
            attr("precision", AttrKind::Int, AttrDefault::Int(0)),
            attr("saturate", AttrKind::Int, AttrDefault::Int(1)),
        ],
        pattern: ElemWise,
        rel: |a, r| {
            let x = a.float(0)?;
            Ok(vec![TensorType { shape: x.shape.clone(), dtype: quantized_dtype(a.opt(2).map(|t| t.dtype), r)? }])
        },
        kernel: |a, r| {
            let (x, scale) = (a.get(0)?, a.get(1)?);
            let to = quantized_dtype(a.opt(2).map(Tensor::dtype), r)?;
            let shape = x.shape().to_vec();
            let ax = if scale.len() > 1 { axis(a.op(), r.int("axis"), shape.len())? } else { 0 };
            let block = usize::try_from(r.int("block_size")).unwrap_or(0);
            let at = param_index(&shape, scale.shape(), ax, block).map_err(|e| format!("`onnx.QuantizeLinear`: {e}"))?;
            let scales = scale.values();
            let zps = a.opt(2).map(Tensor::values).unwrap_or_else(|| vec![0.0; scales.len()]);
            let saturate = r.int("saturate") != 0;
            // The division in the input's precision (float32 for float32 inputs).
            let single = x.dtype() == DType::Float32;
            let v: Vec<f64> = x.values()
                .iter()
                .zip(&at)
                .map(|(&v, &i)| {
                    let q = if single { f64::from(v as f32 / scales[i] as f32) } else { v / scales[i] };
                    quantize_value(q, zps[i], to, saturate)
                })
                .collect();
                        Ok(vec![Tensor::from_vec(to, &shape, v)?])
        },
    }
}

native! {
    /// (x - zero point) * scale, in the scale's dtype (per tensor, per `axis` or per block
    /// of `block_size` along it).
    "DequantizeLinear" {
        versions: &[10, 13, 19, 21, 23],
        attrs: [QUANT_ATTRS[0], QUANT_ATTRS[1], attr("output_dtype", AttrKind::Int, AttrDefault::Int(0))],
        pattern: ElemWise,
        rel: |a, _| {
            let (x, s) = (a.get(0)?, a.float(1)?);
            Ok(vec![TensorType { shape: x.shape.clone(), dtype: s.dtype }])
        },
        kernel: |a, r| {
            let (x, scale) = (a.get(0)?, a.get(1)?);
            let shape = x.shape().to_vec();
            let ax = if scale.len() > 1 { axis(a.op(), r.int("axis"), shape.len())? } else { 0 };
            let block = usize::try_from(r.int("block_size")).unwrap_or(0);
            let at = param_index(&shape, scale.shape(), ax, block).map_err(|e| format!("`onnx.DequantizeLinear`: {e}"))?;
            let scales = scale.values();
            let zps = a.opt(2).map(Tensor::values).unwrap_or_else(|| vec![0.0; scales.len()]);
            let single = scale.dtype() == DType::Float32;
            let v: Vec<f64> = x.values()
                .iter()
                .zip(&at)
                .map(|(&v, &i)| {
                    if single { f64::from((v - zps[i]) as f32 * scales[i] as f32) } else { (v - zps[i]) * scales[i] }
                })
                .collect();
                        Ok(vec![Tensor::from_vec(scale.dtype(), &shape, v)?])
        },
    }
}

native! {
    /// uint8 quantisation of a float32 tensor by the range of its values and 0: the
    /// quantised tensor, its scale and its zero point.
    "DynamicQuantizeLinear" {
        versions: &[11],
        attrs: [],
        pattern: Opaque,
        rel: |a, _| {
            let x = a.float(0)?;
            Ok(vec![
                TensorType { shape: x.shape.clone(), dtype: DType::UInt8 },
                TensorType { shape: Vec::new(), dtype: DType::Float32 },
                TensorType { shape: Vec::new(), dtype: DType::UInt8 },
            ])
        },
        kernel: |a, _| {
            let x = a.get(0)?;
            let v: Vec<f32> = x.values().iter().map(|&v| v as f32).collect();
            let lo = v.iter().copied().fold(0f32, f32::min);
            let hi = v.iter().copied().fold(0f32, f32::max);
            let scale = (hi - lo) / 255.0;
            let zp = if scale == 0.0 { 0.0 } else { (-lo / scale).round_ties_even().clamp(0.0, 255.0) };
            let q: Vec<f64> = v
                .iter()
                .map(|&e| {
                    let s = if scale == 0.0 { 0.0 } else { (e / scale).round_ties_even() };
                    f64::from((s + zp).clamp(0.0, 255.0))
                })
                .collect();
            let arr = ArrayD::from_shape_vec(IxDyn(x.shape()), q).map_err(|e| e.to_string())?;
            Ok(vec![
                Tensor::from_f64(DType::UInt8, arr),
                Tensor::scalar(DType::Float32, f64::from(scale)),
                Tensor::scalar(DType::UInt8, f64::from(zp)),
            ])
        },
    }
}

/// `t - zp` as float64 (exact for the 8-bit integers), `zp` per row when `rows` (an `A`
/// operand's per-row zero point, of shape (M)).
fn centred(t: &Tensor, zp: Option<&Tensor>, rows: bool) -> Result<Tensor, String> {
    let mut v = t.to_f64();
    if let Some(z) = zp {
        let mut z = z.to_f64();
        if rows && z.ndim() == 1 && z.len() > 1 {
            let n = z.len();
            z = z
                .into_shape_with_order(IxDyn(&[n, 1]))
                .map_err(|e| e.to_string())?;
        }
        let b = z
            .broadcast(v.raw_dim())
            .ok_or("a zero point that does not broadcast")?
            .to_owned();
        v = v - b;
    }
    Ok(Tensor::from_f64(DType::Float64, v))
}

/// numpy's matmul of two float64 tensors (the IR's `matmul`).
fn matmul(a: Tensor, b: Tensor) -> Result<Tensor, String> {
    match Op::get("matmul")?.eval(&[Value::tensor(a), Value::tensor(b)], &Attrs::new())? {
        Value::Tensor(t) => Ok(std::sync::Arc::unwrap_or_clone(t)),
        _ => Err("matmul gave no tensor".into()),
    }
}

fn matmul_type(
    a: &Args<'_, TensorType>,
    ia: usize,
    ib: usize,
    dtype: DType,
) -> Result<Vec<TensorType>, String> {
    let (x, y) = (a.get(ia)?, a.get(ib)?);
    if x.rank() < 2 || y.rank() < 2 {
        return Err(format!("`{}` takes operands of rank 2 or more", a.op()));
    }
    if let (Dim::Static(p), Dim::Static(q)) = (x.shape[x.rank() - 1], y.shape[y.rank() - 2])
        && p != q
    {
        return Err(format!(
            "`{}` of {x} and {y}: the inner dimensions differ",
            a.op()
        ));
    }
    let batch =
        irpass_ir::op::broadcast_shapes(&x.shape[..x.rank() - 2], &y.shape[..y.rank() - 2])?;
    let mut shape: Vec<Dim> = batch;
    shape.push(x.shape[x.rank() - 2]);
    shape.push(y.shape[y.rank() - 1]);
    Ok(vec![TensorType { shape, dtype }])
}

native! {
    /// The int32 matrix product of two 8-bit integer tensors less their zero points.
    "MatMulInteger" {
        versions: &[10],
        attrs: [],
        pattern: OutEWiseFusable,
        rel: |a, _| matmul_type(a, 0, 1, DType::Int32),
        kernel: |a, _| {
            let p = matmul(centred(a.get(0)?, a.opt(2), true)?, centred(a.get(1)?, a.opt(3), false)?)?;
            Ok(vec![p.cast(DType::Int32)])
        },
    }
}

native! {
    /// The quantised matrix product: dequantised operands (inputs 0–2 and 3–5) multiplied and
    /// quantised by the output's scale and zero point (inputs 6 and 7).
    "QLinearMatMul" {
        versions: &[10, 21],
        attrs: [],
        pattern: OutEWiseFusable,
        rel: |a, _| {
            let dtype = a.get(7)?.dtype;
            matmul_type(a, 0, 3, dtype)
        },
        kernel: |a, _| {
            let scale = |i: usize, rows: bool| centred(a.get(i)?, None, rows).map(|t| t.to_f64());
            let (sa, sb, sy) = (scale(1, true)?, scale(4, false)?, a.get(6)?.values());
            let (mut pa, mut pb) = (centred(a.get(0)?, a.opt(2), true)?.to_f64(), centred(a.get(3)?, a.opt(5), false)?.to_f64());
            let n = sa.len();
            let sa = if sa.ndim() == 1 && n > 1 { sa.into_shape_with_order(IxDyn(&[n, 1])).map_err(|e| e.to_string())? } else { sa };
            pa = &pa * &sa.broadcast(pa.raw_dim()).ok_or("a scale that does not broadcast")?;
            pb = &pb * &sb.broadcast(pb.raw_dim()).ok_or("a scale that does not broadcast")?;
            let p = matmul(Tensor::from_f64(DType::Float64, pa), Tensor::from_f64(DType::Float64, pb))?;
            let (yzp, to) = (a.get(7)?.values()[0], a.get(7)?.dtype());
            let y = p.to_f64().mapv(|v| quantize_value(v / sy[0], yzp, to, true));
            Ok(vec![Tensor::from_f64(to, y)])
        },
    }
}
