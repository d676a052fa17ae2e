//! Neural-network operators: dense, matmul, conv2d, pooling, normalisation, softmax, dropout.

use std::borrow::Cow;

use ndarray::{ArrayD, ArrayView2, ArrayViewMut2, IxDyn};

use super::util::*;
use super::{Arity, AttrDefault, AttrKind, AttrReader, AttrSpec, OpDef, OpPattern};
use crate::layout::{Layout, transform_tensor};
use crate::{DType, Dim, Tensor, TensorType, Type, Value};

fn out_dtype(r: &AttrReader<'_>, input: DType) -> DType {
    dtype_or(r.dtype("out_dtype"), input)
}

fn dim_mismatch(op: &str, what: &str, a: Dim, b: Dim) -> Result<(), String> {
    if dims_match(a, b) {
        Ok(())
    } else {
        Err(format!("`{op}`: {what} do not match ({a} vs {b})"))
    }
}

// ---------------------------------------------------------------- dense / matmul

fn dense_rel(args: &[Type], r: &AttrReader<'_>) -> Result<Type, String> {
    let op = r.op_name();
    let (x, w) = (tensor_ty(op, args, 0)?, tensor_ty(op, args, 1)?);
    if x.rank() < 1 || w.rank() != 2 {
        return Err(format!(
            "`nn.dense` needs data of rank ≥ 1 and a weight of rank 2, got `{x}` and `{w}`"
        ));
    }
    dim_mismatch(
        op,
        "the reduction dimensions of data and weight",
        x.shape[x.rank() - 1],
        w.shape[1],
    )?;
    if let Some(units) = r.opt_int("units") {
        dim_mismatch(
            op,
            "`units` and the weight's first dimension",
            Dim::Static(units),
            w.shape[0],
        )?;
    }
    let mut shape = x.shape.clone();
    *shape.last_mut().unwrap_or(&mut Dim::Any) = w.shape[0];
    Ok(Type::with_dims(shape, out_dtype(r, x.dtype)))
}

/// `t`'s values broadcast to `shape`, row-major: borrowed when `t` has that shape already.
fn broadcast_values<'a>(
    t: &'a Tensor,
    shape: &[usize],
    op: &str,
) -> Result<Cow<'a, [f64]>, String> {
    if t.shape() == shape {
        return Ok(t.float_values());
    }
    let values = t
        .to_f64()
        .broadcast(IxDyn(shape))
        .ok_or_else(|| format!("`{op}`: batch broadcast failed"))?
        .iter()
        .copied()
        .collect();
    Ok(Cow::Owned(values))
}

/// Adds to `out` (m×n, row-major) the matrix product of `a` (m×k) and `b` (k×n, or n×k when
/// `bt`); `a` is k×m when `at`. `m` is `out.len() / n`.
fn matmul_into(a: &[f64], b: &[f64], out: &mut [f64], k: usize, n: usize, at: bool, bt: bool) {
    let m = out.len().checked_div(n).unwrap_or(0);
    for i in 0..m {
        for p in 0..k {
            let av = if at { a[p * m + i] } else { a[i * k + p] };
            if av == 0.0 {
                continue;
            }
            for j in 0..n {
                let bv = if bt { b[j * k + p] } else { b[p * n + j] };
                out[i * n + j] += av * bv;
            }
        }
    }
}

fn dense_kernel(args: &[Value], r: &AttrReader<'_>) -> Result<Value, String> {
    let op = r.op_name();
    let (x, w) = (tensor_arg(op, args, 0)?, tensor_arg(op, args, 1)?);
    let k = *x.shape().last().ok_or("`nn.dense`: data has rank 0")?;
    let n = w.shape()[0];
    let m = x.len() / k.max(1);
    let mut out = vec![0.0; m * n];
    matmul_into(
        &x.float_values(),
        &w.float_values(),
        &mut out,
        k,
        n,
        false,
        true,
    );
    let mut shape = x.shape().to_vec();
    if let Some(last) = shape.last_mut() {
        *last = n;
    }
    Ok(Value::tensor(Tensor::from_vec(
        out_dtype(r, x.dtype()),
        &shape,
        out,
    )?))
}

inventory::submit! {
    OpDef {
        name: "nn.dense",
        description: "x · Wᵀ: data (..., K) by weight (N, K) gives (..., N).",
        arity: Arity::Exact(2),
        attrs: &[
            AttrSpec { name: "units", kind: AttrKind::OptInt, default: AttrDefault::Null },
            AttrSpec { name: "out_dtype", kind: AttrKind::DType, default: AttrDefault::Str("") },
        ],
        pattern: OpPattern::OutEWiseFusable,
        type_rel: dense_rel,
        kernel: dense_kernel,
    }
}

/// Shapes of a batched matrix product: (batch, m, k, n) and the result shape.
fn batched(
    op: &str,
    a: &TensorType,
    b: &TensorType,
    at: bool,
    bt: bool,
) -> Result<Vec<Dim>, String> {
    if a.rank() < 2 || b.rank() < 2 {
        return Err(format!(
            "`{op}` needs operands of rank ≥ 2, got `{a}` and `{b}`"
        ));
    }
    if a.dtype != b.dtype {
        return Err(format!(
            "`{op}` needs operands of one dtype, got `{}` and `{}`",
            a.dtype, b.dtype
        ));
    }
    let (ra, rb) = (a.rank(), b.rank());
    let (m, ka) = if at {
        (a.shape[ra - 1], a.shape[ra - 2])
    } else {
        (a.shape[ra - 2], a.shape[ra - 1])
    };
    let (kb, n) = if bt {
        (b.shape[rb - 1], b.shape[rb - 2])
    } else {
        (b.shape[rb - 2], b.shape[rb - 1])
    };
    dim_mismatch(op, "the reduction dimensions", ka, kb)?;
    let mut shape = broadcast_shapes(&a.shape[..ra - 2], &b.shape[..rb - 2])
        .map_err(|e| format!("`{op}`: batch {e}"))?;
    shape.push(m);
    shape.push(n);
    Ok(shape)
}

