//! `SimplifyExpr`: the pass and its rule set.

use crate::analyses::Types;
use crate::util::ints;
use irpass::{PassContext, function_pass};
use irpass_ir::body::{ArenaFunction, Body, ExprId};
use irpass_ir::infer::BodyTypes;
use irpass_ir::layout::Layout;
use irpass_ir::pattern::RuleCx;
use irpass_ir::{AttrValue, Attrs, DType, Function, IrError, Module};
use irpass_ir_macros::rules;
use std::sync::Arc;

/// Algebraic simplifications that keep the type (TVM's `SimplifyExpr`): identities `x * 1`,
/// `1 * x`, `x + 0`, `0 + x`, `x - 0`, `x / 1` (the 0 or 1 a constant or a `zeros`/`ones`
/// call, when it does not broadcast `x` to a bigger shape or another dtype), `--x`,
/// `relu(relu(x))`, a `transpose` of a `transpose` (composed, or removed when it is the
/// identity; a `layout_transform` between layouts of the same letters counts as one), layout
/// changes in a row through a split layout (`NCHW` to `NCHW4c` and back, a `transpose` beside
/// a `layout_transform`) as one `layout_transform` or nothing, two
/// reshapes in a row (`reshape`, `reverse_reshape`, `expand_dims`, `squeeze`) to a static
/// shape as one `reshape`, a `reshape` or `cast` to what `x` already is;
/// an operand that is one value everywhere (`full` of a constant, `zeros`, `ones`) as a scalar;
/// `x + x` to `x * 2`; `c / sqrt(x)` to `c * rsqrt(x)` (`rsqrt(x)` for c = 1); a widening cast
/// followed by another cast to one cast; a clip to a range an intermediate integer cast
/// holds, cast on to an integer type, without the intermediate cast; a clip covering an
/// integer type's whole range removed; `zeros_like`, `ones_like`, `full_like`, `cast_like`,
/// `reshape_like`, `broadcast_to_like` made concrete (`zeros`, ..., `broadcast_to`) when
/// shapes are static; constants reassociated and folded: `(x + c1) + c2` to `x + (c1 + c2)`,
/// `(x * c1) * c2` to `x * (c1 * c2)`, `(x + c1) * c2` to `x * c2 + c1 * c2`, and a product
/// by a constant matrix scaled by a constant scalar, `(x W) s`, to `x (W s)`; a binomial
/// `x² + b·xy + c·y²` (or with `y²` leading) with real roots factored into
/// `(x + p·y) * (x + q·y)` (integer roots for integer types); `squeeze` of exactly the axes
/// an `expand_dims` added removed with it; a `broadcast_to` to its operand's own shape, and a
/// `where` on a constant condition true (false) everywhere as its first (second) branch when
/// that keeps the type; a softmax over an axis of size 1 as ones (its log
/// as zeros), and a `matmul` by a (1, 1) matrix of ones as the other operand.
#[function_pass(opt_level = 0, name = "SimplifyExpr")]
pub fn transform(func: Function, module: &Module, ctx: &PassContext) -> irpass::Result<Function> {
    let types = || Types::of(&func, module, ctx);
    Ok(func.with_code(simplify_expr(&func.code, types)?))
}

