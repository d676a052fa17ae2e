//! Recurrent layers: `RNN`, `GRU` and `LSTM` (version 14: `layout`), forward, reverse or
//! bidirectional, with sequence lengths, initial states, LSTM peepholes, and their default
//! activations (an `activations` attribute keeps the node opaque).

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader};
use irpass_ir::{Dim, Tensor, TensorType};
use ndarray::{ArrayD, IxDyn};

use super::{Args, attr, native};

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn directions(r: &AttrReader<'_>) -> Result<usize, String> {
    match r.str("direction").as_str() {
        "forward" | "reverse" => Ok(1),
        "bidirectional" => Ok(2),
        other => Err(format!("`{}`: direction={other:?}", r.op_name())),
    }
}

fn rnn_type(
    a: &Args<'_, TensorType>,
    r: &AttrReader<'_>,
    cells: bool,
) -> Result<Vec<TensorType>, String> {
    let (x, w) = (a.float(0)?, a.get(1)?);
    if x.rank() != 3 || w.rank() != 3 {
        return Err(format!("`{}`: X {x} and W {w}", a.op()));
    }
    let d = Dim::Static(directions(r)? as i64);
    let h = match r.opt_int("hidden_size") {
        Some(h) => Dim::Static(h),
        None => Dim::Any,
    };
    let batch_first = r.int("layout") != 0;
    let (s, b) = if batch_first {
        (x.shape[1], x.shape[0])
    } else {
        (x.shape[0], x.shape[1])
    };
    let y = if batch_first {
        vec![b, s, d, h]
    } else {
        vec![s, d, b, h]
    };
    let state = if batch_first {
        vec![b, d, h]
    } else {
        vec![d, b, h]
    };
    let mut out = vec![
        TensorType {
            shape: y,
            dtype: x.dtype,
        },
        TensorType {
            shape: state.clone(),
            dtype: x.dtype,
        },
    ];
    if cells {
        out.push(TensorType {
            shape: state,
            dtype: x.dtype,
        });
    }
    Ok(out)
}

/// `gates` (G·H rows of a W or R matrix, row-major) times `v`, each gate's H values.
fn times(m: &[f64], v: &[f64], rows: usize) -> Vec<f64> {
    let cols = v.len();
    (0..rows)
        .map(|r| {
            m[r * cols..(r + 1) * cols]
                .iter()
                .zip(v)
                .map(|(a, b)| a * b)
                .sum()
        })
        .collect()
}

/// One step of a recurrent layer's direction: its input part (with its bias), its recurrent
/// part (without), and the direction's recurrent bias, recurrent weights and peepholes.
struct Step<'a> {
    xw: &'a [f64],
    hr: &'a [f64],
    rb: &'a [f64],
    r: &'a [f64],
    p: &'a [f64],
}

/// A recurrent layer's cell: the step and the (state, cell state) to the new ones.
type Cell<'c> = dyn Fn(&Step<'_>, &[f64], &[f64]) -> (Vec<f64>, Vec<f64>) + 'c;