fn batched_kernel(
    op: &str,
    a: &Tensor,
    b: &Tensor,
    at: bool,
    bt: bool,
    dtype: DType,
) -> Result<Value, String> {
    let (sa, sb) = (a.shape(), b.shape());
    let (ra, rb) = (sa.len(), sb.len());
    if ra < 2 || rb < 2 {
        return Err(format!(
            "`{op}` needs operands of rank ≥ 2, got shapes {sa:?} and {sb:?}"
        ));
    }
    let (m, k) = if at {
        (sa[ra - 1], sa[ra - 2])
    } else {
        (sa[ra - 2], sa[ra - 1])
    };
    let n = if bt { sb[rb - 2] } else { sb[rb - 1] };
    let kb = if bt { sb[rb - 1] } else { sb[rb - 2] };
    if k != kb {
        return Err(format!(
            "`{op}` of shapes {sa:?} and {sb:?}: the inner dimensions differ"
        ));
    }
    let batch = broadcast_concrete(&sa[..ra - 2], &sb[..rb - 2])?;
    let nb: usize = batch.iter().product();
    let mut full_a = batch.clone();
    full_a.extend_from_slice(&sa[ra - 2..]);
    let mut full_b = batch.clone();
    full_b.extend_from_slice(&sb[rb - 2..]);
    let av = broadcast_values(a, &full_a, op)?;
    let bv = broadcast_values(b, &full_b, op)?;
    let mut out = vec![0.0; nb * m * n];
    for (i, out) in out.chunks_exact_mut((m * n).max(1)).enumerate() {
        let (a, b) = (
            &av[i * m * k..(i + 1) * m * k],
            &bv[i * k * n..(i + 1) * k * n],
        );
        matmul_into(a, b, out, k, n, at, bt);
    }
    let mut shape = batch;
    shape.push(m);
    shape.push(n);
    Ok(Value::tensor(Tensor::from_vec(dtype, &shape, out)?))
}

inventory::submit! {
    OpDef {
        name: "matmul",
        description: "Matrix product with numpy's batch broadcasting: (..., M, K) by (..., K, N); \
                      a 1-D first operand is a row (K) and a 1-D second a column (K), their \
                      axis dropped from the result, as numpy's matmul.",
        arity: Arity::Exact(2),
        attrs: &[],
        pattern: OpPattern::OutEWiseFusable,
        type_rel: |args, r| {
            let op = r.op_name();
            let (a, b) = (tensor_ty(op, args, 0)?, tensor_ty(op, args, 1)?);
            let (ra, rb) = (a.rank(), b.rank());
            if ra == 0 || rb == 0 {
                return Err(format!("`{op}` needs operands of rank ≥ 1, got `{a}` and `{b}`"));
            }
            let lift = |t: &TensorType, at: usize| {
                let mut shape = t.shape.clone();
                shape.insert(at, Dim::Static(1));
                TensorType { shape, dtype: t.dtype }
            };
            let a2 = if ra == 1 { lift(a, 0) } else { (**a).clone() };
            let b2 = if rb == 1 { lift(b, 1) } else { (**b).clone() };
            let mut shape = batched(op, &a2, &b2, false, false)?;
            if rb == 1 {
                shape.pop();
            }
            if ra == 1 {
                shape.remove(shape.len() - 1 - usize::from(rb != 1));
            }
            Ok(Type::with_dims(shape, a.dtype))
        },
        kernel: |args, r| {
            let op = r.op_name();
            let (a, b) = (tensor_arg(op, args, 0)?, tensor_arg(op, args, 1)?);
            let (ra, rb) = (a.shape().len(), b.shape().len());
            if ra == 0 || rb == 0 {
                return Err(format!("`{op}` needs operands of rank ≥ 1"));
            }
            if ra > 1 && rb > 1 {
                return batched_kernel(op, a, b, false, false, a.dtype());
            }
            // A 1-D operand as a matrix of one row (first) or one column (second).
            let a2 = if ra == 1 { a.reshape(&[1, a.shape()[0]])? } else { a.clone() };
            let b2 = if rb == 1 { b.reshape(&[b.shape()[0], 1])? } else { b.clone() };
            let out = batched_kernel(op, &a2, &b2, false, false, a.dtype())?;
            let t = out.as_tensor().ok_or("matmul gave no tensor")?;
            let mut shape = t.shape().to_vec();
            if rb == 1 {
                shape.pop();
            }
            if ra == 1 {
                shape.remove(shape.len() - 1 - usize::from(rb != 1));
            }
            Ok(Value::tensor(t.reshape(&shape)?))
        },
    }
}

inventory::submit! {
    OpDef {
        name: "nn.batch_matmul",
        description: "Batched matrix product: (B, M, K) by (B, N, K) (transpose_b, the default) or (B, K, N).",
        arity: Arity::Exact(2),
        attrs: &[
            AttrSpec { name: "out_dtype", kind: AttrKind::DType, default: AttrDefault::Str("") },
            AttrSpec { name: "transpose_a", kind: AttrKind::Bool, default: AttrDefault::Bool(false) },
            AttrSpec { name: "transpose_b", kind: AttrKind::Bool, default: AttrDefault::Bool(true) },
        ],
        pattern: OpPattern::OutEWiseFusable,
        type_rel: |args, r| {
            let op = r.op_name();
            let (a, b) = (tensor_ty(op, args, 0)?, tensor_ty(op, args, 1)?);
            if a.rank() != 3 || b.rank() != 3 {
                return Err(format!("`nn.batch_matmul` needs rank-3 operands, got `{a}` and `{b}`"));
            }
            Ok(Type::with_dims(batched(op, a, b, r.bool("transpose_a"), r.bool("transpose_b"))?, out_dtype(r, a.dtype)))
        },
        kernel: |args, r| {
            let op = r.op_name();
            let (a, b) = (tensor_arg(op, args, 0)?, tensor_arg(op, args, 1)?);
            batched_kernel(op, a, b, r.bool("transpose_a"), r.bool("transpose_b"), out_dtype(r, a.dtype()))
        },
    }
}

// ---------------------------------------------------------------- conv2d and pooling

/// Padding as (top, left, bottom, right) from 1, 2 or 4 values.
fn padding4(op: &str, p: &[i64]) -> Result<[i64; 4], String> {
    match *p {
        [a] => Ok([a, a, a, a]),
        [a, b] => Ok([a, b, a, b]),
        [a, b, c, d] => Ok([a, b, c, d]),
        _ => Err(format!(
            "`{op}`: padding takes 1, 2 or 4 values, got {}",
            p.len()
        )),
    }
}

