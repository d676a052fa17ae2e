//! The optimisers of the `ai.onnx.preview.training` domain: `Adagrad`, `Adam` and `Momentum`.
//! Each takes a learning rate `R` and a step count `T`, then for each of `n` tensors to
//! optimise its value `X`, its gradient `G` and its accumulated state (`H`; `V` and `H`;
//! `V`), all `X`s first, then all `G`s, and so on; it gives the new values of each group in
//! the same order (the `X`s, then the states).

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader};
use irpass_ir::{Tensor, TensorType};
use ndarray::ArrayD;

use super::{Args, attr, native};

native! {
    /// ONNX training `Adagrad`: `r' = R / (1 + T·decay_factor)`, `g' = norm_coefficient·X +
    /// G`, `H' = H + g'²`, `X' = X - r'·g' / (√H' + epsilon)`.
    "Adagrad" {
        domain: "ai.onnx.preview.training",
        versions: &[1],
        attrs: [
            attr("decay_factor", AttrKind::Float, AttrDefault::Float(0.0)),
            attr("epsilon", AttrKind::Float, AttrDefault::Float(0.0)),
            attr("norm_coefficient", AttrKind::Float, AttrDefault::Float(0.0)),
        ],
        pattern: Opaque,
        rel: |a: &Args<'_, TensorType>, _: &AttrReader<'_>| same_types(a, 3),
        kernel: adagrad,
    }
}

native! {
    /// ONNX training `Adam`: `g' = norm_coefficient·X + G`, `V' = alpha·V + (1-alpha)·g'`,
    /// `H' = beta·H + (1-beta)·g'²`, `X' = (1 - norm_coefficient_post)·(X - r'·V' / (√H' +
    /// epsilon))` with `r' = R·√(1-beta^T) / (1-alpha^T)` once `T > 0`.
    "Adam" {
        domain: "ai.onnx.preview.training",
        versions: &[1],
        attrs: [
            attr("alpha", AttrKind::Float, AttrDefault::Float(0.9)),
            attr("beta", AttrKind::Float, AttrDefault::Float(0.999)),
            attr("epsilon", AttrKind::Float, AttrDefault::Float(0.0)),
            attr("norm_coefficient", AttrKind::Float, AttrDefault::Float(0.0)),
            attr("norm_coefficient_post", AttrKind::Float, AttrDefault::Float(0.0)),
        ],
        pattern: Opaque,
        rel: |a: &Args<'_, TensorType>, _: &AttrReader<'_>| same_types(a, 4),
        kernel: adam,
    }
}

native! {
    /// ONNX training `Momentum`: `g' = norm_coefficient·X + G`, `V' = alpha·V + beta'·g'`
    /// (`beta' = 1` at `T = 0`), `X' = X - R·V'` (`standard`) or `X - R·(g' + alpha·V')`
    /// (`nesterov`).
    "Momentum" {
        domain: "ai.onnx.preview.training",
        versions: &[1],
        attrs: [
            attr("alpha", AttrKind::Float, AttrDefault::Required),
            attr("beta", AttrKind::Float, AttrDefault::Required),
            attr("mode", AttrKind::Str, AttrDefault::Required),
            attr("norm_coefficient", AttrKind::Float, AttrDefault::Required),
        ],
        pattern: Opaque,
        rel: |a: &Args<'_, TensorType>, _: &AttrReader<'_>| same_types(a, 3),
        kernel: momentum,
    }
}

/// How many tensors a call of `count` inputs optimises, each in `per` inputs.
fn groups(op: &str, count: usize, per: usize) -> Result<usize, String> {
    match count.checked_sub(2) {
        Some(rest) if rest > 0 && rest % per == 0 => Ok(rest / per),
        _ => Err(format!(
            "`{op}`: {count} inputs, not 2 and {per} per tensor"
        )),
    }
}