rules! {
    /// `SimplifyExpr`'s rules, in priority order (the registered pass's doc comment lists them).
    pub(crate) static SIMPLIFY_EXPR: RuleSet = {
        zeros_like: "zeros_like(?x)" => "zeros(shape=?x.shape, dtype=?x.dtype)";
        ones_like: "ones_like(?x)" => "ones(shape=?x.shape, dtype=?x.dtype)";
        full_like: "full_like(?x, ?v)" => "full(?v, shape=?x.shape, dtype=?x.dtype)";
        cast_like: "cast_like(?x, ?like)" => "cast(?x, dtype=?like.dtype)";
        reshape_like: "reshape_like(?x, _) as ?r" => "reshape(?x, newshape=?r.shape)";
        broadcast_to_like: "broadcast_to_like(?x, _) as ?r" => "broadcast_to(?x, shape=?r.shape)";
        /// `x + x` is `x * 2` (TVM's `SimplifyAdd`).
        double: "add(?x, ?x)" => { let two = cx.scalar_like(x, 2.0)?; cx.binary("multiply", x, two) };
        /// `c / sqrt(x)` is `c * rsqrt(x)`, `rsqrt(x)` for a scalar 1.
        rsqrt: "divide(const as ?c, sqrt(?x))" if cx.dtype(x).is_some_and(DType::is_float) => {
            let r = cx.unary("rsqrt", x)?;
            let out = if cx.scalar(c) == Some(1.0) { r } else { cx.binary("multiply", c, r)? };
            cx.same_type(out, root).then_some(out)
        };
        /// Constants reassociated and folded (TVM's `SimplifyAdd`/`SimplifyMul`), where the
        /// inner value is read only here (else the rewrite would add a node beside it).
        exclusive reassociate: "(add | multiply)((add | multiply)(?x, const as ?c1) as ?inner, const as ?c2)"
            if cx.constant(x).is_none() => reassociate(cx, [root, inner, x, c1, c2]);
        /// A product by a constant matrix (`matmul`, `nn.dense`), scaled by a constant scalar,
        /// is the product by the scaled matrix, where the product is read only here and the
        /// matrix nowhere else: a scaled attention query `(x W) s` is then a projection like
        /// the key's and the value's, which `CombineParallelDense` joins with its bias.
        exclusive scaled_weight: "multiply((matmul | nn.dense)(?x, const as ?w) as ?product, const as ?s)"
            if cx.constant(x).is_none() && cx.uses(w) == Some(1) => scaled_weight(cx, root, product, w, s);
        /// `x² + b·xy + c·y²` factored (TVM's `SimplifyBinomial`).
        binomial: "add(?l, ?r)" => binomial(cx, root, l, r);
        /// An operand one value everywhere as a scalar (TVM's `SimplifyFullElementwise`).
        uniform: "(add | subtract | multiply | divide)(?l, ?r)" => uniform_operand(cx, root, l, r);
        /// A widening cast then another is one cast; so is a clip to a range the intermediate
        /// integer type holds, cast on to an integer type (TVM's `SimplifyConsecutiveCast`,
        /// `SimplifyClipAndConsecutiveCast`).
        cast_chain: "cast(cast(?x) as ?mid) as ?r" if one_cast_does(cx, x, mid, r) => "cast(?x, dtype=?r.dtype)";
        /// `squeeze` of exactly the axes an `expand_dims` added.
        squeeze_expand: "squeeze(expand_dims(?x) as ?e)" if squeezes_added(cx, root, x, e) && cx.same_type(x, root) => "?x";
        /// A clip covering every value of an integer type (TVM's `SimplifyCastClip`).
        full_clip: "clip(?x)" if clip_covers(cx, root, x) => "?x";
        mul_one: "multiply(?a, ?c)" if cx.is_all(c, 1.0) && cx.same_type(a, root) => "?a";
        add_zero: "add(?a, ?c)" if cx.is_all(c, 0.0) && cx.same_type(a, root) => "?a";
        sub_zero: "subtract(?a, ?c)" if cx.is_all(c, 0.0) && cx.same_type(a, root) => "?a";
        div_one: "divide(?a, ?c)" if cx.is_all(c, 1.0) && cx.same_type(a, root) => "?a";
        double_negative: "negative(negative(?x))" => "?x";
        double_relu: "nn.relu(nn.relu(_) as ?r)" => "?r";
        /// A softmax over an axis of one element is 1 everywhere, its logarithm 0 (an
        /// attention over one position: its scores are dead).
        softmax_of_one: "nn.softmax(?x) as ?r" if unit_axis(cx, r, x) => "ones_like(?x)";
        log_softmax_of_one: "nn.log_softmax(?x) as ?r" if unit_axis(cx, r, x) => "zeros_like(?x)";
        /// A product by a (1, 1) matrix of ones (of a batch of them) is the other operand.
        matmul_by_one: "matmul(?a, ?b)" if unit_matrix(cx, a) && cx.same_type(b, root) => "?b";
        matmul_by_one_after: "matmul(?a, ?b)" if unit_matrix(cx, b) && cx.same_type(a, root) => "?a";
        same_cast: "cast(?a)" if cx.dtype(a).is_some() && cx.dtype(a) == cx.dtype(root) => "?a";
        /// A `broadcast_to` (ONNX's `Expand`) to the shape its operand has.
        same_broadcast: "broadcast_to(?a)" if cx.same_type(a, root) => "?a";
        /// A `where` on a constant condition that is true everywhere (false everywhere) is its
        /// first (second) branch, when that has the result's type.
        constant_where: "where(const as ?c, ?a, ?b)" => constant_where(cx, root, c, a, b);
        /// Two reshapes in a row (`reshape`, `reverse_reshape`, `expand_dims`, `squeeze`) are
        /// one `reshape` to the static shape they end at.
        reshape_chain: "(reshape | reverse_reshape | expand_dims | squeeze)((reshape | reverse_reshape | expand_dims | squeeze)(?x)) as ?r" => "reshape(?x, newshape=?r.shape)";
        same_reshape: "(reshape | reverse_reshape)(?a)" if cx.tensor(a).is_some() && cx.same_type(a, root) => "?a";
        /// Permutations composed, removed when the identity (TVM's `SimplifyTranspose`).
        permutation: "(transpose | layout_transform)(?a)" => permutations(cx, root, a);
        /// Layout changes in a row, split layouts included (`NCHW` → `NCHW4c` → `NCHW`), or a
        /// `transpose` beside one, are one `layout_transform`, nothing when it maps a layout
        /// to itself (TVM's `SimplifyTranspose`).
        layout_chain: "layout_transform((layout_transform | transpose)(?x) as ?inner)" => layout_chain(cx, root, inner, x);
        transpose_after_layout: "transpose(layout_transform(?x) as ?inner)" => layout_chain(cx, root, inner, x);
    };
}

