//! `Attention` (versions 23 and 24): scaled dot-product attention over heads, with a mask or
//! causal masking, a key/value cache, grouped-query heads, a soft cap, and the QK product as
//! an output.

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader};
use irpass_ir::{Dim, Tensor, TensorType};
use ndarray::{ArrayD, IxDyn};

use super::{Args, attr, native};

native! {
    /// softmax(Q·Kᵀ·scale (soft-capped by `softcap`) + mask)·V per head: inputs Q, K, V of
    /// rank 4 (batch, heads, sequence, size) or 3 (batch, sequence, heads·size, with
    /// `q_num_heads`, `kv_num_heads`), an additive or bool mask (input 3), a key/value cache
    /// (inputs 4 and 5, concatenated before K and V), the keys' valid lengths (input 6);
    /// `is_causal` masks later keys. Outputs: the result, the keys and values with the cache,
    /// and the QK product (`qk_matmul_output_mode`: 0 and 1 as multiplied, 2 with the mask,
    /// 3 after the softmax).
    "Attention" {
        versions: &[23, 24],
        attrs: [
            attr("is_causal", AttrKind::Int, AttrDefault::Int(0)),
            attr("kv_num_heads", AttrKind::OptInt, AttrDefault::Null),
            attr("q_num_heads", AttrKind::OptInt, AttrDefault::Null),
            attr("qk_matmul_output_mode", AttrKind::Int, AttrDefault::Int(0)),
            attr("scale", AttrKind::Float, AttrDefault::Float(0.0)),
            attr("softcap", AttrKind::Float, AttrDefault::Float(0.0)),
            attr("softmax_precision", AttrKind::OptInt, AttrDefault::Null),
        ],
        pattern: Opaque,
        rel: attention_type,
        kernel: attention,
    }
}

fn attention_type(a: &Args<'_, TensorType>, r: &AttrReader<'_>) -> Result<Vec<TensorType>, String> {
    let (q, k, v) = (a.float(0)?, a.float(1)?, a.float(2)?);
    if q.rank() != k.rank() || q.rank() != v.rank() || !matches!(q.rank(), 3 | 4) {
        return Err(format!(
            "`onnx.Attention`: Q {q}, K {k} and V {v} of rank 3 or 4 alike"
        ));
    }
    let dims = |d: Dim| d.value();
    let cached = |i: usize, t: &TensorType| -> Dim {
        match (a.opt(i), t.rank()) {
            (None, 4) => t.shape[2],
            (None, _) => t.shape[1],
            (Some(p), _) => match (
                dims(p.shape[2]),
                dims(if t.rank() == 4 {
                    t.shape[2]
                } else {
                    t.shape[1]
                }),
            ) {
                (Some(x), Some(y)) => Dim::Static(x + y),
                _ => Dim::Any,
            },
        }
    };
    let (y, present_k, present_v, qk);
    if q.rank() == 4 {
        y = TensorType {
            shape: vec![q.shape[0], q.shape[1], q.shape[2], v.shape[3]],
            dtype: q.dtype,
        };
        present_k = TensorType {
            shape: vec![k.shape[0], k.shape[1], cached(4, k), k.shape[3]],
            dtype: k.dtype,
        };
        present_v = TensorType {
            shape: vec![v.shape[0], v.shape[1], cached(5, v), v.shape[3]],
            dtype: v.dtype,
        };
        qk = TensorType {
            shape: vec![q.shape[0], q.shape[1], q.shape[2], cached(4, k)],
            dtype: q.dtype,
        };
    } else {
        let (hq, hkv) = (r.opt_int("q_num_heads"), r.opt_int("kv_num_heads"));
        let (Some(hq), Some(hkv)) = (hq, hkv) else {
            return Err("`onnx.Attention`: 3-D inputs need q_num_heads and kv_num_heads".into());
        };
        let per = |d: Dim, h: i64| dims(d).map_or(Dim::Any, |v| Dim::Static(v / h));
        let hidden = dims(v.shape[2]).map_or(Dim::Any, |x| Dim::Static(x / hkv * hq));
        y = TensorType {
            shape: vec![q.shape[0], q.shape[1], hidden],
            dtype: q.dtype,
        };
        present_k = TensorType {
            shape: vec![
                k.shape[0],
                Dim::Static(hkv),
                cached(4, k),
                per(k.shape[2], hkv),
            ],
            dtype: k.dtype,
        };
        present_v = TensorType {
            shape: vec![
                v.shape[0],
                Dim::Static(hkv),
                cached(5, v),
                per(v.shape[2], hkv),
            ],
            dtype: v.dtype,
        };
        qk = TensorType {
            shape: vec![q.shape[0], Dim::Static(hq), q.shape[1], cached(4, k)],
            dtype: q.dtype,
        };
    }
    Ok(vec![y, present_k, present_v, qk])
}

