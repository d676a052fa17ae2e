//! The 2-thread speed-up of `FoldConstant` on `constant_matmuls(1000, 48)` (as in
//! `pipeline.rs`'s threads benchmark), timed in the same rounds as a calibration that is not
//! irpass: the same arithmetic (1 000 products of two 48×48 matrices, computed in f64 and
//! rounded to f32, each into a new buffer) split over 1 and 2 plain threads, with no pass
//! manager, IR, pool or shared state. The calibration's speed-up is what this machine gives an
//! embarrassingly parallel job in those minutes, the yardstick for the pass's.
//!
//! ```text
//! cargo bench -p irpass-passes --bench thread_calibration
//! ```
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Instant;

use irpass::{Pass, PassContext};
use irpass_passes::FoldConstant;
use irpass_passes::ir::Module;
use irpass_passes::ir::models::constant_matmuls;

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

/// Seconds for `FoldConstant` over `module` under `ctx` (the folded module is released after
/// the timing, as in the criterion benchmark).
fn time_pass(fold: &Pass<Module>, module: &Module, ctx: &PassContext) -> f64 {
    let start = Instant::now();
    let out = fold.run_in(module.clone(), ctx).expect("the fold runs");
    let elapsed = start.elapsed().as_secs_f64();
    drop(black_box(out));
    elapsed
}

/// The best and the median of `v`.
fn stats(v: &mut [f64]) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[0], v[v.len() / 2])
}

/// One line of results: best and median at 1 and 2 threads, and the speed-ups.
fn report(what: &str, one: &mut [f64], two: &mut [f64]) -> (f64, f64) {
    let ((one_best, one_median), (two_best, two_median)) = (stats(one), stats(two));
    let speedup = (one_best / two_best, one_median / two_median);
    println!(
        "  {what}: 1 thread best {:.1} ms, median {:.1} ms; 2 threads best {:.1} ms, median \
         {:.1} ms; speed-up {:.2} × (best), {:.2} × (median)",
        one_best * 1e3,
        one_median * 1e3,
        two_best * 1e3,
        two_median * 1e3,
        speedup.0,
        speedup.1
    );
    speedup
}

fn main() {
    let (lhs, rhs) = (matrices(PRODUCTS), matrices(PRODUCTS));
    let module = constant_matmuls(PRODUCTS, N);
    let fold: Pass<Module> = FoldConstant::default().into();
    let contexts = [1, 2].map(|threads| {
        PassContext::builder()
            .opt_level(3)
            .threads(threads)
            .build()
            .expect("a valid context")
    });
    let rounds = 30;
    let [mut one, mut two, mut pass_one, mut pass_two] = [(); 4].map(|()| Vec::new());
    for _ in 0..rounds {
        // Alternated, so that the pass and the calibration see the same minutes of a shared
        // machine.
        one.push(time(&lhs, &rhs, 1));
        pass_one.push(time_pass(&fold, &module, &contexts[0]));
        two.push(time(&lhs, &rhs, 2));
        pass_two.push(time_pass(&fold, &module, &contexts[1]));
    }
    println!("thread_calibration: {PRODUCTS} products of {N}x{N}, {rounds} rounds alternated");
    let bare = report("calibration (plain threads)", &mut one, &mut two);
    let pass = report("FoldConstant (irpass, rayon)", &mut pass_one, &mut pass_two);
    println!(
        "  the pass's speed-up less the calibration's: {:+.2} (best), {:+.2} (median)",
        pass.0 - bare.0,
        pass.1 - bare.1
    );
}