fn pair(op: &str, name: &str, v: &[i64]) -> Result<[i64; 2], String> {
    match *v {
        [a] => Ok([a, a]),
        [a, b] => Ok([a, b]),
        _ => Err(format!(
            "`{op}`: `{name}` takes 1 or 2 values, got {}",
            v.len()
        )),
    }
}

/// Positions of N, C, H, W in a data layout.
fn data_axes(op: &str, layout: &str) -> Result<[usize; 4], String> {
    match layout {
        "NCHW" => Ok([0, 1, 2, 3]),
        "NHWC" => Ok([0, 3, 1, 2]),
        other => Err(format!(
            "`{op}`: data layout `{other}` is not supported (NCHW or NHWC)"
        )),
    }
}

/// The output size of a window of `k` (dilated by `dil`) sliding with `stride` over `input`
/// padded by `pads` (before, after). Computed in `i128`, so that extreme attributes give an
/// error rather than an overflow.
fn out_size(
    op: &str,
    input: Dim,
    k: i64,
    pads: [i64; 2],
    stride: i64,
    dil: i64,
    ceil: bool,
) -> Result<Dim, String> {
    if stride < 1 || dil < 1 {
        return Err(format!("`{op}`: strides and dilation must be at least 1"));
    }
    if k < 1 {
        return Err(format!(
            "`{op}`: the window size must be at least 1, got {k}"
        ));
    }
    let Dim::Static(i) = input else {
        return Ok(Dim::Any);
    };
    let (k, stride, dil) = (i128::from(k), i128::from(stride), i128::from(dil));
    let padded = i128::from(i) + i128::from(pads[0]) + i128::from(pads[1]);
    let eff = dil * (k - 1) + 1;
    let span = padded - eff;
    if span < 0 {
        return Err(format!(
            "`{op}`: the window ({eff}) is larger than the padded input ({padded})"
        ));
    }
    let o = if ceil {
        let o = (span + stride - 1) / stride + 1;
        // A last window that would start in the padding after the input is dropped (ONNX's and
        // PyTorch's rule): every window starts inside the input or its leading padding.
        if (o - 1) * stride >= i128::from(i) + i128::from(pads[0]) {
            o - 1
        } else {
            o
        }
    } else {
        span / stride + 1
    };
    let o = i64::try_from(o)
        .map_err(|_| format!("`{op}`: the output size {o} does not fit in 64 bits"))?;
    Ok(Dim::Static(o))
}

/// A layout's shape from N, C, H, W.
fn in_layout(axes: [usize; 4], n: Dim, c: Dim, h: Dim, w: Dim) -> Vec<Dim> {
    let mut s = vec![Dim::Any; 4];
    s[axes[0]] = n;
    s[axes[1]] = c;
    s[axes[2]] = h;
    s[axes[3]] = w;
    s
}

const CONV_ATTRS: &[AttrSpec] = &[
    AttrSpec {
        name: "strides",
        kind: AttrKind::Ints,
        default: AttrDefault::Ints(&[1, 1]),
    },
    AttrSpec {
        name: "padding",
        kind: AttrKind::Ints,
        default: AttrDefault::Ints(&[0, 0, 0, 0]),
    },
    AttrSpec {
        name: "dilation",
        kind: AttrKind::Ints,
        default: AttrDefault::Ints(&[1, 1]),
    },
    AttrSpec {
        name: "groups",
        kind: AttrKind::Int,
        default: AttrDefault::Int(1),
    },
    AttrSpec {
        name: "channels",
        kind: AttrKind::OptInt,
        default: AttrDefault::Null,
    },
    AttrSpec {
        name: "kernel_size",
        kind: AttrKind::OptInts,
        default: AttrDefault::Null,
    },
    AttrSpec {
        name: "data_layout",
        kind: AttrKind::Str,
        default: AttrDefault::Str("NCHW"),
    },
    AttrSpec {
        name: "kernel_layout",
        kind: AttrKind::Str,
        default: AttrDefault::Str("OIHW"),
    },
    AttrSpec {
        name: "out_layout",
        kind: AttrKind::Str,
        default: AttrDefault::Str(""),
    },
    AttrSpec {
        name: "out_dtype",
        kind: AttrKind::DType,
        default: AttrDefault::Str(""),
    },
];

/// A convolution's data, kernel and output layouts: N, C, H, W and O, I, H, W, each ordered
/// and split as the attribute says (`NCHW`, `NHWC`, `NCHW4c`; `OIHW`, `HWIO`, `OIHW4i4o`).
fn conv_layouts(r: &AttrReader<'_>) -> Result<[Layout; 3], String> {
    let op = r.op_name();
    // The common case, without parsing.
    if r.str("data_layout") == "NCHW"
        && r.str("kernel_layout") == "OIHW"
        && matches!(r.str("out_layout").as_str(), "" | "NCHW")
    {
        return Ok([nchw(), oihw(), nchw()]);
    }
    let read = |name: &str, axes: &str, examples: &str| {
        let l = Layout::parse(&r.str(name)).map_err(|e| format!("`{op}`: {e}"))?;
        if !l.same_axes(&Layout::parse(axes).expect("a layout")) {
            return Err(format!(
                "`{op}`: {name} `{l}` is not supported (the axes {axes}, in any order and \
                 optionally split: {examples})"
            ));
        }
        Ok(l)
    };
    let data = read("data_layout", "NCHW", "NCHW, NHWC, NCHW4c")?;
    let kernel = read("kernel_layout", "OIHW", "OIHW, HWIO, OHWI, OIHW4i4o")?;
    let out = match r.str("out_layout") {
        o if o.is_empty() => data.clone(),
        _ => read("out_layout", "NCHW", "NCHW, NHWC, NCHW4c")?,
    };
    Ok([data, kernel, out])
}

fn nchw() -> Layout {
    Layout::parse("NCHW").expect("a layout")
}

fn oihw() -> Layout {
    Layout::parse("OIHW").expect("a layout")
}

