//! `CombineParallelDense`: the pass and its rewrite of a function's code.

use irpass::{PassContext, PassOptions, function_pass, pass_config_option};
use irpass_ir::body::{ArenaFunction, Body, ExprId, Idx, Node};
use irpass_ir::rewrite::{OldId, Rewrite, RewriteCx};
use irpass_ir::{AttrValue, Attrs, Function, Module, Op, Tensor, Value};
use rustc_hash::FxHashMap;
use serde::Deserialize;
use std::sync::Arc;

pass_config_option! {
    /// The fewest dense layers reading one value that `CombineParallelDense` combines into one
    /// (default 2: the key and value projections of a cross-attention already gain).
    pub COMBINE_MIN_BRANCHES: u64 = "relay.CombineParallelDense.min_num_branches";
}

irpass::statistic! {
    /// Dense layers `CombineParallelDense` combined with others reading the same value.
    pub static LAYERS_COMBINED: "CombineParallelDense", "dense layers combined into a wider one";
}

/// The default of [`COMBINE_MIN_BRANCHES`].
pub const DEFAULT_COMBINE_MIN_BRANCHES: u64 = 2;

/// `CombineParallelDense` and its options (each overrides its config key for this pass).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, PassOptions)]
#[serde(default)]
pub struct CombineParallelDense {
    /// The fewest layers reading one value that are combined.
    #[option(config = COMBINE_MIN_BRANCHES, default = DEFAULT_COMBINE_MIN_BRANCHES)]
    pub min_num_branches: Option<u64>,
}

/// Combines dense layers that read the same value into one wider layer whose result is split
/// (TVM's `CombineParallelDense` in its concatenating form): `matmul(x, W1)`, `matmul(x, W2)`,
/// `matmul(x, W3)` with constant 2-D weights (a transformer's query, key and value
/// projections) become `split(matmul(x, concat(W1, W2, W3)))`; `nn.dense` layers the same
/// way with their weights stacked. When every layer's only use is the addition of a constant
/// bias along the last axis (`add` or `nn.bias_add`), the biases are concatenated and added
/// once before the split. The combined weight is built here (it replaces the weights it is
/// made of, so it is no growth). At least `relay.CombineParallelDense.min_num_branches`
/// layers (default 2; the option `CombineParallelDense{min_num_branches=3}`) must read the
/// value.
#[function_pass(opt_level = 3, default, options)]
impl CombineParallelDense {
    fn transform_function(&self, func: Function, _module: &Module, ctx: &PassContext) -> Function {
        let min = self.min_num_branches(ctx);
        func.with_code(combine_parallel_dense(&func.code, min))
    }
}

/// The operators combined: a `matmul` by a (K, N) weight, widened along axis 1, or an
/// `nn.dense` by an (N, K) weight, widened along axis 0.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Kind {
    MatMul,
    Dense,
}

impl Kind {
    fn weight_axis(self) -> usize {
        match self {
            Kind::MatMul => 1,
            Kind::Dense => 0,
        }
    }
}

/// One layer of a group: the layer's node, its weight, and its bias addition when it has one.
struct Layer {
    node: ExprId,
    weight: Arc<Tensor>,
    bias: Option<(ExprId, Arc<Tensor>)>,
}

/// Layers reading one value, combined.
struct Group {
    kind: Kind,
    input: ExprId,
    attrs: Attrs,
    layers: Vec<Layer>,
    /// Whether every layer has a bias, added once to the combined result.
    biased: bool,
    /// The split's new id once built (`Err` if it could not be: the layers stay).
    split: Option<Result<ExprId, ()>>,
}