/// Algebraic simplifications that keep the type, as the registered `SimplifyExpr` (whose doc
/// comment lists them). `types` gives the input's types, asked for only when some node could
/// start a rule. `None` when there is nothing to simplify.
///
/// # Errors
/// None in practice (the rule set is checked by the tests); an error of the rule engine
/// otherwise.
pub fn simplify_expr(
    f: &ArenaFunction,
    types: impl FnOnce() -> Result<Arc<BodyTypes>, IrError>,
) -> Result<Option<ArenaFunction>, IrError> {
    SIMPLIFY_EXPR.apply_with_types(f, types)
}

/// Whether a cast of `x` to `mid` then on to `r`'s dtype is the cast of `x` alone: the first
/// widens, or `x` is a clip to a range `mid` (an integer type) holds and `r` is an integer.
fn one_cast_does(cx: &mut RuleCx<'_>, x: ExprId, mid: ExprId, r: ExprId) -> bool {
    let mut check = || {
        let (from, mid, to) = (cx.dtype(x)?, cx.dtype(mid)?, cx.dtype(r)?);
        Some(from.widens_to(mid) || to.int_range().is_some() && within(clip_bounds(cx, x)?, mid)?)
    };
    check() == Some(true)
}

/// Whether a clip covers every value of the integer type of its operand.
fn clip_covers(cx: &mut RuleCx<'_>, clip: ExprId, x: ExprId) -> bool {
    let (Some(d), Some((lo, hi))) = (cx.dtype(x), clip_bounds(cx, clip)) else {
        return false;
    };
    d.int_range()
        .is_some_and(|(dlo, dhi)| lo <= dlo && dhi <= hi)
}

/// The bounds of a `clip` call.
fn clip_bounds(cx: &RuleCx<'_>, e: ExprId) -> Option<(f64, f64)> {
    (cx.op_call(e)?.0 == "clip").then_some(())?;
    Some((
        cx.attr(e, "a_min")?.as_float()?,
        cx.attr(e, "a_max")?.as_float()?,
    ))
}

/// Whether the range `lo..=hi` is inside integer type `d`'s.
fn within((lo, hi): (f64, f64), d: DType) -> Option<bool> {
    let (dlo, dhi) = d.int_range()?;
    Some(dlo <= lo && hi <= dhi)
}