/// A rank-4 tensor's values with its shape.
struct Heads {
    v: Vec<f64>,
    s: [usize; 4],
}

impl Heads {
    fn at(&self, b: usize, h: usize, i: usize, d: usize) -> f64 {
        self.v[((b * self.s[1] + h) * self.s[2] + i) * self.s[3] + d]
    }
}

/// `t` as (batch, heads, sequence, size): rank 4 as it is, rank 3 split into `heads`.
fn heads(t: &Tensor, heads: Option<i64>) -> Result<Heads, String> {
    let v: Vec<f64> = t.values();
    match *t.shape() {
        [b, h, s, d] => Ok(Heads { v, s: [b, h, s, d] }),
        [b, s, hidden] => {
            let h = heads.ok_or("`onnx.Attention`: 3-D inputs need the numbers of heads")? as usize;
            let d = hidden / h.max(1);
            let mut out = vec![0.0; v.len()];
            for bi in 0..b {
                for si in 0..s {
                    for hi in 0..h {
                        for di in 0..d {
                            out[((bi * h + hi) * s + si) * d + di] =
                                v[(bi * s + si) * hidden + hi * d + di];
                        }
                    }
                }
            }
            Ok(Heads {
                v: out,
                s: [b, h, s, d],
            })
        }
        _ => Err("`onnx.Attention` takes tensors of rank 3 or 4".into()),
    }
}

/// `past` and `now` concatenated along the sequence axis.
fn with_cache(past: Option<Heads>, now: Heads) -> Heads {
    let Some(p) = past else { return now };
    let [b, h, sp, d] = p.s;
    let sn = now.s[2];
    let mut v = Vec::with_capacity(p.v.len() + now.v.len());
    for bi in 0..b {
        for hi in 0..h {
            v.extend_from_slice(&p.v[((bi * h + hi) * sp) * d..((bi * h + hi) * sp + sp) * d]);
            v.extend_from_slice(&now.v[((bi * h + hi) * sn) * d..((bi * h + hi) * sn + sn) * d]);
        }
    }
    Heads {
        v,
        s: [b, h, sp + sn, d],
    }
}

fn attention(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let q_in = a.get(0)?;
    let three = q_in.shape().len() == 3;
    let q = heads(q_in, r.opt_int("q_num_heads"))?;
    let kv_heads = r.opt_int("kv_num_heads");
    let (past_k, past_v) = match (a.opt(4), a.opt(5)) {
        (Some(k), Some(v)) => (Some(heads(k, None)?), Some(heads(v, None)?)),
        _ => (None, None),
    };
    let past_len = past_k.as_ref().map(|p| p.s[2]);
    let k = with_cache(past_k, heads(a.get(1)?, kv_heads)?);
    let v = with_cache(past_v, heads(a.get(2)?, kv_heads)?);
    let [nb, hq, sq, dq] = q.s;
    let (hkv, skv, dv) = (k.s[1], k.s[2], v.s[3]);
    if hq % hkv.max(1) != 0 {
        return Err(format!(
            "`onnx.Attention`: {hq} query heads for {hkv} key heads"
        ));
    }
    let scale = match r.float("scale") {
        0.0 => 1.0 / (dq as f64).sqrt(),
        s => s,
    };
    let softcap = r.float("softcap");
    let bias = Bias::of(a, r, past_len, sq);
    let mode = r.int("qk_matmul_output_mode");
    let mut y = vec![0.0; nb * hq * sq * dv];
    let mut qk_out = vec![0.0; nb * hq * sq * skv];
    for b in 0..nb {
        for h in 0..hq {
            let kh = h / (hq / hkv);
            for i in 0..sq {
                let mut row: Vec<f64> = (0..skv)
                    .map(|j| {
                        let dot: f64 = (0..dq)
                            .map(|d| q.at(b, h, i, d) * k.at(b, kh, j, d))
                            .sum::<f64>()
                            * scale;
                        if softcap > 0.0 {
                            softcap * (dot / softcap).tanh()
                        } else {
                            dot
                        }
                    })
                    .collect();
                let biases: Vec<f64> = (0..skv).map(|j| bias.at(b, h, i, j)).collect();
                let at = |j: usize| ((b * hq + h) * sq + i) * skv + j;
                for j in 0..skv {
                    if mode <= 1 {
                        qk_out[at(j)] = row[j];
                    }
                    row[j] += biases[j];
                    if mode == 2 {
                        qk_out[at(j)] = row[j];
                    }
                }
                let p = softmax(&row, &biases);
                if mode == 3 {
                    for j in 0..skv {
                        qk_out[at(j)] = p[j];
                    }
                }
                for d in 0..dv {
                    y[((b * hq + h) * sq + i) * dv + d] =
                        (0..skv).map(|j| p[j] * v.at(b, kh, j, d)).sum();
                }
            }
        }
    }
    let dtype = q_in.dtype();
    let mk = |shape: &[usize], v: Vec<f64>| -> Result<Tensor, String> {
        Ok(Tensor::from_f64(
            dtype,
            ArrayD::from_shape_vec(IxDyn(shape), v).map_err(|e| e.to_string())?,
        ))
    };
    let y = if three {
        mk(&[nb, sq, hq * dv], merge_heads(&y, [nb, hq, sq, dv]))?
    } else {
        mk(&[nb, hq, sq, dv], y)?
    };
    Ok(vec![
        y,
        mk(&k.s, k.v)?,
        mk(&v.s, v.v)?,
        mk(&[nb, hq, sq, skv], qk_out)?,
    ])
}

