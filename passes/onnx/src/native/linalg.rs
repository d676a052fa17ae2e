//! Linear algebra: `Einsum` and `Det`.

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader};
use irpass_ir::{Dim, Tensor, TensorType};

use super::{Args, attr, native};

/// An einsum equation with each operand's and the output's subscripts, `...` expanded into
/// subscripts of their own (upper-case letters, which the equation's lower-case ones never
/// are), aligned to the right across operands.
fn parse(eq: &str, ranks: &[usize]) -> Result<(Vec<Vec<char>>, Vec<char>), String> {
    let eq: String = eq.chars().filter(|c| !c.is_whitespace()).collect();
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l.to_string(), Some(r.to_string())),
        None => (eq.clone(), None),
    };
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != ranks.len() {
        return Err(format!(
            "`onnx.Einsum`: {} terms for {} inputs",
            terms.len(),
            ranks.len()
        ));
    }
    let ell = terms
        .iter()
        .zip(ranks)
        .map(|(t, &r)| {
            if t.contains("...") {
                r + 3 - t.len()
            } else {
                0
            }
        })
        .max()
        .unwrap_or(0);
    let dots: Vec<char> = (0..ell).map(|i| (b'A' + i as u8) as char).collect();
    let expand = |t: &str, r: usize| -> Vec<char> {
        match t.split_once("...") {
            Some((a, b)) => {
                let k = r + 3 - t.len();
                a.chars()
                    .chain(dots[ell - k..].iter().copied())
                    .chain(b.chars())
                    .collect()
            }
            None => t.chars().collect(),
        }
    };
    let inputs: Vec<Vec<char>> = terms
        .iter()
        .zip(ranks)
        .map(|(t, &r)| expand(t, r))
        .collect();
    for (t, &r) in inputs.iter().zip(ranks) {
        if t.len() != r {
            return Err(format!(
                "`onnx.Einsum`: a term of {} subscripts for a rank-{r} input",
                t.len()
            ));
        }
    }
    let output = match rhs {
        Some(r) => expand(&r, ell + r.len().saturating_sub(3)),
        None => {
            let mut once: Vec<char> = inputs
                .iter()
                .flatten()
                .copied()
                .filter(|c| c.is_lowercase())
                .collect();
            once.sort_unstable();
            let single: Vec<char> = once
                .iter()
                .copied()
                .filter(|c| once.iter().filter(|d| *d == c).count() == 1)
                .collect();
            dots.iter().copied().chain(single).collect()
        }
    };
    Ok((inputs, output))
}

native! {
    /// The Einstein summation the `equation` names (`ij,jk->ik`), `...` included.
    "Einsum" {
        versions: &[12],
        attrs: [attr("equation", AttrKind::Str, AttrDefault::Required)],
        pattern: Opaque,
        rel: |a, r| {
            let ins: Vec<&TensorType> = (0..a.count()).map(|i| a.get(i)).collect::<Result<_, _>>()?;
            let ranks: Vec<usize> = ins.iter().map(|t| t.rank()).collect();
            let (terms, out) = parse(&r.str("equation"), &ranks)?;
            let size = |c: char| -> Dim {
                let mut found = Dim::Any;
                for (t, ty) in terms.iter().zip(&ins) {
                    for (k, &s) in t.iter().enumerate() {
                        if s == c && ty.shape[k] != Dim::Static(1) {
                            found = ty.shape[k];
                        }
                    }
                }
                found
            };
            let shape = out.iter().map(|&c| size(c)).collect();
            Ok(vec![TensorType { shape, dtype: ins.first().ok_or("`onnx.Einsum` without inputs")?.dtype }])
        },
        kernel: einsum,
    }
}

