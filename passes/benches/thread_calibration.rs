//! A calibration, not irpass: the arithmetic of `pipeline.rs`'s threads benchmark (1 000
//! products of two 48×48 matrices, computed in f64 and rounded to f32, each into a new buffer,
//! as `FoldConstant` folds `constant_matmuls(1000, 48)`) split over 1 and 2 plain threads, with
//! no pass manager, IR, pool or shared state. Its speed-up is what this machine gives an
//! embarrassingly parallel job, the yardstick for the 2-thread speed-up of the pass.
//!
//! ```text
//! cargo bench -p irpass-passes --bench thread_calibration
//! ```
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Instant;

const N: usize = 48;
const PRODUCTS: usize = 1_000;

/// Deterministic matrices with values in [-1, 1].
fn matrices(count: usize) -> Vec<Vec<f64>> {
    let mut seed = 42u64;
    (0..count)
        .map(|_| {
            (0..N * N)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    (seed % 2001) as f64 / 1000.0 - 1.0
                })
                .collect()
        })
        .collect()
}

/// `a × b`, rounded to f32 precision, in a new buffer.
fn product(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; N * N];
    for i in 0..N {
        for k in 0..N {
            let aik = a[i * N + k];
            for j in 0..N {
                out[i * N + j] += aik * b[k * N + j];
            }
        }
    }
    for v in &mut out {
        *v = *v as f32 as f64;
    }
    out
}

/// The products of `lhs[i] × rhs[i]`, one after another.
fn products(lhs: &[Vec<f64>], rhs: &[Vec<f64>]) -> Vec<Vec<f64>> {
    lhs.iter().zip(rhs).map(|(a, b)| product(a, b)).collect()
}

/// Seconds for all the products on `threads` threads (1 or 2: the calling thread takes the
/// first half, a scoped thread the second).
fn time(lhs: &[Vec<f64>], rhs: &[Vec<f64>], threads: usize) -> f64 {
    let start = Instant::now();
    let results = if threads == 1 {
        products(lhs, rhs)
    } else {
        let half = lhs.len() / 2;
        std::thread::scope(|s| {
            let second = s.spawn(|| products(&lhs[half..], &rhs[half..]));
            let mut first = products(&lhs[..half], &rhs[..half]);
            first.extend(second.join().expect("the worker finishes"));
            first
        })
    };
    let elapsed = start.elapsed().as_secs_f64();
    assert_eq!(black_box(results).len(), lhs.len());
    elapsed
}

fn main() {
    let (lhs, rhs) = (matrices(PRODUCTS), matrices(PRODUCTS));
    let rounds = 30;
    let (mut one, mut two) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        // Alternated, so that both see the same minutes of a shared machine.
        one.push(time(&lhs, &rhs, 1));
        two.push(time(&lhs, &rhs, 2));
    }
    let stats = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[0], v[v.len() / 2])
    };
    let ((one_best, one_median), (two_best, two_median)) = (stats(&mut one), stats(&mut two));
    println!(
        "thread_calibration: {PRODUCTS} products of {N}x{N}, {rounds} rounds: 1 thread best \
         {:.1} ms, median {:.1} ms; 2 threads best {:.1} ms, median {:.1} ms; speed-up {:.2} × \
         (best), {:.2} × (median)",
        one_best * 1e3,
        one_median * 1e3,
        two_best * 1e3,
        two_median * 1e3,
        one_best / two_best,
        one_median / two_median
    );
}