/// Whether a `squeeze` removes exactly the axes an `expand_dims` of `x` added.
/// Whether the softmax `r` of `x` is over an axis of size 1.
fn unit_axis(cx: &mut RuleCx<'_>, r: ExprId, x: ExprId) -> bool {
    let (Some(t), Some(axis)) = (cx.tensor(x), cx.attr(r, "axis").and_then(|a| a.as_int())) else {
        return false;
    };
    let rank = t.rank() as i64;
    let axis = if axis < 0 { axis + rank } else { axis };
    usize::try_from(axis)
        .ok()
        .and_then(|a| t.shape.get(a))
        .is_some_and(|d| d.value() == Some(1))
}

/// Whether `e` is a constant (or `ones`) of ones whose last two sizes are 1.
fn unit_matrix(cx: &mut RuleCx<'_>, e: ExprId) -> bool {
    cx.shape(e)
        .is_some_and(|s| s.len() >= 2 && s[s.len() - 2..] == [1, 1])
        && cx.is_all(e, 1.0)
}

fn squeezes_added(cx: &mut RuleCx<'_>, squeeze: ExprId, x: ExprId, ex: ExprId) -> bool {
    let mut added = || {
        let rank = cx.tensor(x)?.rank() as i64;
        let axis = cx.attr(ex, "axis")?.as_int()?;
        let axis = if axis < 0 { axis + rank + 1 } else { axis };
        let n = cx.attr(ex, "num_newaxis")?.as_int()?;
        let mut squeezed = cx.attr(squeeze, "axis")?.as_int_list()?;
        squeezed.sort_unstable();
        Some(squeezed == (axis..axis + n).collect::<Vec<_>>())
    };
    added() == Some(true)
}

/// `(x + c1) + c2` to `x + (c1 + c2)`, `(x * c1) * c2` to `x * (c1 * c2)`, `(x + c1) * c2` to
/// `x * c2 + c1 * c2`, the constants folded, unless combining them would broadcast them to a
/// larger constant than either (a model would grow for no fewer operations) or overflow.
fn reassociate(cx: &mut RuleCx<'_>, [root, inner, x, c1, c2]: [ExprId; 5]) -> Option<ExprId> {
    let (outer, iname) = (cx.op_call(root)?.0, cx.op_call(inner)?.0);
    let (t1, t2) = (cx.constant(c1)?.clone(), cx.constant(c2)?.clone());
    let combined = irpass_ir::op::broadcast_concrete(t1.shape(), t2.shape()).ok()?;
    if combined.iter().product::<usize>() > t1.len().max(t2.len()) {
        return None;
    }
    // Constants that overflow when combined first (1e30 * 1e10 in float32) would turn what
    // the original order computed into an infinity or a NaN: left as they are.
    let combine = |cx: &mut RuleCx<'_>, op: &str| {
        let k = cx.fold(op, &[&t1, &t2], &Attrs::new())?;
        let finite = |t: &irpass_ir::Tensor| t.float_values().iter().all(|v| v.is_finite());
        let overflows = finite(&t1) && finite(&t2) && !finite(cx.constant(k)?);
        (!overflows).then_some(k)
    };
    let out = match (outer, iname) {
        ("add", "add") | ("multiply", "multiply") => {
            let k = combine(cx, outer)?;
            cx.binary(outer, x, k)?
        }
        ("multiply", "add") => {
            let k = combine(cx, "multiply")?;
            let xm = cx.binary("multiply", x, c2)?;
            cx.binary("add", xm, k)?
        }
        _ => return None,
    };
    cx.same_type(out, root).then_some(out)
}

/// The branch of `where(c, a, b)` the constant condition `c` picks everywhere, if it picks one
/// and that branch has the type of the result `root`.
fn constant_where(
    cx: &mut RuleCx<'_>,
    root: ExprId,
    c: ExprId,
    a: ExprId,
    b: ExprId,
) -> Option<ExprId> {
    let values = cx.constant(c)?.float_values().into_owned();
    let pick = if values.iter().all(|&v| v != 0.0) {
        a
    } else if values.iter().all(|&v| v == 0.0) {
        b
    } else {
        return None;
    };
    cx.same_type(pick, root).then_some(pick)
}

