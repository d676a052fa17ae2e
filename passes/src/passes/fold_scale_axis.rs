//! `BackwardFoldScaleAxis` and `ForwardFoldScaleAxis`: the passes and their rewrites of a function's code, TVM's
//! two-phase algorithm. A *message* says on which axes a value may carry a scale, and whether
//! the scale must be positive (to pass a relu). The preparation phase sends messages from the
//! operators that can absorb a scale (a convolution's or dense layer's weights) through the
//! operators a scale passes (relu, a bias add) to the multiplication; the transformation
//! phase then moves the multiplication's scale along that path into the weights.
//!
//! Moving a scale is exact only where it changes no value the program computes: a scale that
//! a shift is divided by on the way (forward through an add) must be a float constant with
//! no zero and no infinity in it, and a constant scale must not overflow the constants it is
//! multiplied into or divided from (a pruned channel, a batch norm with gamma 0, gives a
//! scale with a zero; folding it anyway turns finite outputs into NaN).

use super::call;
use crate::analyses::{Types, UseCounts};
use crate::util::ints;
use irpass::{PassContext, function_pass, pass_config_option};
use irpass_ir::body::{ArenaFunction, Body, BodyBuilder, ExprId, Idx, Node};
use irpass_ir::infer::BodyTypes;
use irpass_ir::layout::Layout;
use irpass_ir::rewrite::{OldId, Rewrite, RewriteCx};
use irpass_ir::{AttrValue, Attrs, Dim, Function, Module, Tensor, Type};
use rustc_hash::FxHashMap;

pass_config_option! {
    /// When true, `BackwardFoldScaleAxis` and `ForwardFoldScaleAxis` also fold scales that are
    /// not constants (computed at run time, as a squeeze-and-excitation gate), as TVM does;
    /// default false: the weights would then be rescaled on every run instead of the
    /// activations, and stop being constants.
    pub FOLD_VARIABLE_SCALES: bool = "relay.FoldScaleAxis.variable_scales";
}

fn variable_scales(ctx: &PassContext) -> bool {
    ctx.get(&FOLD_VARIABLE_SCALES).copied().unwrap_or(false)
}

/// Folds a per-output-channel scale into the weights of the convolution or dense layer that
/// produces the scaled value (TVM's backward folding): in `relu(conv2d(x, w) + b) * s` the
/// scale moves through the relu (when it is a positive constant), the bias add or
/// `nn.bias_add` (the bias is multiplied by it) and an add of two such paths, into the
/// weight's output channels: `relu(conv2d(x, w * s') + b * s'')`; the same for `nn.dense`.
/// The scale is squeezed to the channel axis and laid along the weight's with `expand_dims`,
/// as TVM writes it; in a split layout (`NCHW4c` data, `OIHW1i4o` weights) a channel is a
/// block and a lane axis, and the scale is reshaped onto the weight's. Only values with a single use are rescaled (the unscaled result is needed
/// nowhere else). A constant scale that would overflow
/// the constant weights or biases it is multiplied into stays. `FoldConstant` then computes
/// the new weights.
#[function_pass(opt_level = 3, name = "BackwardFoldScaleAxis")]
pub fn transform_backward(
    func: Function,
    module: &Module,
    ctx: &PassContext,
) -> irpass::Result<Function> {
    let types = Types::of(&func, module, ctx)?;
    let uses = ctx.function_analysis(&UseCounts, &func, module);
    Ok(func.with_code(backward_fold_scale_axis(
        &func.code,
        &types,
        &uses,
        variable_scales(ctx),
    )))
}