fn conv2d_rel(args: &[Type], r: &AttrReader<'_>) -> Result<Type, String> {
    let op = r.op_name();
    let (x, w) = (tensor_ty(op, args, 0)?, tensor_ty(op, args, 1)?);
    let [dl, kl, ol] = conv_layouts(r)?;
    if x.rank() != dl.rank() || w.rank() != kl.rank() {
        return Err(format!(
            "`nn.conv2d` needs data of rank {} ({dl}) and a weight of rank {} ({kl}), got `{x}` and `{w}`",
            dl.rank(),
            kl.rank()
        ));
    }
    if x.dtype != w.dtype {
        return Err(format!(
            "`nn.conv2d` needs data and weight of one dtype, got `{}` and `{}`",
            x.dtype, w.dtype
        ));
    }
    let in_op = |e: String| format!("`{op}`: {e}");
    let xs = dl.transform_shape(&x.shape, &nchw()).map_err(in_op)?;
    let ws = kl.transform_shape(&w.shape, &oihw()).map_err(in_op)?;
    let (n, c, h, wd) = (xs[0], xs[1], xs[2], xs[3]);
    let (o, i, kh, kw) = (ws[0], ws[1], ws[2], ws[3]);
    let groups = r.int("groups");
    if groups < 1 {
        return Err(format!(
            "`nn.conv2d`: groups must be at least 1, got {groups}"
        ));
    }
    if let (Dim::Static(c), Dim::Static(i)) = (c, i)
        && i.checked_mul(groups) != Some(c)
    {
        return Err(format!(
            "`nn.conv2d`: the data has {c} channels but the weight expects {} ({i} per group × {groups} groups)",
            i128::from(i) * i128::from(groups)
        ));
    }
    if let Dim::Static(o) = o
        && o % groups != 0
    {
        return Err(format!(
            "`nn.conv2d`: {o} output channels do not split into {groups} groups"
        ));
    }
    if let Some(ch) = r.opt_int("channels") {
        dim_mismatch(
            op,
            "`channels` and the weight's output channels",
            Dim::Static(ch),
            o,
        )?;
    }
    let (Dim::Static(khv), Dim::Static(kwv)) = (kh, kw) else {
        return Err("`nn.conv2d` needs a static kernel size".into());
    };
    if let Some(ks) = r.opt_ints("kernel_size") {
        let ks = pair(op, "kernel_size", &ks)?;
        if ks != [khv, kwv] {
            return Err(format!(
                "`nn.conv2d`: kernel_size {ks:?} does not match the weight's {:?}",
                [khv, kwv]
            ));
        }
    }
    let s = pair(op, "strides", &r.ints("strides"))?;
    let d = pair(op, "dilation", &r.ints("dilation"))?;
    let p = padding4(op, &r.ints("padding"))?;
    let oh = out_size(op, h, khv, [p[0], p[2]], s[0], d[0], false)?;
    let ow = out_size(op, wd, kwv, [p[1], p[3]], s[1], d[1], false)?;
    let out = nchw()
        .transform_shape(&[n, o, oh, ow], &ol)
        .map_err(|e| format!("`{op}`: {e}"))?;
    Ok(Type::with_dims(out, out_dtype(r, x.dtype)))
}

/// Permutation that takes a tensor in `axes` order (positions of N,C,H,W) to NCHW.
fn to_nchw(axes: [usize; 4]) -> Vec<usize> {
    axes.to_vec()
}

/// Permutation that takes NCHW to a layout whose N,C,H,W positions are `axes`.
fn from_nchw(axes: [usize; 4]) -> Vec<usize> {
    let mut inv = vec![0; 4];
    for (i, &a) in axes.iter().enumerate() {
        inv[a] = i;
    }
    inv
}

/// A convolution's sizes, for laying out the input patches.
struct ConvGeometry {
    c: usize,
    h: usize,
    w: usize,
    kh: usize,
    kw: usize,
    oh: usize,
    ow: usize,
    stride: [i64; 2],
    dilation: [i64; 2],
    /// Padding before the rows and before the columns.
    pad: [i64; 2],
}

impl ConvGeometry {
    /// Writes into `col` (row `(ic·kh + ky)·kw + kx`, column `y·ow + x`) the input element
    /// each kernel tap meets at each output position, for `channels` input channels from
    /// `first` of batch `b` of `x` (NCHW, row-major); padding reads as 0.
    fn im2col(&self, x: &[f64], b: usize, first: usize, channels: usize, col: &mut [f64]) {
        let (h, w, ow) = (self.h as i64, self.w as i64, self.ow);
        let positions = self.oh * ow;
        for ic in 0..channels {
            let plane = &x[(b * self.c + first + ic) * self.h * self.w..][..self.h * self.w];
            for ky in 0..self.kh {
                for kx in 0..self.kw {
                    let row =
                        &mut col[((ic * self.kh + ky) * self.kw + kx) * positions..][..positions];
                    for y in 0..self.oh {
                        let iy =
                            y as i64 * self.stride[0] + ky as i64 * self.dilation[0] - self.pad[0];
                        let line = &mut row[y * ow..(y + 1) * ow];
                        if iy < 0 || iy >= h {
                            line.fill(0.0);
                            continue;
                        }
                        let src = &plane[iy as usize * self.w..][..self.w];
                        for (xo, slot) in line.iter_mut().enumerate() {
                            let ix = xo as i64 * self.stride[1] + kx as i64 * self.dilation[1]
                                - self.pad[1];
                            *slot = if ix < 0 || ix >= w {
                                0.0
                            } else {
                                src[ix as usize]
                            };
                        }
                    }
                }
            }
        }
    }
}