/// `product` (`matmul` or `nn.dense` by the constant `w`) scaled by the one-element constant
/// `s`, as the product by `w · s`, when that keeps the type and nothing overflows.
fn scaled_weight(
    cx: &mut RuleCx<'_>,
    root: ExprId,
    product: ExprId,
    w: ExprId,
    s: ExprId,
) -> Option<ExprId> {
    let (op, args, attrs) = cx.op_call(product)?;
    let (x, attrs) = (args[0], attrs.clone());
    let (wt, st) = (cx.constant(w)?.clone(), cx.constant(s)?.clone());
    if st.len() != 1 || !st.dtype().is_float() {
        return None;
    }
    let scaled = cx.fold("multiply", &[&wt, &st], &Attrs::new())?;
    let finite = |t: &irpass_ir::Tensor| t.float_values().iter().all(|v| v.is_finite());
    if cx.constant(scaled)?.shape() != wt.shape() || (finite(&wt) && !finite(cx.constant(scaled)?))
    {
        return None;
    }
    let out = cx.call(op, &[x, scaled], attrs)?;
    cx.same_type(out, root).then_some(out)
}

/// An operand that is one value everywhere (`full` of a constant scalar, `zeros`, `ones`) as
/// that scalar, when the result keeps its type.
fn uniform_operand(cx: &mut RuleCx<'_>, root: ExprId, l: ExprId, r: ExprId) -> Option<ExprId> {
    let name = cx.op_call(root)?.0;
    for i in 0..2 {
        let operand = [l, r][i];
        let Some(scalar) = cx.uniform_scalar(operand) else {
            continue;
        };
        let mut args = [l, r];
        args[i] = cx.constant_node(scalar);
        let out = cx.binary(name, args[0], args[1])?;
        if cx.same_type(out, root) {
            return Some(out);
        }
    }
    None
}

/// A product of at most three factors, at most one a scalar constant: its value (1 without
/// one) and the other two factors, sorted.
fn monomial(b: &Body, e: ExprId) -> Option<(f64, Vec<ExprId>)> {
    let (mut coefficient, mut factors, mut stack) = (None, Vec::new(), vec![e]);
    while let Some(f) = stack.pop() {
        if let Some(("multiply", &[l, r])) = b.op_call(f).map(|(o, a, _)| (o.name(), a)) {
            stack.extend([l, r]);
        } else if let irpass_ir::Node::Constant(k) = b.node(f) {
            let t = b.constant(*k);
            if !t.shape().is_empty() || coefficient.is_some() {
                return None;
            }
            coefficient = t.scalar_value();
        } else {
            factors.push(f);
        }
        if factors.len() > 2 {
            return None;
        }
    }
    factors.sort();
    (factors.len() == 2).then_some((coefficient.unwrap_or(1.0), factors))
}

/// `x² + b·xy + c·y²` with scalar constants, in any order and association, factored as
/// `(x + p·y) * (x + q·y)` when it has real roots (integer roots for an integer type).
fn binomial(cx: &mut RuleCx<'_>, root: ExprId, l: ExprId, r: ExprId) -> Option<ExprId> {
    let (inner, third) = match (cx.op_call(l).map(|c| c.0), cx.op_call(r).map(|c| c.0)) {
        (Some("add"), _) => (l, r),
        (_, Some("add")) => (r, l),
        _ => return None,
    };
    let [a, b] = *cx.op_call(inner)?.1 else {
        return None;
    };
    let terms = [a, b, third].map(|t| monomial(cx.body(), t));
    let (mut squares, mut cross) = (Vec::new(), None);
    for (k, f) in terms.into_iter().collect::<Option<Vec<_>>>()? {
        match f[0] == f[1] {
            true => squares.push((k, f[0])),
            false => cross = Some((k, f)),
        }
    }
    let (bv, xy) = cross?;
    let [(mut av, mut x), (mut cv, mut y)] = squares[..] else {
        return None;
    };
    if !(xy.contains(&x) && xy.contains(&y)) || x == y {
        return None;
    }
    if av != 1.0 && cv == 1.0 {
        (x, y, av, cv) = (y, x, cv, av);
    }
    let det = bv * bv - 4.0 * cv;
    if av != 1.0 || det < 0.0 {
        return None;
    }
    let (p, q) = ((bv + det.sqrt()) / 2.0, (bv - det.sqrt()) / 2.0);
    let dtype = cx.dtype(root)?;
    if !dtype.is_float() && (p.fract() != 0.0 || q.fract() != 0.0) {
        return None;
    }
    let mut factor = |k: f64| {
        let term = if k == 1.0 {
            y
        } else {
            let c = cx.scalar_constant(dtype, k);
            cx.binary("multiply", c, y)?
        };
        cx.binary("add", x, term)
    };
    let first = factor(p)?;
    let second = if p == q { first } else { factor(q)? };
    let out = cx.binary("multiply", first, second)?;
    cx.same_type(out, root).then_some(out)
}