/// Folds a per-input-channel scale into the weights of the convolution or dense layer that
/// consumes the scaled value (TVM's forward folding): in `conv2d(relu(x * s) + b, w)` the
/// scale moves through the relu (when it is a positive constant) and the bias add (the bias is
/// divided by it) into the weight's input channels (output channels for a depthwise
/// convolution): `conv2d(relu(x) + b / s', w * s'')`. Folded only when every user of the
/// scaled value can take the scale (two convolutions can; any other use keeps it). A scale
/// that a bias is divided by must be a float constant with no zero (a pruned channel) and no
/// infinity in it, and no folded constant may overflow; otherwise the scale stays (unlike
/// TVM, which folds a zero scale and computes NaN).
#[function_pass(opt_level = 3, name = "ForwardFoldScaleAxis")]
pub fn transform_forward(
    func: Function,
    module: &Module,
    ctx: &PassContext,
) -> irpass::Result<Function> {
    let types = Types::of(&func, module, ctx)?;
    let uses = ctx.function_analysis(&UseCounts, &func, module);
    Ok(func.with_code(forward_fold_scale_axis(
        &func.code,
        &types,
        &uses,
        variable_scales(ctx),
    )))
}

/// Folds a per-output-channel scale into the weights of the convolution or dense layer that
/// produces the scaled value, as the registered `BackwardFoldScaleAxis` (whose doc comment
/// gives the rules). `types` and `uses` (each node's use count, [`Body::use_counts`]) are the
/// input's. `None` when there is nothing to fold.
pub fn backward_fold_scale_axis(
    f: &ArenaFunction,
    types: &BodyTypes,
    uses: &[u32],
    variable_scales: bool,
) -> Option<ArenaFunction> {
    let plan = Plan::new(&f.body, types, variable_scales);
    let messages = plan.backward_messages(f.root, uses);
    let mut folder = Backward {
        plan,
        messages,
        new_of: FxHashMap::default(),
    };
    f.rewrite(&mut folder)
}

/// Folds a per-input-channel scale into the weights of the convolution or dense layer that
/// consumes the scaled value, as the registered `ForwardFoldScaleAxis`. `None` when there is
/// nothing to fold.
pub fn forward_fold_scale_axis(
    f: &ArenaFunction,
    types: &BodyTypes,
    _uses: &[u32],
    variable_scales: bool,
) -> Option<ArenaFunction> {
    let plan = Plan::new(&f.body, types, variable_scales);
    let messages = plan.forward_messages(f.root);
    let mut folder = Forward {
        plan,
        messages,
        scaled: FxHashMap::default(),
    };
    f.rewrite(&mut folder)
}

/// Which axes of a value may carry a scale, and what the scale must be to move along the
/// path the message came by: one axis, or two for a channel split into blocks and lanes
/// (`NCHW4c`: the block axis and the lane axis, in that order).
#[derive(Clone, Debug, PartialEq)]
struct Message {
    axes: Vec<usize>,
    /// The scale must be positive (to pass a relu).
    positive: bool,
    /// Something on the path is divided by the scale (a shift it passes forward), so the
    /// scale must be a float constant without zeros or infinities.
    divides: bool,
    /// The operands the scale is multiplied into (weights, biases): a scale must not overflow
    /// the constants among them. Their magnitudes are read only when a scale is checked.
    mul_into: Vec<ExprId>,
    /// The operands divided by the scale.
    div_from: Vec<ExprId>,
}

impl Message {
    /// This message, with the scale also multiplied into `e` on the way.
    fn multiplying(mut self, e: ExprId) -> Message {
        self.mul_into.push(e);
        self
    }

    fn on(axes: Vec<usize>) -> Message {
        Message {
            axes,
            positive: false,
            divides: false,
            mul_into: Vec::new(),
            div_from: Vec::new(),
        }
    }
}

/// Both messages' demands: the common axes, and every condition either asks.
fn intersect(a: Option<Message>, b: Option<Message>) -> Option<Message> {
    let (a, b) = (a?, b?);
    let axes: Vec<usize> = a.axes.into_iter().filter(|x| b.axes.contains(x)).collect();
    (!axes.is_empty()).then_some(Message {
        axes,
        positive: a.positive || b.positive,
        divides: a.divides || b.divides,
        mul_into: [a.mul_into, b.mul_into].concat(),
        div_from: [a.div_from, b.div_from].concat(),
    })
}