/// The outputs' types: each group's inputs', one shape per optimised tensor.
fn same_types(a: &Args<'_, TensorType>, per: usize) -> Result<Vec<TensorType>, String> {
    a.float(0)?;
    let n = groups(a.op(), a.count(), per)?;
    let mut out = Vec::with_capacity(n * (per - 1));
    for k in (0..per).filter(|&k| k != 1) {
        for i in 0..n {
            let t = a.float(2 + k * n + i)?;
            if t != a.get(2 + i)? {
                return Err(format!("`{}`: tensor {i}'s inputs differ in type", a.op()));
            }
            out.push(t.clone());
        }
    }
    Ok(out)
}

/// Group `i` of `n`: its `per` tensors as f64 arrays.
fn group(a: &Args<'_, Tensor>, n: usize, per: usize, i: usize) -> Result<Vec<ArrayD<f64>>, String> {
    (0..per)
        .map(|k| Ok(a.get(2 + k * n + i)?.to_f64()))
        .collect()
}

/// Runs `step` on each group (R, T and its arrays → its new arrays); the outputs in order.
fn each_group(
    a: &Args<'_, Tensor>,
    per: usize,
    step: impl Fn(f64, f64, &[ArrayD<f64>]) -> Vec<ArrayD<f64>>,
) -> Result<Vec<Tensor>, String> {
    let n = groups(a.op(), a.count(), per)?;
    let scalar = |i: usize| -> Result<f64, String> {
        a.get(i)?
            .values()
            .first()
            .copied()
            .ok_or_else(|| format!("`{}`: input {i} is empty", a.op()))
    };
    let (r, t) = (scalar(0)?, scalar(1)?);
    let mut by_output: Vec<Vec<Tensor>> = vec![Vec::new(); per - 1];
    for i in 0..n {
        let arrays = group(a, n, per, i)?;
        let dtype = a.get(2 + i)?.dtype();
        for (k, new) in step(r, t, &arrays).into_iter().enumerate() {
            by_output[k].push(Tensor::from_f64(dtype, new));
        }
    }
    Ok(by_output.into_iter().flatten().collect())
}

fn adagrad(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let (decay, eps, norm) = (
        r.float("decay_factor"),
        r.float("epsilon"),
        r.float("norm_coefficient"),
    );
    each_group(a, 3, |rate, t, v| {
        let (x, g, h) = (&v[0], &v[1], &v[2]);
        let rate = rate / (1.0 + t * decay);
        let g = x * norm + g;
        let h = h + &g * &g;
        let x = x - &(&g * rate / &(h.sqrt() + eps));
        vec![x, h]
    })
}

fn adam(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let (alpha, beta, eps) = (r.float("alpha"), r.float("beta"), r.float("epsilon"));
    let (norm, post) = (
        r.float("norm_coefficient"),
        r.float("norm_coefficient_post"),
    );
    each_group(a, 4, |rate, t, arrays| {
        let (x, g, v, h) = (&arrays[0], &arrays[1], &arrays[2], &arrays[3]);
        let g = x * norm + g;
        let v = v * alpha + &g * (1.0 - alpha);
        let h = h * beta + &(&g * &g) * (1.0 - beta);
        let rate = match t > 0.0 {
            true => rate * (1.0 - beta.powf(t)).sqrt() / (1.0 - alpha.powf(t)),
            false => rate,
        };
        let x = (x - &(&v * rate / &(h.sqrt() + eps))) * (1.0 - post);
        vec![x, v, h]
    })
}

fn momentum(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let (alpha, beta, norm) = (
        r.float("alpha"),
        r.float("beta"),
        r.float("norm_coefficient"),
    );
    let nesterov = match r.str("mode").as_str() {
        "standard" => false,
        "nesterov" => true,
        other => return Err(format!("`Momentum`: mode `{other}` (standard or nesterov)")),
    };
    each_group(a, 3, |rate, t, arrays| {
        let (x, g, v) = (&arrays[0], &arrays[1], &arrays[2]);
        let g = x * norm + g;
        let beta = if t > 0.0 { beta } else { 1.0 };
        let v = v * alpha + &g * beta;
        let x = match nesterov {
            true => x - &((&g + &(&v * alpha)) * rate),
            false => x - &(&v * rate),
        };
        vec![x, v]
    })
}