native! {
    /// Rotary position embedding of input 0 (batch, sequence, heads·size with `num_heads`, or
    /// batch, heads, sequence, size): the first `rotary_embedding_dim` of each head's values
    /// (all without it) rotated in pairs (halves, or neighbours with `interleaved=1`) by the
    /// cosines and sines of inputs 1 and 2 (at the positions of input 3 where given).
    "RotaryEmbedding" {
        versions: &[23],
        attrs: [
            attr("interleaved", AttrKind::Int, AttrDefault::Int(0)),
            attr("num_heads", AttrKind::Int, AttrDefault::Int(0)),
            attr("rotary_embedding_dim", AttrKind::Int, AttrDefault::Int(0)),
        ],
        pattern: Opaque,
        rel: |a, _| Ok(vec![a.float(0)?.clone()]),
        kernel: rotary,
    }
}

fn rotary(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let shape = x.shape().to_vec();
    let v: Vec<f64> = x.values();
    // (batch, sequence, heads, size), and the strides of the first three in `v`.
    let (b, s, h, d, strides) = match shape[..] {
        [b, h, s, d] => (b, s, h, d, [h * s * d, d, s * d]),
        [b, s, hidden] => {
            let h = usize::try_from(r.int("num_heads"))
                .ok()
                .filter(|&h| h > 0)
                .ok_or("`onnx.RotaryEmbedding`: 3-D input needs num_heads")?;
            if hidden % h != 0 {
                return Err(format!(
                    "`onnx.RotaryEmbedding`: {hidden} values for {h} heads"
                ));
            }
            let d = hidden / h;
            (b, s, h, d, [s * hidden, hidden, d])
        }
        _ => return Err("`onnx.RotaryEmbedding` takes a tensor of rank 3 or 4".into()),
    };
    let at = |bi: usize, si: usize, hi: usize, di: usize| {
        bi * strides[0] + si * strides[1] + hi * strides[2] + di
    };
    let dim = match r.int("rotary_embedding_dim") {
        0 => d,
        n => usize::try_from(n)
            .ok()
            .filter(|&n| n <= d)
            .ok_or_else(|| format!("`onnx.RotaryEmbedding`: rotary_embedding_dim {n} of {d}"))?,
    };
    let half = dim / 2;
    let (cos, sin) = (a.get(1)?, a.get(2)?);
    let (cv, sv): (Vec<f64>, Vec<f64>) = (cos.values(), sin.values());
    let positions: Option<Vec<i64>> = a.opt(3).map(|p| p.to_i64().iter().copied().collect());
    // Every cache row read must be in the caches, and a position id for each token given.
    let rows = cv.len().min(sv.len()) / half.max(1);
    let in_cache = match &positions {
        Some(p) => {
            p.len() >= b * s
                && p.iter()
                    .all(|&i| usize::try_from(i).is_ok_and(|i| i < rows))
        }
        None => b * s <= rows,
    };
    if !in_cache {
        return Err(format!(
            "`onnx.RotaryEmbedding`: caches of {rows} rows for {b}×{s} tokens (or positions out of them)"
        ));
    }
    // The cache row of (batch, position): by position ids (rows of the cache), else the
    // cache is (batch, sequence, half) itself.
    let row = |bi: usize, si: usize| -> usize {
        match &positions {
            Some(p) => p[bi * s + si] as usize * half,
            None => (bi * s + si) * half,
        }
    };
    let interleaved = r.int("interleaved") != 0;
    let mut out = v.clone();
    for bi in 0..b {
        for si in 0..s {
            let base = row(bi, si);
            for hi in 0..h {
                for k in 0..half {
                    let (i1, i2) = if interleaved {
                        (2 * k, 2 * k + 1)
                    } else {
                        (k, k + half)
                    };
                    let (x1, x2) = (v[at(bi, si, hi, i1)], v[at(bi, si, hi, i2)]);
                    let (c, sn) = (cv[base + k], sv[base + k]);
                    out[at(bi, si, hi, i1)] = c * x1 - sn * x2;
                    out[at(bi, si, hi, i2)] = sn * x1 + c * x2;
                }
            }
        }
    }
    Ok(vec![Tensor::from_vec(x.dtype(), &shape, out)?])
}

