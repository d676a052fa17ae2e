//! Text features: `TfIdfVectorizer`, the n-gram counts of integer token sequences.

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader};
use irpass_ir::{DType, Dim, Tensor, TensorType};
use rustc_hash::FxHashMap;

use super::{Args, attr, native};

native! {
    /// The n-grams of each row of input 0 (int32 or int64 tokens; rank 1, or 2 for a batch)
    /// counted against a pool (`pool_int64s`, the n-grams of each length from the offset
    /// `ngram_counts` gives; lengths `min_gram_length` to `max_gram_length`, tokens up to
    /// `max_skip_count` apart), each n-gram's count in the output column `ngram_indexes`
    /// gives; `mode` TF (counts), IDF (`weights` where counted) or TFIDF (counts × `weights`).
    "TfIdfVectorizer" {
        versions: &[9],
        attrs: [
            attr("max_gram_length", AttrKind::Int, AttrDefault::Required),
            attr("max_skip_count", AttrKind::Int, AttrDefault::Required),
            attr("min_gram_length", AttrKind::Int, AttrDefault::Required),
            attr("mode", AttrKind::Str, AttrDefault::Required),
            attr("ngram_counts", AttrKind::Ints, AttrDefault::Required),
            attr("ngram_indexes", AttrKind::Ints, AttrDefault::Required),
            attr("pool_int64s", AttrKind::Ints, AttrDefault::Ints(&[])),
            attr("weights", AttrKind::Floats, AttrDefault::Floats(&[])),
        ],
        pattern: Opaque,
        rel: |a, r| {
            let x = a.of_dtype(0, |d| matches!(d, DType::Int32 | DType::Int64), "int32 or int64 tokens")?;
            pool(r)?;
            let width = r.ints("ngram_indexes").iter().max().map_or(0, |m| m.saturating_add(1));
            if width > MAX_COLUMNS as i64 {
                return Err(format!("`onnx.TfIdfVectorizer`: an output column past {MAX_COLUMNS}"));
            }
            let width = Dim::Static(width);
            let shape = match x.rank() {
                0 | 1 => vec![width],
                2 => vec![x.shape[0], width],
                _ => return Err(format!("`onnx.TfIdfVectorizer` of {x} (rank 1 or 2)")),
            };
            Ok(vec![TensorType { shape, dtype: DType::Float32 }])
        },
        kernel: tfidf,
    }
}

/// The most output columns (2^24).
const MAX_COLUMNS: usize = 1 << 24;

/// The pool's n-grams by length-and-tokens: each one's output column.
fn pool(r: &AttrReader<'_>) -> Result<FxHashMap<Vec<i64>, usize>, String> {
    let bad = |why: String| format!("`onnx.TfIdfVectorizer`: {why}");
    let (tokens, starts) = (r.ints("pool_int64s"), r.ints("ngram_counts"));
    let columns = r.ints("ngram_indexes");
    let (min, max) = (r.int("min_gram_length"), r.int("max_gram_length"));
    let mut map = FxHashMap::default();
    // N-grams are numbered across every length (those outside min..=max too), in pool order.
    let mut id = 0usize;
    for (k, &start) in starts.iter().enumerate() {
        let n = k + 1;
        let end = starts.get(k + 1).copied().unwrap_or(tokens.len() as i64);
        let (start, end) = match (usize::try_from(start), usize::try_from(end)) {
            (Ok(s), Ok(e)) if s <= e && e <= tokens.len() => (s, e),
            _ => {
                return Err(bad(format!(
                    "ngram_counts {starts:?} for a pool of {}",
                    tokens.len()
                )));
            }
        };
        for gram in tokens[start..end].chunks_exact(n) {
            if (min..=max).contains(&(n as i64)) {
                let column = columns
                    .get(id)
                    .copied()
                    .and_then(|c| usize::try_from(c).ok())
                    .filter(|&c| c < MAX_COLUMNS);
                let column =
                    column.ok_or_else(|| bad(format!("no output column for n-gram {id}")))?;
                map.insert(gram.to_vec(), column);
            }
            id += 1;
        }
    }
    Ok(map)
}

fn tfidf(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let shape = x.shape().to_vec();
    let (rows, len) = match shape.as_slice() {
        [] => (1, 1),
        [c] => (1, *c),
        [b, c] => (*b, *c),
        _ => {
            return Err(format!(
                "`onnx.TfIdfVectorizer` of a tensor of shape {shape:?}"
            ));
        }
    };
    let pool = pool(r)?;
    let width = r.ints("ngram_indexes").iter().max().map_or(0, |m| m + 1) as usize;
    let (min, max) = (
        r.int("min_gram_length").max(1) as usize,
        r.int("max_gram_length").max(0) as usize,
    );
    let skips = r.int("max_skip_count").max(0) as usize;
    let tokens = x.to_i64().into_raw_vec_and_offset().0;
    let mut counts = vec![0.0f64; rows * width];
    for row in 0..rows {
        let t = &tokens[row * len..][..len];
        for gap in 1..=skips + 1 {
            // Unigrams are counted once, at the first gap.
            let shortest = if gap == 1 { min } else { min.max(2) };
            for start in 0..len {
                for n in shortest..=max {
                    let last = start + (n - 1) * gap;
                    if last >= len {
                        break;
                    }
                    let gram: Vec<i64> = (0..n).map(|k| t[start + k * gap]).collect();
                    if let Some(&c) = pool.get(&gram) {
                        counts[row * width + c] += 1.0;
                    }
                }
            }
        }
    }
    let weights = r.floats("weights");
    let weight = |c: usize| weights.get(c).copied().unwrap_or(1.0);
    match r.str("mode").as_str() {
        "TF" => {}
        "IDF" => (0..counts.len()).for_each(|i| {
            counts[i] = if counts[i] > 0.0 {
                weight(i % width)
            } else {
                0.0
            };
        }),
        "TFIDF" => (0..counts.len()).for_each(|i| counts[i] *= weight(i % width)),
        m => {
            return Err(format!(
                "`onnx.TfIdfVectorizer`: mode {m:?} (TF, IDF or TFIDF)"
            ));
        }
    }
    let out_shape = if shape.len() == 2 {
        vec![rows, width]
    } else {
        vec![width]
    };
    Ok(vec![Tensor::from_vec(DType::Float32, &out_shape, counts)?])
}