fn einsum(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let ins: Vec<&Tensor> = (0..a.count()).map(|i| a.get(i)).collect::<Result<_, _>>()?;
    let ranks: Vec<usize> = ins.iter().map(|t| t.shape().len()).collect();
    let (terms, out) = parse(&r.str("equation"), &ranks)?;
    // Every subscript with its size (1 only where no operand has it larger: broadcasting).
    let mut letters: Vec<(char, usize)> = Vec::new();
    for (t, x) in terms.iter().zip(&ins) {
        for (k, &c) in t.iter().enumerate() {
            let n = x.shape()[k];
            match letters.iter_mut().find(|(d, _)| *d == c) {
                Some((_, m)) if *m == 1 => *m = n,
                Some((_, m)) if n != 1 && *m != n => {
                    return Err(format!("`onnx.Einsum`: subscript {c} of sizes {m} and {n}"));
                }
                Some(_) => {}
                None => letters.push((c, n)),
            }
        }
    }
    let order: Vec<char> = out
        .iter()
        .copied()
        .chain(letters.iter().map(|l| l.0).filter(|c| !out.contains(c)))
        .collect();
    let sizes: Vec<usize> = order
        .iter()
        .map(|c| letters.iter().find(|l| l.0 == *c).map_or(1, |l| l.1))
        .collect();
    let values: Vec<Vec<f64>> = ins.iter().map(|x| x.values()).collect();
    // For each operand, the stride of each subscript in `order` (0 where it has none or is
    // broadcast).
    let strides: Vec<Vec<usize>> = terms
        .iter()
        .zip(&ins)
        .map(|(t, x)| {
            let sh = x.shape();
            let st: Vec<usize> = (0..sh.len())
                .map(|i| sh[i + 1..].iter().product())
                .collect();
            order
                .iter()
                .map(|c| {
                    t.iter()
                        .enumerate()
                        .filter(|(k, d)| *d == c && sh[*k] != 1)
                        .map(|(k, _)| st[k])
                        .sum()
                })
                .collect()
        })
        .collect();
    let out_shape: Vec<usize> = sizes[..out.len()].to_vec();
    let out_strides: Vec<usize> = (0..out.len())
        .map(|i| out_shape[i + 1..].iter().product())
        .collect();
    let mut result = vec![0.0; out_shape.iter().product()];
    // Every assignment of the subscripts, in row-major order of `order`.
    let mut idx = vec![0usize; order.len()];
    for _ in 0..sizes.iter().product::<usize>() {
        let mut p = 1.0;
        for (v, st) in values.iter().zip(&strides) {
            p *= v[idx.iter().zip(st).map(|(i, s)| i * s).sum::<usize>()];
        }
        result[idx
            .iter()
            .zip(&out_strides)
            .map(|(i, s)| i * s)
            .sum::<usize>()] += p;
        for d in (0..order.len()).rev() {
            idx[d] += 1;
            if idx[d] < sizes[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Ok(vec![Tensor::from_vec(ins[0].dtype(), &out_shape, result)?])
}

native! {
    /// The determinants of the square matrices in the last two axes.
    "Det" {
        versions: &[11],
        attrs: [],
        pattern: Opaque,
        rel: |a, _| {
            let x = a.float(0)?;
            let r = x.rank();
            if r < 2 || matches!((x.shape[r - 2], x.shape[r - 1]), (Dim::Static(p), Dim::Static(q)) if p != q) {
                return Err(format!("`onnx.Det` takes square matrices, got {x}"));
            }
            Ok(vec![TensorType { shape: x.shape[..x.rank() - 2].to_vec(), dtype: x.dtype }])
        },
        kernel: |a, _| {
            let x = a.get(0)?;
            let sh = x.shape();
            let n = sh[sh.len() - 1];
            if sh.len() < 2 || sh[sh.len() - 2] != n {
                return Err(format!("`onnx.Det` of a tensor of shape {sh:?}"));
            }
            let v: Vec<f64> = x.values();
            let dets: Vec<f64> = v.chunks(n * n).map(|m| det(m.to_vec(), n)).collect();
                        Ok(vec![Tensor::from_vec(x.dtype(), &sh[..sh.len() - 2], dets)?])
        },
    }
}

/// The determinant of an n×n row-major matrix, by elimination with partial pivoting.
fn det(mut m: Vec<f64>, n: usize) -> f64 {
    let mut d = 1.0;
    for c in 0..n {
        let p = (c..n)
            .max_by(|&i, &j| m[i * n + c].abs().total_cmp(&m[j * n + c].abs()))
            .unwrap_or(c);
        if m[p * n + c] == 0.0 {
            return 0.0;
        }
        if p != c {
            for k in 0..n {
                m.swap(p * n + k, c * n + k);
            }
            d = -d;
        }
        d *= m[c * n + c];
        for i in c + 1..n {
            let f = m[i * n + c] / m[c * n + c];
            for k in c..n {
                m[i * n + k] -= f * m[c * n + k];
            }
        }
    }
    d
}