/// The softmax of a row of scores, 0 where every key is masked (by its `biases`).
fn softmax(row: &[f64], biases: &[f64]) -> Vec<f64> {
    let masked = biases.iter().all(|x| *x == f64::NEG_INFINITY);
    let m = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let m = if m == f64::NEG_INFINITY { 0.0 } else { m };
    let e: Vec<f64> = row.iter().map(|x| (x - m).exp()).collect();
    let s: f64 = e.iter().sum();
    e.iter()
        .map(|x| if masked || s == 0.0 { 0.0 } else { x / s })
        .collect()
}

/// (batch, heads, sequence, size) values as (batch, sequence, heads·size).
fn merge_heads(y: &[f64], [nb, hq, sq, dv]: [usize; 4]) -> Vec<f64> {
    let mut out = vec![0.0; y.len()];
    for b in 0..nb {
        for h in 0..hq {
            for i in 0..sq {
                let from = ((b * hq + h) * sq + i) * dv;
                let to = (b * sq + i) * hq * dv + h * dv;
                out[to..to + dv].copy_from_slice(&y[from..from + dv]);
            }
        }
    }
    out
}

/// What is added to each score: the mask (bool masks as 0 and -inf), broadcast right-aligned
/// to (batch, heads, q, kv) and -inf past its keys; -inf for later keys with causal masking
/// (after the cache, or the valid keys) and for keys past a batch's valid length.
struct Bias {
    mask: Option<(Vec<f64>, Vec<usize>)>,
    causal: bool,
    past: Option<usize>,
    nonpad: Option<Vec<i64>>,
    sq: usize,
}

impl Bias {
    fn of(a: &Args<'_, Tensor>, r: &AttrReader<'_>, past: Option<usize>, sq: usize) -> Bias {
        let mask = a.opt(3).map(|m| {
            let bool_mask = m.dtype() == irpass_ir::DType::Bool;
            let additive = |x: f64| match (bool_mask, x != 0.0) {
                (false, _) => x,
                (true, true) => 0.0,
                (true, false) => f64::NEG_INFINITY,
            };
            (
                m.to_f64().iter().map(|&x| additive(x)).collect(),
                m.shape().to_vec(),
            )
        });
        Bias {
            mask,
            causal: r.int("is_causal") != 0,
            past,
            nonpad: a.opt(6).map(|t| t.to_i64().iter().copied().collect()),
            sq,
        }
    }

    fn mask_at(&self, full: [usize; 4]) -> f64 {
        let Some((vals, shape)) = &self.mask else {
            return 0.0;
        };
        let n = shape.len();
        if full[3] >= shape[n - 1] {
            return f64::NEG_INFINITY;
        }
        let (mut off, mut stride) = (0, 1);
        for d in (0..n).rev() {
            let idx = if shape[d] == 1 { 0 } else { full[4 - n + d] };
            off += idx * stride;
            stride *= shape[d];
        }
        vals[off]
    }

    fn at(&self, b: usize, h: usize, i: usize, j: usize) -> f64 {
        let mut x = self.mask_at([b, h, i, j]);
        if self.causal {
            let offset = match (self.past, &self.nonpad) {
                (Some(p), _) => p as i64,
                (None, Some(n)) => n[b] - self.sq as i64,
                _ => 0,
            };
            if j as i64 > i as i64 + offset {
                x = f64::NEG_INFINITY;
            }
        }
        if let Some(n) = &self.nonpad
            && j as i64 >= n[b]
        {
            x = f64::NEG_INFINITY;
        }
        x
    }
}