fn run(
    a: &Args<'_, Tensor>,
    r: &AttrReader<'_>,
    g: usize,
    cell: &Cell<'_>,
    cells: bool,
) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let batch_first = r.int("layout") != 0;
    let xs = x.shape();
    let (s, b, i) = if batch_first {
        (xs[1], xs[0], xs[2])
    } else {
        (xs[0], xs[1], xs[2])
    };
    let (h, d) = (a.get(2)?.shape()[2], directions(r)?);
    let flat = |t: &Tensor| -> Vec<f64> { t.values() };
    let xv = flat(x);
    let (w, rw) = (flat(a.get(1)?), flat(a.get(2)?));
    let bias = a
        .opt(3)
        .map(Tensor::values)
        .unwrap_or_else(|| vec![0.0; d * 2 * g * h]);
    let lens: Vec<usize> = a
        .opt(4)
        .map(|t| t.to_i64().iter().map(|&v| v as usize).collect())
        .unwrap_or_else(|| vec![s; b]);
    let state_at = |t: Option<&Tensor>| -> Vec<f64> {
        match t {
            None => vec![0.0; d * b * h],
            Some(t) if batch_first => transpose_state(&flat(t), [b, d, h]),
            Some(t) => flat(t),
        }
    };
    let (h0, c0) = (state_at(a.opt(5)), state_at(a.opt(6)));
    let peep = a
        .opt(7)
        .map(Tensor::values)
        .unwrap_or_else(|| vec![0.0; d * 3 * h]);
    let reverse = r.str("direction") == "reverse";
    let mut y = vec![0.0; s * d * b * h];
    let (mut hn, mut cn) = (h0.clone(), c0.clone());
    for di in 0..d {
        let backward = reverse || di == 1;
        let (wd, rd) = (
            &w[di * g * h * i..(di + 1) * g * h * i],
            &rw[di * g * h * h..(di + 1) * g * h * h],
        );
        let (wb, rb) = (
            &bias[di * 2 * g * h..di * 2 * g * h + g * h],
            &bias[di * 2 * g * h + g * h..(di + 1) * 2 * g * h],
        );
        let p = &peep[di * 3 * h..(di + 1) * 3 * h];
        for bi in 0..b {
            let mut hs = h0[(di * b + bi) * h..(di * b + bi + 1) * h].to_vec();
            let mut cs = c0[(di * b + bi) * h..(di * b + bi + 1) * h].to_vec();
            let len = lens[bi].min(s);
            for step in 0..len {
                let t = if backward { len - 1 - step } else { step };
                let xt: Vec<f64> = (0..i)
                    .map(|k| {
                        xv[if batch_first {
                            (bi * s + t) * i + k
                        } else {
                            (t * b + bi) * i + k
                        }]
                    })
                    .collect();
                let mut xw = times(wd, &xt, g * h);
                for (v, bb) in xw.iter_mut().zip(wb) {
                    *v += bb;
                }
                let hr = times(rd, &hs, g * h);
                let step = Step {
                    xw: &xw,
                    hr: &hr,
                    rb,
                    r: rd,
                    p,
                };
                (hs, cs) = cell(&step, &hs, &cs);
                let at = if batch_first {
                    ((bi * s + t) * d + di) * h
                } else {
                    ((t * d + di) * b + bi) * h
                };
                y[at..at + h].copy_from_slice(&hs);
            }
            hn[(di * b + bi) * h..(di * b + bi + 1) * h].copy_from_slice(&hs);
            cn[(di * b + bi) * h..(di * b + bi + 1) * h].copy_from_slice(&cs);
        }
    }
    let mk = |shape: &[usize], v: Vec<f64>| -> Result<Tensor, String> {
        Ok(Tensor::from_f64(
            x.dtype(),
            ArrayD::from_shape_vec(IxDyn(shape), v).map_err(|e| e.to_string())?,
        ))
    };
    let back = |v: Vec<f64>| -> Vec<f64> {
        if batch_first {
            transpose_state(&v, [d, b, h])
        } else {
            v
        }
    };
    let (y_shape, state): (Vec<usize>, Vec<usize>) = if batch_first {
        (vec![b, s, d, h], vec![b, d, h])
    } else {
        (vec![s, d, b, h], vec![d, b, h])
    };
    let mut out = vec![mk(&y_shape, y)?, mk(&state, back(hn))?];
    if cells {
        out.push(mk(&state, back(cn))?);
    }
    Ok(out)
}

/// A state of shape (p, q, hidden) as (q, p, hidden).
fn transpose_state(v: &[f64], [p, q, h]: [usize; 3]) -> Vec<f64> {
    let mut out = vec![0.0; v.len()];
    for i in 0..p {
        for j in 0..q {
            out[(j * p + i) * h..(j * p + i + 1) * h]
                .copy_from_slice(&v[(i * q + j) * h..(i * q + j + 1) * h]);
        }
    }
    out
}

const RNN_ATTRS: [irpass_ir::op::AttrSpec; 4] = [
    attr("clip", AttrKind::Float, AttrDefault::Float(0.0)),
    attr("direction", AttrKind::Str, AttrDefault::Str("forward")),
    attr("hidden_size", AttrKind::OptInt, AttrDefault::Null),
    attr("layout", AttrKind::Int, AttrDefault::Int(0)),
];

/// A pre-activation, clipped to ±`clip` where it is set.
fn clipped(v: f64, clip: f64) -> f64 {
    if clip > 0.0 { v.clamp(-clip, clip) } else { v }
}

