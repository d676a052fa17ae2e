//! ONNX-ML's `TreeEnsemble` (opset 5 of `ai.onnx.ml`): decision trees, as scikit-learn,
//! XGBoost and LightGBM converters write them.

use std::collections::HashMap;

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader};
use irpass_ir::{DType, Dim, Tensor, TensorType};

use super::{Args, attr, native, tensor_attr};

native! {
    /// ONNX-ML `TreeEnsemble`: the trees (`tree_roots`, nodes `nodes_*`, leaves `leaf_*`)
    /// each walked for each row of the input from its root, a node's split comparing one
    /// feature by its mode (`<=`, `<`, `>=`, `>`, `==`, `!=`, a member of a set), the leaves
    /// reached aggregated per target (`aggregate_function`: average, sum, min, max) and
    /// transformed (`post_transform`: none, softmax, logistic, softmax keeping zeros).
    "TreeEnsemble" {
        domain: "ai.onnx.ml",
        versions: &[5],
        attrs: [
            attr("aggregate_function", AttrKind::Int, AttrDefault::Int(1)),
            attr("leaf_targetids", AttrKind::Ints, AttrDefault::Required),
            attr("leaf_weights", AttrKind::Str, AttrDefault::Required),
            attr("membership_values", AttrKind::Str, AttrDefault::Str("")),
            attr("n_targets", AttrKind::Int, AttrDefault::Required),
            attr("nodes_falseleafs", AttrKind::Ints, AttrDefault::Required),
            attr("nodes_falsenodeids", AttrKind::Ints, AttrDefault::Required),
            attr("nodes_featureids", AttrKind::Ints, AttrDefault::Required),
            attr("nodes_hitrates", AttrKind::Str, AttrDefault::Str("")),
            attr("nodes_missing_value_tracks_true", AttrKind::Ints, AttrDefault::Ints(&[])),
            attr("nodes_modes", AttrKind::Str, AttrDefault::Required),
            attr("nodes_splits", AttrKind::Str, AttrDefault::Required),
            attr("nodes_trueleafs", AttrKind::Ints, AttrDefault::Required),
            attr("nodes_truenodeids", AttrKind::Ints, AttrDefault::Required),
            attr("post_transform", AttrKind::Int, AttrDefault::Int(0)),
            attr("tree_roots", AttrKind::Ints, AttrDefault::Required),
        ],
        tensor_attrs: ["leaf_weights", "membership_values", "nodes_hitrates", "nodes_modes", "nodes_splits"],
        pattern: Opaque,
        rel: forest_rel,
        kernel: forest,
    }
}

/// The numbers of tensor attribute `name` (none where it is not set).
fn numbers(r: &AttrReader<'_>, name: &str) -> Result<Vec<f64>, String> {
    match tensor_attr(r, name)? {
        None => Ok(Vec::new()),
        Some(v) => match v.as_tensor() {
            Some(t) => Ok(t.values()),
            None => Err(format!("`TreeEnsemble`: attribute `{name}` holds strings")),
        },
    }
}

/// A `TreeEnsemble`'s trees, as its attributes give them.
struct Forest {
    roots: Vec<i64>,
    modes: Vec<f64>,
    splits: Vec<f64>,
    features: Vec<i64>,
    true_ids: Vec<i64>,
    false_ids: Vec<i64>,
    true_leaf: Vec<i64>,
    false_leaf: Vec<i64>,
    missing_true: Vec<i64>,
    /// Each set-membership node's members, in node order.
    members: HashMap<usize, Vec<f64>>,
    leaf_targets: Vec<i64>,
    leaf_weights: Vec<f64>,
    targets: usize,
    aggregate: i64,
    post: i64,
}

/// The set-membership mode.
const MEMBER: f64 = 6.0;

impl Forest {
    fn of(r: &AttrReader<'_>) -> Result<Forest, String> {
        let modes = numbers(r, "nodes_modes")?;
        // The members of each set-membership node, in order, each set ended by a NaN.
        let mut sets = numbers(r, "membership_values")?.into_iter();
        let mut members = HashMap::new();
        for (i, _) in modes.iter().enumerate().filter(|(_, m)| **m == MEMBER) {
            let set: Vec<f64> = sets.by_ref().take_while(|v| !v.is_nan()).collect();
            members.insert(i, set);
        }
        let forest = Forest {
            roots: r.ints("tree_roots"),
            splits: numbers(r, "nodes_splits")?,
            features: r.ints("nodes_featureids"),
            true_ids: r.ints("nodes_truenodeids"),
            false_ids: r.ints("nodes_falsenodeids"),
            true_leaf: r.ints("nodes_trueleafs"),
            false_leaf: r.ints("nodes_falseleafs"),
            missing_true: r.ints("nodes_missing_value_tracks_true"),
            members,
            leaf_targets: r.ints("leaf_targetids"),
            leaf_weights: numbers(r, "leaf_weights")?,
            targets: usize::try_from(r.int("n_targets")).map_err(|e| e.to_string())?,
            aggregate: r.int("aggregate_function"),
            post: r.int("post_transform"),
            modes,
        };
        let n = forest.modes.len();
        let node_lists = [
            forest.features.len(),
            forest.true_ids.len(),
            forest.false_ids.len(),
            forest.true_leaf.len(),
            forest.false_leaf.len(),
        ];
        if forest.splits.len() != n || node_lists.iter().any(|&l| l != n) {
            return Err("`TreeEnsemble`: node attributes of different lengths".into());
        }
        if forest.leaf_targets.len() != forest.leaf_weights.len() {
            return Err("`TreeEnsemble`: leaf attributes of different lengths".into());
        }
        if !(0..=3).contains(&forest.aggregate) || !(0..=3).contains(&forest.post) {
            return Err(format!(
                "`TreeEnsemble`: aggregate_function {} or post_transform {} (PROBIT is not implemented)",
                forest.aggregate, forest.post
            ));
        }
        Ok(forest)
    }

