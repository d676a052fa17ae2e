//! Axis permutations of row-major data: a permutation that moves whole blocks of axes is a
//! batch of 2-D transposes, done tile by tile (the `transpose` crate) instead of element by
//! element through strided indices.

use bytes::Bytes;
use irpass::mapped::Scratch;

/// A permutation seen as `batch` transposes of `rows × cols` row-major matrices: axes of size
/// one dropped, runs of axes that stay together merged. `None` when the merged permutation is
/// neither the identity, `[1, 0]` nor `[0, 2, 1]`.
///
/// `axes[i]` is the input axis that output axis `i` reads.
pub(super) fn as_batched_transpose(shape: &[usize], axes: &[usize]) -> Option<Batched> {
    // The input axes of size > 1 in input order, and each one's place in that order.
    let mut place = vec![usize::MAX; shape.len()];
    let mut kept = 0;
    for (axis, &n) in shape.iter().enumerate() {
        if n != 1 {
            place[axis] = kept;
            kept += 1;
        }
    }
    // Blocks in output order: (place of the first input axis, elements).
    let mut blocks: Vec<(usize, usize)> = Vec::new();
    let mut last: Option<usize> = None;
    for &axis in axes.iter().filter(|&&a| shape[a] != 1) {
        let p = place[axis];
        match (last, blocks.last_mut()) {
            (Some(l), Some(block)) if p == l + 1 => block.1 *= shape[axis],
            _ => blocks.push((p, shape[axis])),
        }
        last = Some(p);
    }
    let size = |i: usize| blocks[i].1;
    // The output position of each block, the blocks taken in input order.
    let mut by_input: Vec<usize> = (0..blocks.len()).collect();
    by_input.sort_by_key(|&i| blocks[i].0);
    match by_input.as_slice() {
        [] => Some(Batched {
            batch: 1,
            rows: 1,
            cols: 1,
        }),
        [_] => Some(Batched {
            batch: 1,
            rows: 1,
            cols: size(0),
        }),
        // Output blocks (B, A) of input blocks (A, B).
        [1, 0] => Some(Batched {
            batch: 1,
            rows: size(1),
            cols: size(0),
        }),
        [0, 2, 1] => Some(Batched {
            batch: size(0),
            rows: size(2),
            cols: size(1),
        }),
        _ => None,
    }
}

/// `batch` row-major `rows × cols` matrices, one after another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Batched {
    pub batch: usize,
    pub rows: usize,
    pub cols: usize,
}

impl Batched {
    /// Each matrix of `src` transposed.
    pub fn apply<T: Copy + Default>(self, src: &[T]) -> Vec<T> {
        let mut out = vec![T::default(); src.len()];
        self.apply_into(src, &mut out);
        out
    }

    /// Each matrix of `src` transposed into `out`, of the same length.
    fn apply_into<T: Copy>(self, src: &[T], out: &mut [T]) {
        let each = self.rows * self.cols;
        if each == 0 || self.rows == 1 || self.cols == 1 {
            out.copy_from_slice(src);
            return;
        }
        for (from, to) in src.chunks_exact(each).zip(out.chunks_exact_mut(each)) {
            transpose::transpose(from, to, self.cols, self.rows);
        }
    }
}

/// Results from this size on are written into a [`Scratch`] (huge pages) rather than a `Vec`.
const SCRATCH_FROM: usize = 4 << 20;

/// Four-byte elements (little-endian `f32`s) permuted, as bytes.
pub(super) fn transposed_bytes(batched: Batched, elements: &[[u8; 4]]) -> Bytes {
    if elements.len() * 4 >= SCRATCH_FROM
        && let Ok(mut scratch) = Scratch::zeroed(elements.len() * 4)
    {
        batched.apply_into(elements, bytemuck::cast_slice_mut(scratch.as_mut_slice()));
        return scratch.freeze();
    }
    Bytes::from(batched.apply(elements).into_flattened())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{ArrayD, IxDyn};

    fn by_ndarray(shape: &[usize], axes: &[usize]) -> Vec<i64> {
        let n = shape.iter().product::<usize>() as i64;
        let a = ArrayD::from_shape_vec(IxDyn(shape), (0..n).collect()).unwrap();
        a.permuted_axes(IxDyn(axes)).iter().copied().collect()
    }

    #[test]
    fn batched_transposes_agree_with_strided_indexing() {
        let cases: &[(&[usize], &[usize])] = &[
            (&[384, 96], &[1, 0]),
            (&[3, 5, 7], &[0, 2, 1]),
            (&[3, 5, 7], &[1, 2, 0]),
            (&[3, 5, 7], &[2, 0, 1]),
            (&[2, 3, 4, 5], &[0, 1, 3, 2]),
            (&[2, 3, 4, 5], &[0, 3, 1, 2]),
            (&[1, 16, 1, 4], &[3, 0, 2, 1]),
            (&[6, 1, 5], &[2, 1, 0]),
            (&[4, 4], &[0, 1]),
            (&[0, 3], &[1, 0]),
        ];
        for &(shape, axes) in cases {
            let batched = as_batched_transpose(shape, axes)
                .unwrap_or_else(|| panic!("{shape:?} by {axes:?} is a batch of transposes"));
            let n = shape.iter().product::<usize>() as i64;
            let src: Vec<i64> = (0..n).collect();
            assert_eq!(
                batched.apply(&src),
                by_ndarray(shape, axes),
                "{shape:?} by {axes:?}"
            );
        }
    }

    #[test]
    fn a_permutation_of_three_blocks_that_is_not_a_batch_is_left_to_the_caller() {
        assert_eq!(
            as_batched_transpose(&[2, 3, 4], &[2, 0, 1]),
            Some(Batched {
                batch: 1,
                rows: 6,
                cols: 4
            })
        );
        assert_eq!(as_batched_transpose(&[2, 3, 4], &[1, 0, 2]), None);
        assert_eq!(as_batched_transpose(&[2, 3, 4, 5], &[3, 1, 2, 0]), None);
    }

    #[test]
    fn a_large_weight_read_as_bytes_is_transposed_into_bytes() {
        use crate::Tensor;
        // 4 MiB and more: the scratch buffer; below: a vector.
        for (rows, cols) in [(1030, 1031), (30, 31)] {
            let values: Vec<f32> = (0..rows * cols).map(|i| i as f32 * 0.5).collect();
            let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            let le = Tensor::from_f32_le(&[rows, cols], Bytes::from(bytes)).unwrap();
            let t = le.permute(&[1, 0]);
            assert!(t.f32_le_bytes().is_some(), "the result stays bytes");
            let want = Tensor::from_f32(&[rows, cols], values)
                .unwrap()
                .permute(&[1, 0]);
            assert_eq!(t.shape(), &[cols, rows]);
            assert!(t.bit_eq(&want), "{rows} x {cols}");
        }
    }
}