/// A chain of two axis permutations (`transpose`, or `layout_transform` between layouts of
/// the same letters) is one `transpose`, or nothing; a lone identity permutation goes.
fn permutations(cx: &mut RuleCx<'_>, root: ExprId, a: ExprId) -> Option<ExprId> {
    let rank = cx.tensor(root)?.rank();
    let outer = permutation_of(cx, root, rank)?;
    let identity = |p: &[usize]| p.iter().enumerate().all(|(i, &j)| i == j);
    let Some(inner) = permutation_of(cx, a, rank) else {
        return identity(&outer).then_some(a);
    };
    let x = cx.op_call(a)?.1[0];
    let composed: Vec<usize> = outer.iter().map(|&i| inner[i]).collect();
    if identity(&composed) {
        return Some(x);
    }
    let axes = ints(&composed.iter().map(|&p| p as i64).collect::<Vec<_>>());
    cx.call("transpose", &[x], Attrs::from_pairs([("axes", axes)]))
}

/// The axis permutation of node `e`, a `transpose` or a `layout_transform` of the same letters.
fn permutation_of(cx: &RuleCx<'_>, e: ExprId, rank: usize) -> Option<Vec<usize>> {
    let (op, _, attrs) = cx.body().op_call(e)?;
    irpass_ir::op::permutation_of(op, attrs, rank)
}

/// The layouts a `layout_transform` moves between, or those a `transpose` does given the
/// layout on one side (`known`, `true` for its output): `(from, to)`.
fn layouts_of(
    cx: &RuleCx<'_>,
    e: ExprId,
    known: Option<(&Layout, bool)>,
) -> Option<(Layout, Layout)> {
    let (op, _, _) = cx.body().op_call(e)?;
    let read = |name: &str| Layout::parse(cx.attr(e, name)?.as_str()?).ok();
    match op.name() {
        "layout_transform" => Some((read("src_layout")?, read("dst_layout")?)),
        "transpose" => {
            let (layout, is_output) = known?;
            if !layout.is_primal() {
                return None;
            }
            let perm = permutation_of(cx, e, layout.rank())?;
            // Output axis j is input axis perm[j]: the input is the output permuted back.
            if is_output {
                let mut back = vec![0; perm.len()];
                for (j, &i) in perm.iter().enumerate() {
                    back[i] = j;
                }
                Some((layout.permuted(&back)?, layout.clone()))
            } else {
                Some((layout.clone(), layout.permuted(&perm)?))
            }
        }
        _ => None,
    }
}

/// `outer(inner(x))`, two layout changes of which at least one is a `layout_transform`, as
/// one `layout_transform` from `inner`'s source layout to `outer`'s destination, or `x` when
/// they are the same layout.
fn layout_chain(cx: &mut RuleCx<'_>, outer: ExprId, inner: ExprId, x: ExprId) -> Option<ExprId> {
    let is_transpose = |cx: &RuleCx<'_>, e| {
        cx.body()
            .op_call(e)
            .is_some_and(|c| c.0.name() == "transpose")
    };
    let (src, dst) = if is_transpose(cx, inner) {
        let (mid, dst) = layouts_of(cx, outer, None)?;
        let (src, _) = layouts_of(cx, inner, Some((&mid, true)))?;
        (src, dst)
    } else {
        let (src, mid) = layouts_of(cx, inner, None)?;
        let (mid2, dst) = layouts_of(cx, outer, Some((&mid, false)))?;
        if mid2 != mid {
            return None;
        }
        (src, dst)
    };
    if src == dst {
        return cx.same_type(x, outer).then_some(x);
    }
    let attrs = Attrs::from_pairs([
        ("src_layout", AttrValue::Str(src.to_string())),
        ("dst_layout", AttrValue::Str(dst.to_string())),
    ]);
    let out = cx.call("layout_transform", &[x], attrs)?;
    cx.same_type(out, outer).then_some(out)
}