fn conv2d_kernel(args: &[Value], r: &AttrReader<'_>) -> Result<Value, String> {
    let op = r.op_name();
    let (x, w) = (tensor_arg(op, args, 0)?, tensor_arg(op, args, 1)?);
    let [dl, kl, ol] = conv_layouts(r)?;
    let x = transform_tensor(x, &dl, &nchw())?;
    let w = transform_tensor(w, &kl, &oihw())?;
    let (n, c, h, wd) = (x.shape()[0], x.shape()[1], x.shape()[2], x.shape()[3]);
    let (o, ipg, kh, kw) = (w.shape()[0], w.shape()[1], w.shape()[2], w.shape()[3]);
    let g = r.int("groups").max(1) as usize;
    let s = pair(op, "strides", &r.ints("strides"))?;
    let d = pair(op, "dilation", &r.ints("dilation"))?;
    let p = padding4(op, &r.ints("padding"))?;
    let oh = out_size(
        op,
        Dim::Static(h as i64),
        kh as i64,
        [p[0], p[2]],
        s[0],
        d[0],
        false,
    )?
    .value()
    .unwrap_or(0) as usize;
    let ow = out_size(
        op,
        Dim::Static(wd as i64),
        kw as i64,
        [p[1], p[3]],
        s[1],
        d[1],
        false,
    )?
    .value()
    .unwrap_or(0) as usize;
    checked_size(op, &[n, o, oh, ow])?;
    let (xv, wv) = (x.float_values(), w.float_values());
    let geometry = ConvGeometry {
        c,
        h,
        w: wd,
        kh,
        kw,
        oh,
        ow,
        stride: s,
        dilation: d,
        pad: [p[0], p[1]],
    };
    let opg = o / g;
    let k = ipg * kh * kw;
    let mut out = vec![0.0; n * o * oh * ow];
    let mut col = vec![0.0; k * oh * ow];
    for b in 0..n {
        for grp in 0..g {
            // Each group is a matrix product: its weights (opg × k) by the patches of its
            // input channels (k × oh·ow), as im2col lays them out.
            geometry.im2col(&xv, b, grp * ipg, ipg, &mut col);
            let weights = ArrayView2::from_shape((opg, k), &wv[grp * opg * k..(grp + 1) * opg * k])
                .map_err(|e| e.to_string())?;
            let patches = ArrayView2::from_shape((k, oh * ow), &col).map_err(|e| e.to_string())?;
            let at = (b * o + grp * opg) * oh * ow;
            let mut dst =
                ArrayViewMut2::from_shape((opg, oh * ow), &mut out[at..at + opg * oh * ow])
                    .map_err(|e| e.to_string())?;
            ndarray::linalg::general_mat_mul(1.0, &weights, &patches, 0.0, &mut dst);
        }
    }
    let t = Tensor::from_vec(out_dtype(r, x.dtype()), &[n, o, oh, ow], out)?;
    Ok(Value::tensor(transform_tensor(&t, &nchw(), &ol)?))
}

inventory::submit! {
    OpDef {
        name: "nn.conv2d",
        description: "2-D convolution (data in NCHW, NHWC or a split layout such as NCHW4c; weights in OIHW, HWIO, OHWI, HWOI or split such as OIHW4i4o), with strides, padding, dilation and groups.",
        arity: Arity::Exact(2),
        attrs: CONV_ATTRS,
        pattern: OpPattern::OutEWiseFusable,
        type_rel: conv2d_rel,
        kernel: conv2d_kernel,
    }
}

const POOL_ATTRS: &[AttrSpec] = &[
    AttrSpec {
        name: "pool_size",
        kind: AttrKind::Ints,
        default: AttrDefault::Required,
    },
    AttrSpec {
        name: "strides",
        kind: AttrKind::Ints,
        default: AttrDefault::Ints(&[1, 1]),
    },
    AttrSpec {
        name: "dilation",
        kind: AttrKind::Ints,
        default: AttrDefault::Ints(&[1, 1]),
    },
    AttrSpec {
        name: "padding",
        kind: AttrKind::Ints,
        default: AttrDefault::Ints(&[0, 0, 0, 0]),
    },
    AttrSpec {
        name: "layout",
        kind: AttrKind::Str,
        default: AttrDefault::Str("NCHW"),
    },
    AttrSpec {
        name: "out_layout",
        kind: AttrKind::Str,
        default: AttrDefault::Str(""),
    },
    AttrSpec {
        name: "ceil_mode",
        kind: AttrKind::Bool,
        default: AttrDefault::Bool(false),
    },
    AttrSpec {
        name: "count_include_pad",
        kind: AttrKind::Bool,
        default: AttrDefault::Bool(false),
    },
];

fn pool_rel(args: &[Type], r: &AttrReader<'_>) -> Result<Type, String> {
    let op = r.op_name();
    let x = tensor_ty(op, args, 0)?;
    if x.rank() != 4 {
        return Err(format!("`{op}` needs rank-4 data, got `{x}`"));
    }
    let a = data_axes(op, &r.str("layout"))?;
    let k = pair(op, "pool_size", &r.ints("pool_size"))?;
    let s = pair(op, "strides", &r.ints("strides"))?;
    let d = pair(op, "dilation", &r.ints("dilation"))?;
    let p = padding4(op, &r.ints("padding"))?;
    let ceil = r.bool("ceil_mode");
    let oh = out_size(op, x.shape[a[2]], k[0], [p[0], p[2]], s[0], d[0], ceil)?;
    let ow = out_size(op, x.shape[a[3]], k[1], [p[1], p[3]], s[1], d[1], ceil)?;
    Ok(Type::with_dims(
        in_layout(a, x.shape[a[0]], x.shape[a[1]], oh, ow),
        x.dtype,
    ))
}

fn pool_kernel(args: &[Value], r: &AttrReader<'_>, max: bool) -> Result<Value, String> {
    let op = r.op_name();
    let x = tensor_arg(op, args, 0)?;
    let a = data_axes(op, &r.str("layout"))?;
    let x = x.permute(&to_nchw(a));
    let (n, c, h, w) = (x.shape()[0], x.shape()[1], x.shape()[2], x.shape()[3]);
    let k = pair(op, "pool_size", &r.ints("pool_size"))?;
    let s = pair(op, "strides", &r.ints("strides"))?;
    let d = pair(op, "dilation", &r.ints("dilation"))?;
    let p = padding4(op, &r.ints("padding"))?;
    let ceil = r.bool("ceil_mode");
    let include_pad = r.bool("count_include_pad");
    let oh = out_size(
        op,
        Dim::Static(h as i64),
        k[0],
        [p[0], p[2]],
        s[0],
        d[0],
        ceil,
    )?
    .value()
    .unwrap_or(0) as usize;
    let ow = out_size(
        op,
        Dim::Static(w as i64),
        k[1],
        [p[1], p[3]],
        s[1],
        d[1],
        ceil,
    )?
    .value()
    .unwrap_or(0) as usize;
    let xv = x.values();
    let mut out = vec![0.0; n * c * oh * ow];
    for b in 0..n {
        for ch in 0..c {
            for y in 0..oh {
                for xo in 0..ow {
                    let mut acc = if max { f64::NEG_INFINITY } else { 0.0 };
                    let mut count = 0usize;
                    for ky in 0..k[0] {
                        let iy = y as i64 * s[0] + ky * d[0] - p[0];
                        for kx in 0..k[1] {
                            let ix = xo as i64 * s[1] + kx * d[1] - p[1];
                            let inside = iy >= 0 && iy < h as i64 && ix >= 0 && ix < w as i64;
                            let in_pad = iy < h as i64 + p[2] && ix < w as i64 + p[3];
                            if inside {
                                let v = xv[((b * c + ch) * h + iy as usize) * w + ix as usize];
                                if max {
                                    if v > acc || v.is_nan() {
                                        acc = v;
                                    }
                                } else {
                                    acc += v;
                                }
                                count += 1;
                            } else if include_pad && in_pad {
                                count += 1;
                            }
                        }
                    }
                    out[((b * c + ch) * oh + y) * ow + xo] = if max {
                        acc
                    } else if count == 0 {
                        0.0
                    } else {
                        acc / count as f64
                    };
                }
            }
        }
    }
    let t = Tensor::from_vec(x.dtype(), &[n, c, oh, ow], out)?;
    Ok(Value::tensor(t.permute(&from_nchw(a))))
}