    /// Whether node `i` sends `row` to its true branch.
    fn goes_true(&self, i: usize, row: &[f64]) -> Result<bool, String> {
        let f = usize::try_from(self.features[i])
            .ok()
            .filter(|&f| f < row.len())
            .ok_or_else(|| {
                format!(
                    "`TreeEnsemble`: feature {} of {}",
                    self.features[i],
                    row.len()
                )
            })?;
        let (x, s) = (row[f], self.splits[i]);
        if x.is_nan() && self.missing_true.get(i).is_some_and(|&m| m != 0) {
            return Ok(true);
        }
        Ok(match self.modes[i] as i64 {
            0 => x <= s,
            1 => x < s,
            2 => x >= s,
            3 => x > s,
            4 => x == s,
            5 => x != s,
            6 => self.members.get(&i).is_some_and(|m| m.contains(&x)),
            m => return Err(format!("`TreeEnsemble`: node mode {m}")),
        })
    }

    /// The leaf tree `root` reaches for `row`: (target, weight).
    fn leaf(&self, root: i64, row: &[f64]) -> Result<(usize, f64), String> {
        let index = |i: i64, of: usize| {
            usize::try_from(i)
                .ok()
                .filter(|&i| i < of)
                .ok_or_else(|| format!("`TreeEnsemble`: index {i} of {of}"))
        };
        let n = self.modes.len();
        let mut i = index(root, n)?;
        // A root that is a leaf both ways is a tree of one leaf.
        let mut leaf = (self.true_leaf[i] != 0
            && self.false_leaf[i] != 0
            && self.true_ids[i] == self.false_ids[i])
            .then_some(self.true_ids[i]);
        let mut steps = 0;
        while leaf.is_none() {
            let (next, is_leaf) = match self.goes_true(i, row)? {
                true => (self.true_ids[i], self.true_leaf[i] != 0),
                false => (self.false_ids[i], self.false_leaf[i] != 0),
            };
            if is_leaf {
                leaf = Some(next);
            } else {
                i = index(next, n)?;
            }
            steps += 1;
            if steps > n {
                return Err("`TreeEnsemble`: a tree with a cycle".into());
            }
        }
        let l = index(leaf.unwrap_or_default(), self.leaf_weights.len())?;
        let target = index(self.leaf_targets[l], self.targets)?;
        Ok((target, self.leaf_weights[l]))
    }

    /// The aggregated, transformed scores of `row`; `big` is the element type's largest
    /// number (where a minimum or a maximum starts).
    fn scores(&self, row: &[f64], big: f64) -> Result<Vec<f64>, String> {
        let start = match self.aggregate {
            2 => big,
            3 => -big,
            _ => 0.0,
        };
        let mut out = vec![start; self.targets];
        for &root in &self.roots {
            let (t, w) = self.leaf(root, row)?;
            out[t] = match self.aggregate {
                0 => out[t] + w / self.roots.len() as f64,
                2 => out[t].min(w),
                3 => out[t].max(w),
                _ => out[t] + w,
            };
        }
        match self.post {
            1 | 3 => {
                let keep_zeros = self.post == 3;
                let live = |v: f64| !(keep_zeros && v == 0.0);
                let max = out
                    .iter()
                    .copied()
                    .filter(|&v| live(v))
                    .fold(f64::NEG_INFINITY, f64::max);
                let exp: Vec<f64> = out
                    .iter()
                    .map(|&v| if live(v) { (v - max).exp() } else { 0.0 })
                    .collect();
                let sum: f64 = exp.iter().sum();
                out = exp
                    .iter()
                    .map(|e| if sum > 0.0 { e / sum } else { 0.0 })
                    .collect();
            }
            2 => out.iter_mut().for_each(|v| *v = 1.0 / (1.0 + (-*v).exp())),
            _ => {}
        }
        Ok(out)
    }
}

fn forest_rel(a: &Args<'_, TensorType>, r: &AttrReader<'_>) -> Result<Vec<TensorType>, String> {
    let forest = Forest::of(r)?;
    let x = a.float(0)?;
    let [rows, _] = x.shape.as_slice() else {
        return Err(format!("`TreeEnsemble` of {x}: a matrix is expected"));
    };
    Ok(vec![TensorType {
        shape: vec![*rows, Dim::Static(forest.targets as i64)],
        dtype: x.dtype,
    }])
}

fn forest(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let forest = Forest::of(r)?;
    let x = a.get(0)?;
    let [rows, cols] = *x.shape() else {
        return Err("`TreeEnsemble` of a tensor that is not a matrix".into());
    };
    let big = match x.dtype() {
        DType::Float64 => f64::MAX,
        DType::Float16 => 65504.0,
        _ => f64::from(f32::MAX),
    };
    let values = x.values();
    let mut out = Vec::with_capacity(rows * forest.targets);
    for row in 0..rows {
        out.extend(forest.scores(&values[row * cols..(row + 1) * cols], big)?);
    }
    Tensor::from_vec(x.dtype(), &[rows, forest.targets], out).map(|t| vec![t])
}
