//! Training losses: `NegativeLogLikelihoodLoss` and `SoftmaxCrossEntropyLoss` (with its
//! log-probabilities output).

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader};
use irpass_ir::{Dim, Tensor, TensorType};

use super::{Args, attr, native};

const LOSS_ATTRS: [irpass_ir::op::AttrSpec; 2] = [
    attr("ignore_index", AttrKind::OptInt, AttrDefault::Null),
    attr("reduction", AttrKind::Str, AttrDefault::Str("mean")),
];

/// The loss's type: the input's without the class axis (`reduction="none"`), else a scalar.
fn loss_type(a: &Args<'_, TensorType>, r: &AttrReader<'_>) -> Result<TensorType, String> {
    let x = a.float(0)?;
    if x.rank() < 2 {
        return Err(format!("`{}` takes (N, C, ...) scores, got {x}", a.op()));
    }
    let shape: Vec<Dim> = match r.str("reduction").as_str() {
        "none" => x
            .shape
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != 1)
            .map(|(_, d)| *d)
            .collect(),
        "sum" | "mean" => Vec::new(),
        other => return Err(format!("`{}`: reduction={other:?}", a.op())),
    };
    Ok(TensorType {
        shape,
        dtype: x.dtype,
    })
}

/// The negative log-likelihood of `log_probs` (N, C, d..., row-major) at `target` (N, d...),
/// weighted by `weight` (C) and reduced as `reduction` says.
fn nll(
    op: &str,
    log_probs: &[f64],
    shape: &[usize],
    target: &[i64],
    weight: Option<&[f64]>,
    r: &AttrReader<'_>,
) -> Result<(Vec<usize>, Vec<f64>), String> {
    let (n, c) = (shape[0], shape[1]);
    let inner: usize = shape[2..].iter().product();
    if weight.is_some_and(|w| w.len() != c) {
        return Err(format!("`{op}`: a weight per class is expected ({c})"));
    }
    let ignore = r.opt_int("ignore_index");
    let mut losses = Vec::with_capacity(n * inner);
    let mut weights = Vec::with_capacity(n * inner);
    for b in 0..n {
        for d in 0..inner {
            let t = *target
                .get(b * inner + d)
                .ok_or_else(|| format!("`{op}`: too few targets"))?;
            if Some(t) == ignore {
                losses.push(0.0);
                weights.push(0.0);
                continue;
            }
            let class = usize::try_from(t)
                .ok()
                .filter(|&t| t < c)
                .ok_or_else(|| format!("`{op}`: target {t} of {c} classes"))?;
            let w = weight.map_or(1.0, |w| w[class]);
            losses.push(-log_probs[(b * c + class) * inner + d] * w);
            weights.push(w);
        }
    }
    Ok(match r.str("reduction").as_str() {
        "none" => {
            let mut s = vec![n];
            s.extend_from_slice(&shape[2..]);
            (s, losses)
        }
        "sum" => (Vec::new(), vec![losses.iter().sum()]),
        _ => (
            Vec::new(),
            vec![losses.iter().sum::<f64>() / weights.iter().sum::<f64>()],
        ),
    })
}

native! {
    /// The negative log-likelihood loss of log-probabilities (N, C, ...) at integer targets
    /// (N, ...), each weighted by its class's weight (input 2); a target equal to
    /// `ignore_index` counts for nothing; `reduction` is `none`, `sum` or `mean` (weighted).
    "NegativeLogLikelihoodLoss" {
        versions: &[12],
        attrs: [LOSS_ATTRS[0], LOSS_ATTRS[1]],
        pattern: Opaque,
        rel: |a, r| Ok(vec![loss_type(a, r)?]),
        kernel: |a, r| {
            let (x, t) = (a.get(0)?, a.get(1)?);
            let weight = a.opt(2).map(Tensor::values);
            let target: Vec<i64> = t.to_i64().iter().copied().collect();
            let (shape, v) = nll(a.op(), &x.values(), x.shape(), &target, weight.as_deref(), r)?;
            Ok(vec![Tensor::from_vec(x.dtype(), &shape, v)?])
        },
    }
}

native! {
    /// The cross-entropy loss of scores (N, C, ...) against integer labels (N, ...): the
    /// negative log-likelihood of their softmax over C, weighted, ignored and reduced as
    /// `NegativeLogLikelihoodLoss`; output 1 is the log-probabilities.
    "SoftmaxCrossEntropyLoss" {
        versions: &[12],
        attrs: [LOSS_ATTRS[0], LOSS_ATTRS[1]],
        pattern: Opaque,
        rel: |a, r| Ok(vec![loss_type(a, r)?, a.float(0)?.clone()]),
        kernel: |a, r| {
            let (x, t) = (a.get(0)?, a.get(1)?);
            let shape = x.shape().to_vec();
            let (n, c, inner) = (shape[0], shape[1], shape[2..].iter().product::<usize>());
            let scores = x.values();
            let mut log_probs = vec![0.0; scores.len()];
            for b in 0..n {
                for d in 0..inner {
                    let at = |k: usize| (b * c + k) * inner + d;
                    let m = (0..c).map(|k| scores[at(k)]).fold(f64::NEG_INFINITY, f64::max);
                    let lse = m + (0..c).map(|k| (scores[at(k)] - m).exp()).sum::<f64>().ln();
                    for k in 0..c {
                        log_probs[at(k)] = scores[at(k)] - lse;
                    }
                }
            }
            let weight = a.opt(2).map(Tensor::values);
            let target: Vec<i64> = t.to_i64().iter().copied().collect();
            let (loss_shape, v) = nll(a.op(), &log_probs, &shape, &target, weight.as_deref(), r)?;
            Ok(vec![Tensor::from_vec(x.dtype(), &loss_shape, v)?, Tensor::from_vec(x.dtype(), &shape, log_probs)?])
        },
    }
}