/// The constant `e` is, possibly reshaped.
fn constant_of(b: &Body, e: ExprId) -> Option<&Tensor> {
    let mut at = e;
    loop {
        match b.node(at) {
            Node::Constant(k) => return Some(b.constant(*k)),
            Node::CallOp { .. } => {
                let (op, args, _) = b.op_call(at)?;
                match op.name() {
                    "expand_dims" | "reshape" | "transpose" | "squeeze" => at = args[0],
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
}

/// The largest magnitude among the constants of `es`, 0 when none is a constant (nothing
/// known to bound).
fn bound(b: &Body, es: &[ExprId]) -> f64 {
    es.iter()
        .filter_map(|&e| constant_of(b, e))
        .map(Tensor::max_abs)
        .fold(0.0, f64::max)
}

/// Whether the scale operand `e` may move along a path that asks `m` of it: positive where a
/// relu asks, a float constant without zeros or infinities where something is divided by it,
/// and never overflowing the constants it meets. A scale that is not a constant moves only
/// when `variable` allows it (TVM's variable scales) and nothing asks anything of its values.
fn scale_allowed(b: &Body, e: ExprId, m: &Message, variable: bool) -> bool {
    let Some(t) = constant_of(b, e) else {
        return variable && !m.positive && !m.divides;
    };
    let values = t.float_values();
    let max = t.dtype().max_finite();
    let largest = values.iter().fold(0.0f64, |acc, v| acc.max(v.abs()));
    let smallest = values.iter().fold(f64::INFINITY, |acc, v| acc.min(v.abs()));
    values.iter().all(|v| v.is_finite())
        && (!m.positive || values.iter().all(|&v| v > 0.0))
        && (!m.divides || (t.dtype().is_float() && smallest > 0.0))
        && largest * bound(b, &m.mul_into) <= max
        && {
            let d = bound(b, &m.div_from);
            d == 0.0 || d / smallest <= max
        }
}

/// How a scale operand fits the scaled value on the message's axes.
#[derive(Clone, Debug)]
enum Fit {
    /// Its dimensions are the value's on the axes and 1 elsewhere: squeezed on these axes
    /// (of the operand) it is the scale along the axes.
    Squeeze(Vec<usize>),
    /// A scalar: the same factor on every channel.
    Scalar,
}

/// TVM's `MatchBroadcastToLeftAxes`: whether `rhs` broadcasts onto `lhs` along `axes` only.
fn fit(lhs: &[Dim], rhs: &[Dim], axes: &[usize], scalar_ok: bool) -> Option<Fit> {
    if rhs.is_empty() && scalar_ok && !axes.is_empty() {
        return Some(Fit::Scalar);
    }
    let base = lhs.len().checked_sub(rhs.len())?;
    let mut squeeze = Vec::new();
    let mut j = 0;
    for (i, &d) in lhs.iter().enumerate() {
        if j < axes.len() && axes[j] == i {
            match (d, i.checked_sub(base).map(|k| rhs[k])) {
                (Dim::Static(a), Some(Dim::Static(b))) if a == b => {}
                _ => return None,
            }
            j += 1;
        } else if i >= base {
            if rhs[i - base] != Dim::Static(1) {
                return None;
            }
            squeeze.push(i - base);
        }
    }
    (j == axes.len()).then_some(Fit::Squeeze(squeeze))
}

/// A scale (one dimension per message axis) laid along `axis` of a value of rank `ndim`:
/// trailing dimensions of 1 (TVM's `ExpandBiasToMatchAxis`). A scalar stays.
fn expand_to_axis(b: &mut BodyBuilder, scale: &Scale, ndim: usize, axis: usize) -> ExprId {
    let pad = ndim.saturating_sub(axis + 1);
    if scale.scalar || pad == 0 {
        return scale.expr;
    }
    let attrs = Attrs::from_pairs([
        ("axis", AttrValue::Int(1)),
        ("num_newaxis", AttrValue::Int(pad as i64)),
    ]);
    call(b, "expand_dims", &[scale.expr], attrs)
}

/// A scale laid along `axes` of a value of rank `ndim` whose sizes there are `dims`: for one
/// axis on each side, trailing dimensions of 1 ([`expand_to_axis`]); where a channel is split
/// (into a block and a lane axis, on either side), reshaped to `ndim` dimensions, `dims` at
/// `axes` and 1 elsewhere (TVM's `ReshapeToMatchAxis`): a channel is `block · lanes + lane` in
/// both, so the scale's elements land on their channels. A scalar stays.
fn lay_scale(
    b: &mut BodyBuilder,
    scale: &Scale,
    ndim: usize,
    axes: &[usize],
    dims: &[i64],
) -> ExprId {
    if scale.scalar || (axes.len() == 1 && scale.dims.len() == 1) {
        return expand_to_axis(b, scale, ndim, axes[0]);
    }
    let mut shape = vec![1i64; ndim];
    for (&a, &d) in axes.iter().zip(dims) {
        shape[a] = d;
    }
    let attrs = Attrs::from_pairs([("newshape", ints(&shape))]);
    call(b, "reshape", &[scale.expr], attrs)
}

/// The scale a multiplication contributes, built in the new body.
#[derive(Clone, Debug)]
struct Scale {
    expr: ExprId,
    scalar: bool,
    /// Its dimensions (one per message axis; empty for a scalar).
    dims: Vec<i64>,
}

/// The scale `operand` contributes to a value whose dimensions on the message's axes are
/// `dims`.
fn build_scale(b: &mut BodyBuilder, operand: ExprId, fit: &Fit, dims: Vec<i64>) -> Scale {
    match fit {
        Fit::Squeeze(axes) if !axes.is_empty() => {
            let a: Vec<i64> = axes.iter().map(|&a| a as i64).collect();
            let attrs = Attrs::from_pairs([("axis", ints(&a))]);
            Scale {
                expr: call(b, "squeeze", &[operand], attrs),
                scalar: false,
                dims,
            }
        }
        Fit::Squeeze(_) => Scale {
            expr: operand,
            scalar: false,
            dims,
        },
        Fit::Scalar => Scale {
            expr: operand,
            scalar: true,
            dims: Vec::new(),
        },
    }
}

/// A convolution's layout facts. A channel axis is one axis, or two (block, lane) in a
/// split layout.
struct Conv {
    /// The channel axes of its data (forward) and of its output (backward).
    data_c: Vec<usize>,
    out_c: Vec<usize>,
    /// The input- and output-channel axes of its weight.
    weight_i: Vec<usize>,
    weight_o: Vec<usize>,
    weight_rank: usize,
    depthwise: bool,
    groups: i64,
}

/// The axes of primal axis `c` in `layout`: its position, then its lane's when split (`None`
/// when the lane comes first: a reshape would not lay a scale there).
fn channel_axes(layout: &Layout, c: char) -> Option<Vec<usize>> {
    let outer = layout.position(c)?;
    match layout.factor(c) {
        None => Some(vec![outer]),
        Some(_) => {
            let inner = layout
                .axes()
                .iter()
                .position(|a| a.primal == c && a.factor.is_some())?;
            (outer < inner).then(|| vec![outer, inner])
        }
    }
}

fn str_attr(attrs: &Attrs, k: &str, default: &str) -> String {
    attrs
        .get(k)
        .and_then(AttrValue::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or(default)
        .to_string()
}

/// The facts `FoldScaleAxis` needs of the operator calls and types of one body.
struct Plan<'a> {
    body: &'a Body,
    types: &'a BodyTypes,
    /// Whether scales that are not constants are folded (into weights that then change at
    /// run time).
    variable_scales: bool,
}

impl<'a> Plan<'a> {
    fn new(body: &'a Body, types: &'a BodyTypes, variable_scales: bool) -> Self {
        Plan {
            body,
            types,
            variable_scales,
        }
    }

    /// The static sizes of `e` on `axes`.
    fn dims_on(&self, e: ExprId, axes: &[usize]) -> Option<Vec<i64>> {
        let shape = self.shape(e)?;
        axes.iter().map(|&a| shape.get(a)?.value()).collect()
    }

    fn shape(&self, e: ExprId) -> Option<&[Dim]> {
        match self.types.of(e) {
            Type::Tensor(t) => Some(&t.shape),
            _ => None,
        }
    }

    fn conv(&self, e: ExprId) -> Option<Conv> {
        let (op, args, attrs) = self.body.op_call(e)?;
        if op.name() != "nn.conv2d" {
            return None;
        }
        let parse = |k: &str, default: &str| Layout::parse(&str_attr(attrs, k, default)).ok();
        let data = parse("data_layout", "NCHW")?;
        let kernel = parse("kernel_layout", "OIHW")?;
        let out = match str_attr(attrs, "out_layout", "") {
            o if o.is_empty() => data.clone(),
            o => Layout::parse(&o).ok()?,
        };
        let groups = attrs.get("groups").and_then(AttrValue::as_int).unwrap_or(1);
        let weight_i = channel_axes(&kernel, 'I')?;
        let weight_o = channel_axes(&kernel, 'O')?;
        let data_c = channel_axes(&data, 'C')?;
        let out_c = channel_axes(&out, 'C')?;
        // Depthwise: as many groups as output channels, one input channel per group.
        let w = self.shape(args[1])?;
        let total = |axes: &[usize]| -> Option<i64> {
            axes.iter()
                .try_fold(1i64, |acc, &a| Some(acc * w.get(a)?.value()?))
        };
        let depthwise = total(&weight_o) == Some(groups) && total(&weight_i) == Some(1);
        Some(Conv {
            data_c,
            out_c,
            weight_i,
            weight_o,
            weight_rank: kernel.rank(),
            depthwise,
            groups,
        })
    }

    /// The message a convolution sends its data (forward) or its user (backward): the
    /// channel axis; the scale multiplies its weight. Backward, any convolution takes a scale
    /// on its output channels (each is one slice of the weight, whatever the groups); forward,
    /// a full or depthwise one only (TVM takes full and depthwise ones both ways).
    fn conv_message(&self, e: ExprId, forward: bool) -> Option<Message> {
        let c = self.conv(e)?;
        let (_, args, _) = self.body.op_call(e)?;
        let (axes, waxes) = match forward {
            true if c.depthwise => (c.data_c, c.weight_o),
            true => (c.data_c, c.weight_i),
            false => (c.out_c, c.weight_o),
        };
        // The value's channels and the weight's (as many, however split) must be known.
        let channels = |e: ExprId, axes: &[usize]| -> Option<i64> {
            let d = self.dims_on(e, axes)?;
            Some(d.iter().product())
        };
        let value = if forward { args[0] } else { e };
        if channels(value, &axes)? != channels(args[1], &waxes)? {
            return None;
        }
        (!forward || c.groups == 1 || c.depthwise).then(|| Message::on(axes).multiplying(args[1]))
    }

    /// The message of the dense layer `e`: the last axis (of its data forward, of its output
    /// backward); the scale multiplies its weight.
    fn dense_message(&self, e: ExprId, forward: bool) -> Option<Message> {
        let (_, args, _) = self.body.op_call(e)?;
        let rank = self.shape(if forward { args[0] } else { e })?.len();
        Some(Message::on(vec![rank.checked_sub(1)?]).multiplying(args[1]))
    }

    /// Whether the add or subtract `e` passes a scale on `m`'s axes from operand `i` (the
    /// other operand broadcasts along those axes only).
    fn add_passes(&self, e: ExprId, i: usize, m: &Message) -> bool {
        let (_, args, _) = self.body.op_call(e).expect("an operator call");
        match (self.shape(args[i]), self.shape(args[1 - i])) {
            (Some(a), Some(b)) => fit(a, b, &m.axes, false).is_some(),
            _ => false,
        }
    }

    /// Forward preparation: from the users back, the message each node may carry (what all
    /// its users accept). Nodes that escape (results, `let` values, branches, arguments of
    /// calls and tuples) accept none.
    fn forward_messages(&self, root: ExprId) -> Vec<Option<Message>> {
        let b = self.body;
        let live = b.reachable(root);
        let mut slot: Vec<Option<Option<Message>>> = vec![None; b.len()];
        fn update(slot: &mut [Option<Option<Message>>], e: ExprId, m: Option<Message>) {
            let s = &mut slot[e.index()];
            *s = Some(match s.take() {
                None => m,
                Some(old) => intersect(old, m),
            });
        }
        update(&mut slot, root, None);
        for e in b.ids().rev().filter(|e| live[e.index()]) {
            let Some((op, args, _)) = b.op_call(e) else {
                b.for_each_operand(e, |o| update(&mut slot, o, None));
                continue;
            };
            let out = slot[e.index()].clone().flatten();
            let mut sent = vec![None; args.len()];
            match op.name() {
                "nn.relu" | "nn.leaky_relu" => {
                    sent[0] = out.map(|m| Message {
                        positive: true,
                        ..m
                    });
                }
                "add" | "subtract" => {
                    // The other operand will be divided by the scale.
                    if let Some(m) = out
                        && let Some(i) = (0..2).find(|&i| self.add_passes(e, i, &m))
                    {
                        let mut m = Message { divides: true, ..m };
                        m.div_from.push(args[1 - i]);
                        sent[i] = Some(m);
                    }
                }
                "nn.conv2d" => sent[0] = self.conv_message(e, true),
                "nn.dense" => sent[0] = self.dense_message(e, true),
                _ => {}
            }
            for (&a, m) in args.iter().zip(sent) {
                update(&mut slot, a, m);
            }
        }
        slot.into_iter().map(Option::flatten).collect()
    }

    /// Backward preparation: from the operands up, the message of each operator call used
    /// once (a value used twice cannot be rescaled for one user only).
    fn backward_messages(&self, root: ExprId, uses: &[u32]) -> Vec<Option<Message>> {
        let b = self.body;
        let live = b.reachable(root);
        let mut msg: Vec<Option<Message>> = vec![None; b.len()];
        for e in b.ids().filter(|e| live[e.index()] && uses[e.index()] == 1) {
            let Some((op, args, attrs)) = b.op_call(e) else {
                continue;
            };
            let arg = |i: usize| msg[args[i].index()].clone();
            msg[e.index()] = match op.name() {
                "nn.conv2d" => self.conv_message(e, false),
                "nn.dense" => self.dense_message(e, false),
                "nn.relu" | "nn.leaky_relu" => arg(0).map(|m| Message {
                    positive: true,
                    ..m
                }),
                // The other operand will be multiplied by the scale.
                "add" | "subtract" => match (arg(0), arg(1)) {
                    (Some(m), _) if self.add_passes(e, 0, &m) => Some(m.multiplying(args[1])),
                    (_, Some(m)) if self.add_passes(e, 1, &m) => Some(m.multiplying(args[0])),
                    (Some(l), Some(r))
                        if l.axes == r.axes && self.shape(args[0]) == self.shape(args[1]) =>
                    {
                        intersect(Some(l), Some(r))
                    }
                    _ => None,
                },
                "nn.bias_add" => {
                    let rank = self.shape(e).map_or(0, <[Dim]>::len) as i64;
                    let axis = attrs.get("axis").and_then(AttrValue::as_int).unwrap_or(1);
                    let axis = if axis < 0 { axis + rank } else { axis };
                    arg(0)
                        .filter(|m| m.axes.len() == 1 && m.axes[0] as i64 == axis)
                        .map(|m| m.multiplying(args[1]))
                }
                _ => None,
            };
        }
        msg
    }

    /// Whether `scale_operand` fits `value` on `m`'s axes, positive if `m` asks: how.
    fn scale_fit(&self, value: ExprId, scale_operand: ExprId, m: &Message) -> Option<Fit> {
        let f = fit(
            self.shape(value)?,
            self.shape(scale_operand)?,
            &m.axes,
            true,
        )?;
        scale_allowed(self.body, scale_operand, m, self.variable_scales).then_some(f)
    }
}

/// The operands of the new node `new` (an operator call) and its signature.
fn new_call(b: &BodyBuilder, new: ExprId) -> (irpass_ir::body::SigId, Vec<ExprId>) {
    match b.body().node(new) {
        Node::CallOp { sig, args } => (*sig, b.body().list(*args).to_vec()),
        _ => unreachable!("an operator call is rebuilt as one"),
    }
}

/// A value that carries a scale still to be folded: the new node holds the unscaled value.
#[derive(Clone, Debug)]
struct Scaled {
    axes: Vec<usize>,
    scale: Scale,
}

struct Forward<'a> {
    plan: Plan<'a>,
    messages: Vec<Option<Message>>,
    /// Old nodes whose rewrite is unscaled, with their scale.
    scaled: FxHashMap<ExprId, Scaled>,
}

impl Rewrite for Forward<'_> {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: OldId, new: ExprId) -> Option<ExprId> {
        let (op, args, _) = cx.old.op_call(old)?;
        let name = op.name();
        // The plan and the scales are indexed by the input body's ids.
        let args = args.ids();
        let old = old.id();
        let s = |i: usize| self.scaled.get(&args[i]).cloned();
        match name {
            "multiply" => {
                let m = self.messages[old.index()].clone()?;
                let (_, nargs) = new_call(&cx.new, new);
                // As TVM: the right operand is tried as the scale first, then the left.
                for (v, k) in [(0, 1), (1, 0)] {
                    if let Some(f) = self.plan.scale_fit(args[v], args[k], &m) {
                        let dims = self.plan.dims_on(args[v], &m.axes)?;
                        let scale = build_scale(&mut cx.new, nargs[k], &f, dims);
                        let axes = m.axes.clone();
                        self.scaled.insert(old, Scaled { axes, scale });
                        return Some(nargs[v]);
                    }
                }
                None
            }
            "nn.relu" | "nn.leaky_relu" => {
                // The rebuilt call already applies to the unscaled value.
                let sc = s(0)?;
                self.scaled.insert(old, sc);
                None
            }
            "add" | "subtract" => {
                let (sig, mut nargs) = new_call(&cx.new, new);
                let (i, sc) = match (s(0), s(1)) {
                    (Some(sc), _) => (0, sc),
                    (None, Some(sc)) => (1, sc),
                    _ => return None,
                };
                let rank = self.plan.shape(args[i])?.len();
                let e = lay_scale(&mut cx.new, &sc.scale, rank, &sc.axes, &sc.scale.dims);
                nargs[1 - i] = call(&mut cx.new, "divide", &[nargs[1 - i], e], Attrs::new());
                self.scaled.insert(old, sc);
                Some(cx.new.call_sig(sig, &nargs))
            }
            "nn.conv2d" | "nn.dense" => {
                let sc = s(0)?;
                let (sig, mut nargs) = new_call(&cx.new, new);
                let (rank, axes) = match self.plan.conv(old) {
                    Some(c) => (
                        c.weight_rank,
                        if c.depthwise { c.weight_o } else { c.weight_i },
                    ),
                    None => (2, vec![1]),
                };
                // (Known for a split channel: the message asked for them.)
                let dims = self.plan.dims_on(args[1], &axes).unwrap_or_default();
                let e = lay_scale(&mut cx.new, &sc.scale, rank, &axes, &dims);
                nargs[1] = call(&mut cx.new, "multiply", &[nargs[1], e], Attrs::new());
                Some(cx.new.call_sig(sig, &nargs))
            }
            _ => None,
        }
    }
}

struct Backward<'a> {
    plan: Plan<'a>,
    messages: Vec<Option<Message>>,
    /// The rebuilt node of every old operator call with a message.
    new_of: FxHashMap<ExprId, ExprId>,
}