/// Combines the parallel dense layers of `f` (at least `min_branches` reading one value), as
/// the registered `CombineParallelDense`. `None` when nothing combines.
pub fn combine_parallel_dense(f: &ArenaFunction, min_branches: u64) -> Option<ArenaFunction> {
    let groups = find_groups(&f.body, f.root, min_branches.max(2) as usize);
    if groups.is_empty() {
        return None;
    }
    let mut role = FxHashMap::default();
    for (g, group) in groups.iter().enumerate() {
        for (i, layer) in group.layers.iter().enumerate() {
            role.insert(layer.node, Role::Layer(g, i));
            if let Some((add, _)) = layer.bias.as_ref().filter(|_| group.biased) {
                let add = *add;
                role.insert(add, Role::Bias(layer.node));
            }
        }
    }
    f.rewrite(&mut Combine { groups, role })
}

/// What an old node is to the rewrite.
#[derive(Clone, Copy)]
enum Role {
    /// Layer `.1` of group `.0`: the projection of the split.
    Layer(usize, usize),
    /// The bias addition of the layer `.0`, which the combined bias replaces.
    Bias(ExprId),
}

/// The groups of layers of `body` that read one value, reachable from `root`.
fn find_groups(body: &Body, root: ExprId, min: usize) -> Vec<Group> {
    let users = body.users(root);
    let mut by_input: FxHashMap<(ExprId, Kind), Vec<ExprId>> = FxHashMap::default();
    let mut order = Vec::new();
    // (A layer that is the result has no bias after it and is combined all the same.)
    for id in body.ids() {
        if id != root && users[id.index()].is_empty() {
            continue;
        }
        let Some(kind) = layer_kind(body, id) else {
            continue;
        };
        let input = body.op_call(id).map(|(_, args, _)| args[0]);
        let Some(input) = input else { continue };
        let entry = by_input.entry((input, kind)).or_default();
        if entry.is_empty() {
            order.push((input, kind));
        }
        entry.push(id);
    }
    let mut groups = Vec::new();
    for key in order {
        let nodes = &by_input[&key];
        // Layers of one weight dtype, inner size and attributes combine.
        let mut buckets: Vec<Group> = Vec::new();
        for &n in nodes {
            let (_, args, attrs) = body.op_call(n).expect("a layer is a call");
            let Node::Constant(k) = body.node(args[1]) else {
                continue;
            };
            let weight = body.constant(*k).clone();
            // The combined layer's width is its weight's (`units`, a check, is dropped).
            let attrs = Attrs::from_pairs(
                attrs
                    .iter()
                    .filter(|(k, _)| *k != "units")
                    .map(|(k, v)| (k, v.clone())),
            );
            let bias = match users[n.index()][..] {
                [u] if n != root => bias_of(body, u, n, &weight, key.1),
                _ => None,
            };
            let layer = Layer {
                node: n,
                weight,
                bias,
            };
            let inner = 1 - key.1.weight_axis();
            match buckets.iter_mut().find(|g| {
                let w = &g.layers[0].weight;
                g.attrs == attrs
                    && w.dtype() == layer.weight.dtype()
                    && w.shape()[inner] == layer.weight.shape()[inner]
            }) {
                Some(g) => g.layers.push(layer),
                None => buckets.push(Group {
                    kind: key.1,
                    input: key.0,
                    attrs,
                    layers: vec![layer],
                    biased: false,
                    split: None,
                }),
            }
        }
        for mut g in buckets {
            if g.layers.len() >= min {
                g.biased = g.layers.iter().all(|l| l.bias.is_some());
                groups.push(g);
            }
        }
    }
    groups
}

/// Whether `id` is a layer this pass combines: a `matmul` by a constant 2-D weight or an
/// `nn.dense` by a constant weight.
fn layer_kind(body: &Body, id: ExprId) -> Option<Kind> {
    let (op, args, _) = body.op_call(id)?;
    let kind = match op.name() {
        "matmul" => Kind::MatMul,
        "nn.dense" => Kind::Dense,
        _ => return None,
    };
    let Node::Constant(k) = body.node(*args.get(1)?) else {
        return None;
    };
    (body.constant(*k).shape().len() == 2).then_some(kind)
}