inventory::submit! {
    OpDef { name: "nn.max_pool2d", description: "2-D max pooling.", arity: Arity::Exact(1), attrs: POOL_ATTRS, pattern: OpPattern::OutEWiseFusable, type_rel: pool_rel, kernel: |a, r| pool_kernel(a, r, true) }
}
inventory::submit! {
    OpDef { name: "nn.avg_pool2d", description: "2-D average pooling.", arity: Arity::Exact(1), attrs: POOL_ATTRS, pattern: OpPattern::OutEWiseFusable, type_rel: pool_rel, kernel: |a, r| pool_kernel(a, r, false) }
}

fn global_pool_rel(args: &[Type], r: &AttrReader<'_>) -> Result<Type, String> {
    let op = r.op_name();
    let x = tensor_ty(op, args, 0)?;
    if x.rank() != 4 {
        return Err(format!("`{op}` needs rank-4 data, got `{x}`"));
    }
    let a = data_axes(op, &r.str("layout"))?;
    Ok(Type::with_dims(
        in_layout(
            a,
            x.shape[a[0]],
            x.shape[a[1]],
            Dim::Static(1),
            Dim::Static(1),
        ),
        x.dtype,
    ))
}

/// The average (or the maximum) over H and W of each image and channel.
fn global_pool_kernel(args: &[Value], r: &AttrReader<'_>, max: bool) -> Result<Value, String> {
    let op = r.op_name();
    let x = tensor_arg(op, args, 0)?;
    let a = data_axes(op, &r.str("layout"))?;
    let x = x.permute(&to_nchw(a));
    let (n, c, h, w) = (x.shape()[0], x.shape()[1], x.shape()[2], x.shape()[3]);
    let xv = x.values();
    let hw = (h * w).max(1);
    let out: Vec<f64> = (0..n * c)
        .map(|i| {
            let window = &xv[i * h * w..(i + 1) * h * w];
            if max {
                window.iter().copied().fold(f64::NEG_INFINITY, |m, v| {
                    if v > m || v.is_nan() { v } else { m }
                })
            } else {
                window.iter().sum::<f64>() / hw as f64
            }
        })
        .collect();
    let t = Tensor::from_vec(x.dtype(), &[n, c, 1, 1], out)?;
    Ok(Value::tensor(t.permute(&from_nchw(a))))
}

const GLOBAL_POOL_ATTRS: &[AttrSpec] = &[
    AttrSpec {
        name: "layout",
        kind: AttrKind::Str,
        default: AttrDefault::Str("NCHW"),
    },
    AttrSpec {
        name: "out_layout",
        kind: AttrKind::Str,
        default: AttrDefault::Str(""),
    },
];

inventory::submit! {
    OpDef { name: "nn.global_avg_pool2d", description: "Average over H and W: (N, C, H, W) gives (N, C, 1, 1).", arity: Arity::Exact(1), attrs: GLOBAL_POOL_ATTRS, pattern: OpPattern::OutEWiseFusable, type_rel: global_pool_rel, kernel: |a, r| global_pool_kernel(a, r, false) }
}

inventory::submit! {
    OpDef { name: "nn.global_max_pool2d", description: "Maximum over H and W: (N, C, H, W) gives (N, C, 1, 1).", arity: Arity::Exact(1), attrs: GLOBAL_POOL_ATTRS, pattern: OpPattern::OutEWiseFusable, type_rel: global_pool_rel, kernel: |a, r| global_pool_kernel(a, r, true) }
}

// ---------------------------------------------------------------- normalisation, softmax

/// Checks that `param` is a vector of the data's size along `axis`.
fn check_param(
    op: &str,
    name: &str,
    data: &TensorType,
    axis: usize,
    p: &TensorType,
) -> Result<(), String> {
    if p.rank() != 1 || !dims_match(p.shape[0], data.shape[axis]) {
        return Err(format!(
            "`{op}`: `{name}` must have shape ({}), got `{p}`",
            data.shape[axis]
        ));
    }
    if p.dtype != data.dtype {
        return Err(format!(
            "`{op}`: `{name}` must be {}, got `{p}`",
            data.dtype
        ));
    }
    Ok(())
}

/// Index of each element's position along `axis`, for a row-major tensor of `shape`.
fn axis_index(shape: &[usize], axis: usize) -> impl Fn(usize) -> usize + '_ {
    let inner: usize = shape[axis + 1..].iter().product();
    let size = shape[axis];
    move |i| (i / inner.max(1)) % size.max(1)
}