/// A step of pushing a scale down a path: visit an old node, or rebuild it once its operands
/// on the path are rebuilt.
enum Step {
    Visit(ExprId),
    Build(ExprId),
}

impl Backward<'_> {
    /// The new body's version of old node `e` (with a message) carrying `scale` on `axis`:
    /// the scale pushed into the weights of the producers on the path.
    fn transform(&self, b: &mut BodyBuilder, e: ExprId, scale: &Scale, axes: &[usize]) -> ExprId {
        let o = self.plan.body;
        let on_path =
            |x: ExprId| self.messages[x.index()].is_some() && self.new_of.contains_key(&x);
        let mut done: FxHashMap<ExprId, ExprId> = FxHashMap::default();
        let mut steps = vec![Step::Visit(e)];
        while let Some(step) = steps.pop() {
            match step {
                Step::Visit(x) => {
                    steps.push(Step::Build(x));
                    let (op, args, _) = o.op_call(x).expect("a path holds operator calls");
                    if matches!(op.name(), "nn.relu" | "nn.leaky_relu" | "nn.bias_add") {
                        steps.push(Step::Visit(args[0]));
                    } else if matches!(op.name(), "add" | "subtract") {
                        for &a in args.iter().filter(|&&a| on_path(a)) {
                            steps.push(Step::Visit(a));
                        }
                    }
                }
                Step::Build(x) => {
                    let (op, args, _) = o.op_call(x).expect("a path holds operator calls");
                    let (sig, mut nargs) = new_call(b, self.new_of[&x]);
                    match op.name() {
                        "nn.relu" | "nn.leaky_relu" => nargs[0] = done[&args[0]],
                        "nn.bias_add" => {
                            nargs[0] = done[&args[0]];
                            let s = scale.expr;
                            nargs[1] = call(b, "multiply", &[nargs[1], s], Attrs::new());
                        }
                        "add" | "subtract" => {
                            for i in 0..2 {
                                if on_path(args[i]) {
                                    nargs[i] = done[&args[i]];
                                } else {
                                    let rank = self.plan.shape(args[1 - i]).map_or(0, <[Dim]>::len);
                                    let s = lay_scale(b, scale, rank, axes, &scale.dims);
                                    nargs[i] = call(b, "multiply", &[nargs[i], s], Attrs::new());
                                }
                            }
                        }
                        _ => {
                            let (rank, waxes) = match self.plan.conv(x) {
                                Some(c) => (c.weight_rank, c.weight_o),
                                None => (2, vec![0]),
                            };
                            let dims = self.plan.dims_on(args[1], &waxes).unwrap_or_default();
                            let s = lay_scale(b, scale, rank, &waxes, &dims);
                            nargs[1] = call(b, "multiply", &[nargs[1], s], Attrs::new());
                        }
                    }
                    done.insert(x, b.call_sig(sig, &nargs));
                }
            }
        }
        done[&e]
    }
}

impl Rewrite for Backward<'_> {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: OldId, new: ExprId) -> Option<ExprId> {
        let (op, args, _) = cx.old.op_call(old)?;
        if self.messages[old.index()].is_some() {
            self.new_of.insert(old.id(), new);
            return None;
        }
        if op.name() != "multiply" {
            return None;
        }
        // The plan is indexed by the input body's ids.
        let args = args.ids();
        // The operand with a message is the scaled value; the other must fit it as a scale.
        // (As TVM: the left operand's message is tried alone when it has one.)
        let v = (0..2).find(|&i| self.messages[args[i].index()].is_some())?;
        let m = self.messages[args[v].index()].clone()?;
        let f = self.plan.scale_fit(args[v], args[1 - v], &m)?;
        let (_, nargs) = new_call(&cx.new, new);
        let dims = self.plan.dims_on(args[v], &m.axes)?;
        let scale = build_scale(&mut cx.new, nargs[1 - v], &f, dims);
        Some(self.transform(&mut cx.new, args[v], &scale, &m.axes))
    }
}