/// The bias added to layer `n` by its only user `u`: `add(n, b)`, `add(b, n)` or
/// `nn.bias_add(n, b)` on the last axis, with `b` a constant vector of the layer's width and
/// dtype.
fn bias_of(
    body: &Body,
    u: ExprId,
    n: ExprId,
    weight: &Tensor,
    kind: Kind,
) -> Option<(ExprId, Arc<Tensor>)> {
    let (op, args, attrs) = body.op_call(u)?;
    let b = match (op.name(), args) {
        ("add", [a, b]) if *a == n => *b,
        ("add", [b, a]) if *a == n => *b,
        ("nn.bias_add", [a, b]) if *a == n => {
            let axis = op.attr_value(attrs, "axis")?.as_int()?;
            if axis != -1 {
                return None;
            }
            *b
        }
        _ => return None,
    };
    let Node::Constant(k) = body.node(b) else {
        return None;
    };
    let t = body.constant(*k);
    let width = weight.shape()[kind.weight_axis()];
    (t.shape() == [width] && t.dtype() == weight.dtype()).then(|| (u, t.clone()))
}

struct Combine {
    groups: Vec<Group>,
    role: FxHashMap<ExprId, Role>,
}

impl Rewrite for Combine {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: OldId, _new: ExprId) -> Option<ExprId> {
        match *self.role.get(&old.id())? {
            Role::Bias(layer) => {
                let Role::Layer(g, _) = self.role[&layer] else {
                    return None;
                };
                // The layer's projection already holds its bias.
                match self.groups[g].split {
                    Some(Ok(_)) => cx.new_id(cx.old.at(layer)),
                    _ => None,
                }
            }
            Role::Layer(g, i) => {
                let split = match self.groups[g].split {
                    Some(s) => s,
                    None => {
                        let s = build(cx, &self.groups[g]).ok_or(());
                        if s.is_ok() {
                            LAYERS_COMBINED.add(self.groups[g].layers.len() as u64);
                        }
                        self.groups[g].split = Some(s);
                        s
                    }
                };
                Some(cx.new.proj(split.ok()?, i as u32))
            }
        }
    }
}

/// The combined layer of `g` and its split, in the new body.
fn build(cx: &mut RewriteCx<'_>, g: &Group) -> Option<ExprId> {
    let x = cx.new_id(cx.old.at(g.input))?;
    let axis = g.kind.weight_axis();
    let weights: Vec<Arc<Tensor>> = g.layers.iter().map(|l| l.weight.clone()).collect();
    let w = cx.new.constant(concat(&weights, axis)?);
    let op = match g.kind {
        Kind::MatMul => "matmul",
        Kind::Dense => "nn.dense",
    };
    let mut y = cx.new.op(op, &[x, w], g.attrs.clone()).ok()?;
    if g.biased {
        let biases: Vec<Arc<Tensor>> = g
            .layers
            .iter()
            .filter_map(|l| l.bias.as_ref().map(|b| b.1.clone()))
            .collect();
        let b = cx.new.constant(concat(&biases, 0)?);
        y = cx.new.op("add", &[y, b], Attrs::new()).ok()?;
    }
    let mut at = 0;
    let mut points = Vec::new();
    for l in &g.layers[..g.layers.len() - 1] {
        at += l.weight.shape()[axis] as i64;
        points.push(AttrValue::Int(at));
    }
    let attrs = Attrs::from_pairs([
        ("indices_or_sections", AttrValue::List(points)),
        ("axis", AttrValue::Int(-1)),
    ]);
    cx.new.op("split", &[y], attrs).ok()
}

/// `tensors` concatenated along `axis`, by the reference kernel of `concatenate`.
fn concat(tensors: &[Arc<Tensor>], axis: usize) -> Option<Arc<Tensor>> {
    // The weights are shared with the kernel, not copied for it.
    let fields = tensors.iter().map(|t| Value::Tensor(t.clone())).collect();
    let attrs = Attrs::from_pairs([("axis", AttrValue::Int(axis as i64))]);
    match Op::get("concatenate")
        .ok()?
        .eval(&[Value::Tuple(fields)], &attrs)
        .ok()?
    {
        Value::Tensor(t) => Some(t),
        _ => None,
    }
}