inventory::submit! {
    OpDef {
        name: "nn.batch_norm",
        description: "Batch normalisation (inference): (x - mean) / sqrt(var + epsilon) * gamma + beta; returns (out, mean, var).",
        arity: Arity::Exact(5),
        attrs: &[
            AttrSpec { name: "axis", kind: AttrKind::Int, default: AttrDefault::Int(1) },
            AttrSpec { name: "epsilon", kind: AttrKind::Float, default: AttrDefault::Float(1e-5) },
            AttrSpec { name: "center", kind: AttrKind::Bool, default: AttrDefault::Bool(true) },
            AttrSpec { name: "scale", kind: AttrKind::Bool, default: AttrDefault::Bool(true) },
        ],
        pattern: OpPattern::OutEWiseFusable,
        type_rel: |args, r| {
            let op = r.op_name();
            let x = float_ty(op, args, 0)?;
            let ax = axis(op, r.int("axis"), x.rank())?;
            for (i, name) in ["gamma", "beta", "moving_mean", "moving_var"].iter().enumerate() {
                check_param(op, name, x, ax, tensor_ty(op, args, i + 1)?)?;
            }
            let v = Type::with_dims(vec![x.shape[ax]], x.dtype);
            Ok(Type::Tuple(vec![Type::Tensor(x.clone()), v.clone(), v]))
        },
        kernel: |args, r| {
            let op = r.op_name();
            let x = tensor_arg(op, args, 0)?;
            let [g, b, m, v] = [1, 2, 3, 4].map(|i| tensor_arg(op, args, i).map(|t| t.values()));
            let (g, b, m, v) = (g?, b?, m?, v?);
            let ax = axis(op, r.int("axis"), x.shape().len())?;
            let eps = r.float("epsilon");
            let (center, scale) = (r.bool("center"), r.bool("scale"));
            let idx = axis_index(x.shape(), ax);
            let out: Vec<f64> = x.values().iter().enumerate().map(|(i, &val)| {
                let c = idx(i);
                let mut y = (val - m[c]) / (v[c] + eps).sqrt();
                if scale { y *= g[c]; }
                if center { y += b[c]; }
                y
            }).collect();
            let dt = x.dtype();
            Ok(Value::Tuple(vec![
                Value::tensor(Tensor::from_vec(dt, x.shape(), out)?),
                args[3].clone(),
                args[4].clone(),
            ]))
        },
    }
}

inventory::submit! {
    OpDef {
        name: "nn.layer_norm",
        description: "Layer normalisation over one axis: (x - mean) / sqrt(var + epsilon) * gamma + beta.",
        arity: Arity::Exact(3),
        attrs: &[
            AttrSpec { name: "axis", kind: AttrKind::Int, default: AttrDefault::Int(-1) },
            AttrSpec { name: "epsilon", kind: AttrKind::Float, default: AttrDefault::Float(1e-5) },
            AttrSpec { name: "center", kind: AttrKind::Bool, default: AttrDefault::Bool(true) },
            AttrSpec { name: "scale", kind: AttrKind::Bool, default: AttrDefault::Bool(true) },
        ],
        pattern: OpPattern::OutEWiseFusable,
        type_rel: |args, r| {
            let op = r.op_name();
            let x = float_ty(op, args, 0)?;
            let ax = axis(op, r.int("axis"), x.rank())?;
            check_param(op, "gamma", x, ax, tensor_ty(op, args, 1)?)?;
            check_param(op, "beta", x, ax, tensor_ty(op, args, 2)?)?;
            Ok(Type::Tensor(x.clone()))
        },
        kernel: |args, r| {
            let op = r.op_name();
            let x = tensor_arg(op, args, 0)?;
            let (g, b) = (tensor_arg(op, args, 1)?.values(), tensor_arg(op, args, 2)?.values());
            let ax = axis(op, r.int("axis"), x.shape().len())?;
            let eps = r.float("epsilon");
            let (center, scale) = (r.bool("center"), r.bool("scale"));
            let out = along_axis(x, ax, |lane| {
                let n = lane.len() as f64;
                let mean = lane.iter().sum::<f64>() / n;
                let var = lane.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
                lane.iter().enumerate().map(|(i, v)| {
                    let mut y = (v - mean) / (var + eps).sqrt();
                    if scale { y *= g[i]; }
                    if center { y += b[i]; }
                    y
                }).collect()
            });
            Ok(Value::tensor(Tensor::from_vec(x.dtype(), x.shape(), out)?))
        },
    }
}

/// Applies `f` to every 1-D lane along `axis` and writes the results back in place.
fn along_axis(x: &Tensor, axis: usize, f: impl Fn(&[f64]) -> Vec<f64>) -> Vec<f64> {
    let shape = x.shape();
    let size = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    let v = x.values();
    let mut out = vec![0.0; v.len()];
    let mut lane = vec![0.0; size];
    for o in 0..outer {
        for i in 0..inner {
            for (k, slot) in lane.iter_mut().enumerate() {
                *slot = v[(o * size + k) * inner + i];
            }
            for (k, y) in f(&lane).into_iter().enumerate() {
                out[(o * size + k) * inner + i] = y;
            }
        }
    }
    out
}

fn softmax_lane(lane: &[f64]) -> Vec<f64> {
    let max = lane.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let exps: Vec<f64> = lane.iter().map(|v| (v - max).exp()).collect();
    let sum: f64 = exps.iter().sum();
    exps.into_iter().map(|e| e / sum).collect()
}

fn softmax_rel(args: &[Type], r: &AttrReader<'_>) -> Result<Type, String> {
    let op = r.op_name();
    let x = float_ty(op, args, 0)?;
    axis(op, r.int("axis"), x.rank())?;
    Ok(Type::Tensor(x.clone()))
}

inventory::submit! {
    OpDef {
        name: "nn.softmax",
        description: "Softmax along an axis.",
        arity: Arity::Exact(1),
        attrs: &[AttrSpec { name: "axis", kind: AttrKind::Int, default: AttrDefault::Int(-1) }],
        pattern: OpPattern::OutEWiseFusable,
        type_rel: softmax_rel,
        kernel: |args, r| {
            let op = r.op_name();
            let x = tensor_arg(op, args, 0)?;
            let ax = axis(op, r.int("axis"), x.shape().len())?;
            Ok(Value::tensor(Tensor::from_vec(x.dtype(), x.shape(), along_axis(x, ax, softmax_lane))?))
        },
    }
}

inventory::submit! {
    OpDef {
        name: "nn.log_softmax",
        description: "Log of the softmax along an axis.",
        arity: Arity::Exact(1),
        attrs: &[AttrSpec { name: "axis", kind: AttrKind::Int, default: AttrDefault::Int(-1) }],
        pattern: OpPattern::OutEWiseFusable,
        type_rel: softmax_rel,
        kernel: |args, r| {
            let op = r.op_name();
            let x = tensor_arg(op, args, 0)?;
            let ax = axis(op, r.int("axis"), x.shape().len())?;
            let out = along_axis(x, ax, |lane| softmax_lane(lane).into_iter().map(f64::ln).collect());
            Ok(Value::tensor(Tensor::from_vec(x.dtype(), x.shape(), out)?))
        },
    }
}