native! {
    /// The simple recurrent layer: Hₜ = tanh(Xₜ·Wᵀ + Hₜ₋₁·Rᵀ + Wb + Rb).
    "RNN" {
        versions: &[7, 14],
        attrs: [RNN_ATTRS[0], RNN_ATTRS[1], RNN_ATTRS[2], RNN_ATTRS[3]],
        pattern: Opaque,
        rel: |a, r| rnn_type(a, r, false),
        kernel: |a, r| {
            let clip = r.float("clip");
            run(a, r, 1, &|t, _, c| {
                (t.xw.iter().zip(t.hr).zip(t.rb).map(|((x, h), b)| clipped(x + h + b, clip).tanh()).collect(), c.to_vec())
            }, false)
        },
    }
}

native! {
    /// The gated recurrent unit (gates z, r, h; `linear_before_reset` applies the reset
    /// after the recurrent product).
    "GRU" {
        versions: &[7, 14],
        attrs: [RNN_ATTRS[0], RNN_ATTRS[1], RNN_ATTRS[2], RNN_ATTRS[3], attr("linear_before_reset", AttrKind::Int, AttrDefault::Int(0))],
        pattern: Opaque,
        rel: |a, r| rnn_type(a, r, false),
        kernel: gru,
    }
}

fn gru(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let clip = r.float("clip");
    let linear = r.int("linear_before_reset") != 0;
    let h = a.get(2)?.shape()[2];
    run(
        a,
        r,
        3,
        &|t, hs, c| {
            let gate = |g: usize, k: usize| t.xw[g * h + k] + t.hr[g * h + k] + t.rb[g * h + k];
            let z: Vec<f64> = (0..h).map(|k| sigmoid(clipped(gate(0, k), clip))).collect();
            let reset: Vec<f64> = (0..h).map(|k| sigmoid(clipped(gate(1, k), clip))).collect();
            // Without `linear_before_reset`, the reset applies to the state before R_h.
            let reset_state: Vec<f64> = (0..h).map(|j| reset[j] * hs[j]).collect();
            let cand: Vec<f64> = (0..h)
                .map(|k| {
                    let rec = if linear {
                        reset[k] * (t.hr[2 * h + k] + t.rb[2 * h + k])
                    } else {
                        let row = &t.r[(2 * h + k) * h..(2 * h + k + 1) * h];
                        row.iter()
                            .zip(&reset_state)
                            .map(|(a, b)| a * b)
                            .sum::<f64>()
                            + t.rb[2 * h + k]
                    };
                    clipped(t.xw[2 * h + k] + rec, clip).tanh()
                })
                .collect();
            (
                (0..h)
                    .map(|k| (1.0 - z[k]) * cand[k] + z[k] * hs[k])
                    .collect(),
                c.to_vec(),
            )
        },
        false,
    )
}

native! {
    /// The long short-term memory layer (gates i, o, f, c; peepholes P of i, o, f).
    "LSTM" {
        versions: &[7, 14],
        attrs: [RNN_ATTRS[0], RNN_ATTRS[1], RNN_ATTRS[2], attr("input_forget", AttrKind::Int, AttrDefault::Int(0)), RNN_ATTRS[3]],
        pattern: Opaque,
        rel: |a, r| rnn_type(a, r, true),
        kernel: |a, r| {
            let clip = r.float("clip");
            let h = a.get(2)?.shape()[2];
            run(a, r, 4, &|t, _, c| {
                let pre = |g: usize, k: usize| t.xw[g * h + k] + t.hr[g * h + k] + t.rb[g * h + k];
                let p = t.p;
                let mut hs = vec![0.0; h];
                let mut cs = vec![0.0; h];
                for k in 0..h {
                    let i = sigmoid(clipped(pre(0, k) + p[k] * c[k], clip));
                    let f = sigmoid(clipped(pre(2, k) + p[2 * h + k] * c[k], clip));
                    let g = clipped(pre(3, k), clip).tanh();
                    cs[k] = f * c[k] + i * g;
                    let o = sigmoid(clipped(pre(1, k) + p[h + k] * cs[k], clip));
                    hs[k] = o * cs[k].tanh();
                }
                (hs, cs)
            }, true)
        },
    }
}