inventory::submit! {
    OpDef {
        name: "nn.bias_add",
        description: "Adds a bias vector along an axis (default 1, the channels of NCHW).",
        arity: Arity::Exact(2),
        attrs: &[AttrSpec { name: "axis", kind: AttrKind::Int, default: AttrDefault::Int(1) }],
        pattern: OpPattern::Broadcast,
        type_rel: |args, r| {
            let op = r.op_name();
            let x = tensor_ty(op, args, 0)?;
            let ax = axis(op, r.int("axis"), x.rank())?;
            check_param(op, "bias", x, ax, tensor_ty(op, args, 1)?)?;
            Ok(Type::Tensor(x.clone()))
        },
        kernel: |args, r| {
            let op = r.op_name();
            let (x, b) = (tensor_arg(op, args, 0)?, tensor_arg(op, args, 1)?.values());
            let ax = axis(op, r.int("axis"), x.shape().len())?;
            let idx = axis_index(x.shape(), ax);
            let out: Vec<f64> = x.values().iter().enumerate().map(|(i, v)| v + b[idx(i)]).collect();
            Ok(Value::tensor(Tensor::from_vec(x.dtype(), x.shape(), out)?))
        },
    }
}

inventory::submit! {
    OpDef {
        name: "nn.dropout",
        description: "Dropout; at inference the identity. Returns (out, mask) as Relay does.",
        arity: Arity::Exact(1),
        attrs: &[AttrSpec { name: "rate", kind: AttrKind::Float, default: AttrDefault::Float(0.5) }],
        pattern: OpPattern::OutEWiseFusable,
        type_rel: |args, r| {
            let op = r.op_name();
            let x = float_ty(op, args, 0)?;
            let rate = r.float("rate");
            if !(0.0..1.0).contains(&rate) {
                return Err(format!("`nn.dropout`: rate must be in [0, 1), got {rate}"));
            }
            Ok(Type::Tuple(vec![Type::Tensor(x.clone()), Type::Tensor(x.clone())]))
        },
        kernel: |args, r| {
            let x = tensor_arg(r.op_name(), args, 0)?;
            let mask = Tensor::from_f64(x.dtype(), ArrayD::from_elem(IxDyn(x.shape()), 1.0));
            Ok(Value::Tuple(vec![args[0].clone(), Value::tensor(mask)]))
        },
    }
}

inventory::submit! {
    OpDef {
        name: "nn.batch_flatten",
        description: "Flattens all but the first dimension: (N, ...) gives (N, product).",
        arity: Arity::Exact(1),
        attrs: &[],
        pattern: OpPattern::Injective,
        type_rel: |args, r| {
            let op = r.op_name();
            let x = tensor_ty(op, args, 0)?;
            if x.rank() < 1 {
                return Err(format!("`{op}` needs data of rank ≥ 1, got `{x}`"));
            }
            let rest = match static_product(&x.shape[1..]) {
                Some(Some(n)) => Dim::Static(n),
                Some(None) => {
                    return Err(format!("`{op}`: `{x}` has too many elements per batch item"));
                }
                None => Dim::Any,
            };
            Ok(Type::with_dims(vec![x.shape[0], rest], x.dtype))
        },
        kernel: |args, r| {
            let x = tensor_arg(r.op_name(), args, 0)?;
            let n = x.shape()[0];
            let rest = x.len() / n.max(1);
            Ok(Value::tensor(x.reshape(&[n, rest])?))
        },
    }
}

/// Local response normalisation of one lane (the values along the channel axis): each value
/// divided by `(bias + alpha / size · Σ x²)^beta`, the sum over the `size` channels around
/// it (⌊(size−1)/2⌋ before, ⌈(size−1)/2⌉ after), as ONNX and TVM define it.
fn lrn_lane(lane: &[f64], size: usize, alpha: f64, beta: f64, bias: f64) -> Vec<f64> {
    let before = (size - 1) / 2;
    let after = size - 1 - before;
    (0..lane.len())
        .map(|c| {
            let lo = c.saturating_sub(before);
            let hi = (c + after).min(lane.len() - 1);
            let sq: f64 = lane[lo..=hi].iter().map(|v| v * v).sum();
            lane[c] / (bias + alpha / size as f64 * sq).powf(beta)
        })
        .collect()
}

inventory::submit! {
    OpDef {
        name: "nn.lrn",
        description: "Local response normalisation across channels: x / (bias + alpha / size · Σ x²)^beta over `size` neighbouring channels.",
        arity: Arity::Exact(1),
        attrs: &[
            AttrSpec { name: "size", kind: AttrKind::Int, default: AttrDefault::Int(5) },
            AttrSpec { name: "axis", kind: AttrKind::Int, default: AttrDefault::Int(1) },
            AttrSpec { name: "bias", kind: AttrKind::Float, default: AttrDefault::Float(2.0) },
            AttrSpec { name: "alpha", kind: AttrKind::Float, default: AttrDefault::Float(1e-4) },
            AttrSpec { name: "beta", kind: AttrKind::Float, default: AttrDefault::Float(0.75) },
        ],
        pattern: OpPattern::OutEWiseFusable,
        type_rel: |args, r| {
            let op = r.op_name();
            let x = float_ty(op, args, 0)?;
            axis(op, r.int("axis"), x.rank())?;
            if r.int("size") < 1 {
                return Err(format!("`{op}`: size must be at least 1, got {}", r.int("size")));
            }
            Ok(Type::Tensor(x.clone()))
        },
        kernel: |args, r| {
            let op = r.op_name();
            let x = tensor_arg(op, args, 0)?;
            let ax = axis(op, r.int("axis"), x.shape().len())?;
            let size = usize::try_from(r.int("size")).ok().filter(|&s| s >= 1).ok_or_else(|| format!("`{op}`: size must be at least 1"))?;
            let (alpha, beta, bias) = (r.float("alpha"), r.float("beta"), r.float("bias"));
            let out = along_axis(x, ax, |lane| lrn_lane(lane, size, alpha, beta, bias));
            Ok(Value::tensor(Tensor::from_vec(x.dtype(), x.shape(), out)?))
        },
    }
}
