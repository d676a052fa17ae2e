//! `SimplifyExpr`, as a rewrite of a function's code.

use super::call;
use irpass_ir::body::{ArenaFunction, Body, BodyBuilder, ExprId, Node};
use irpass_ir::infer::{BodyTypes, LocalTyper};
use irpass_ir::rewrite::{Rewrite, RewriteCx, Rewritten, rewrite_body};
use std::sync::Arc;

use irpass_ir::{AttrValue, Attrs, DType, Op, Tensor, Type, Value};

use crate::util::ints;

/// Algebraic simplifications that keep the type, as the registered `SimplifyExpr` (whose doc
/// comment lists them). `types` are the input's. `None` when there is nothing to simplify.
pub fn simplify_expr(f: &ArenaFunction, types: &BodyTypes) -> Option<Rewritten> {
    let typer = super::typer_for(f, types);
    rewrite_body(&f.body, &f.params, f.root, &mut Simplify { types, typer })
}

struct Simplify<'t> {
    /// The input's types (read through the old ids).
    types: &'t BodyTypes,
    /// The new body's types: a rebuilt node has its old node's type, a new one its operands'.
    typer: LocalTyper,
}

/// The operator name, arguments and attributes of node `e`, if it calls an operator.
fn op_call(b: &Body, e: ExprId) -> Option<(&'static str, &[ExprId], &Attrs)> {
    b.op_call(e)
        .map(|(op, args, attrs)| (op.name(), args, attrs))
}

/// The range of values of an integer dtype (`None` for the others).
fn int_range(d: DType) -> Option<(f64, f64)> {
    Some(match d {
        DType::Int8 => (-128.0, 127.0),
        DType::UInt8 => (0.0, 255.0),
        DType::Int16 => (-32768.0, 32767.0),
        DType::Int32 => (-2_147_483_648.0, 2_147_483_647.0),
        DType::Int64 => (-9.223_372_036_854_776e18, 9.223_372_036_854_776e18),
        _ => return None,
    })
}

/// Whether a cast from `from` to `to` keeps every value: a wider type of the same kind (TVM's
/// `IsWidenCast`).
fn widens(from: DType, to: DType) -> bool {
    let kind = |d: DType| match d {
        DType::Float16 | DType::Float32 | DType::Float64 => 0,
        DType::Int8 | DType::Int16 | DType::Int32 | DType::Int64 => 1,
        DType::UInt8 => 2,
        DType::Bool => 3,
    };
    kind(from) == kind(to) && from.bytes() <= to.bytes()
}

/// The constant tensor of node `e`, if it is one.
fn constant(b: &Body, e: ExprId) -> Option<Arc<Tensor>> {
    match b.node(e) {
        Node::Constant(k) => Some(b.constant(*k).clone()),
        _ => None,
    }
}

/// `op` applied to two constants, as a constant of the new body.
fn fold(nb: &mut BodyBuilder, op: &str, a: &Tensor, c: &Tensor) -> Option<ExprId> {
    let v = Op::get(op)
        .ok()?
        .eval(
            &[Value::tensor(a.clone()), Value::tensor(c.clone())],
            &Attrs::new(),
        )
        .ok()?;
    let t = v.as_tensor()?.clone();
    Some(nb.constant(Arc::new(t)))
}

/// Whether `e` is `v` everywhere: a constant, or a call of `zeros` (for 0) or `ones` (for 1).
fn is_all(b: &Body, e: ExprId, v: f64) -> bool {
    match b.node(e) {
        Node::Constant(k) => b.constant(*k).values().iter().all(|&x| x == v),
        _ => matches!(
            (op_call(b, e), v),
            (Some(("zeros", _, _)), 0.0) | (Some(("ones", _, _)), 1.0)
        ),
    }
}

impl Simplify<'_> {
    fn ty(&mut self, b: &Body, e: ExprId) -> Option<Type> {
        self.typer.of(b, e).cloned()
    }

    /// `x` in place of `whole` when it has `whole`'s type (a rewrite that would change a shape
    /// or dtype is not one).
    fn keep_if_same_type(&mut self, b: &Body, x: ExprId, whole: ExprId) -> Option<ExprId> {
        let (tx, tw) = (self.ty(b, x)?, self.ty(b, whole)?);
        (tx == tw).then_some(x)
    }

    /// The static shape of node `e` of the new body, as integers.
    fn static_shape(&mut self, b: &Body, e: ExprId) -> Option<Vec<i64>> {
        let s = self.typer.tensor(b, e)?.static_shape()?;
        Some(s.iter().map(|&d| d as i64).collect())
    }

    /// The scalar that `e` (of the new body) holds everywhere, when it is `full` of a constant
    /// scalar, `zeros` or `ones`.
    fn uniform_scalar(&mut self, b: &Body, e: ExprId) -> Option<Tensor> {
        let (name, args, _) = op_call(b, e)?;
        let dtype = self.typer.tensor(b, e)?.dtype;
        match (name, args) {
            ("zeros", _) => Some(Tensor::scalar(dtype, 0.0)),
            ("ones", _) => Some(Tensor::scalar(dtype, 1.0)),
            ("full", &[v]) => {
                let t = constant(b, v)?;
                t.shape().is_empty().then(|| t.cast(dtype))
            }
            _ => None,
        }
    }

    /// A product of at most three factors, at most one of them a scalar constant: the
    /// constant's value (1 without one) and the other factors, sorted.
    fn monomial(&self, b: &Body, e: ExprId) -> Option<(f64, Vec<ExprId>)> {
        let mut coefficient = None;
        let mut factors = Vec::new();
        let mut stack = vec![e];
        while let Some(f) = stack.pop() {
            match op_call(b, f) {
                Some(("multiply", &[l, r], _)) => stack.extend([l, r]),
                _ => match constant(b, f) {
                    Some(t) if t.shape().is_empty() && coefficient.is_none() => {
                        coefficient = Some(t.values()[0]);
                    }
                    Some(_) => return None,
                    None => factors.push(f),
                },
            }
            if factors.len() > 2 {
                return None;
            }
        }
        factors.sort();
        (factors.len() == 2).then_some((coefficient.unwrap_or(1.0), factors))
    }

    /// `a·x² + b·xy + c·y²` with scalar constants (1 when absent), in any order and
    /// association, factored as `(x + p·y) * (x + q·y)` when it has real roots, `x` being the
    /// variable whose square has coefficient 1 (TVM's `SimplifyBinomial`). For an integer type
    /// `p` and `q` must be integers.
    fn binomial(&mut self, nb: &mut BodyBuilder, e: ExprId, args: &[ExprId]) -> Option<ExprId> {
        let b = nb.body();
        let (inner, third) = match (op_call(b, args[0]), op_call(b, args[1])) {
            (Some(("add", _, _)), _) => (args[0], args[1]),
            (_, Some(("add", _, _))) => (args[1], args[0]),
            _ => return None,
        };
        let (_, inner_args, _) = op_call(b, inner)?;
        let terms = [inner_args[0], inner_args[1], third].map(|t| self.monomial(b, t));
        let [Some(t0), Some(t1), Some(t2)] = terms else {
            return None;
        };
        let (mut squares, mut cross) = (Vec::new(), None);
        for (k, f) in [t0, t1, t2] {
            if f[0] == f[1] {
                squares.push((k, f[0]));
            } else {
                cross = Some((k, f));
            }
        }
        let (bv, xy) = cross?;
        let [(av, mut x), (cv, mut y)] = squares[..] else {
            return None;
        };
        let (mut av, mut cv) = (av, cv);
        if !(xy.contains(&x) && xy.contains(&y)) || x == y {
            return None;
        }
        if av != 1.0 && cv == 1.0 {
            std::mem::swap(&mut x, &mut y);
            std::mem::swap(&mut av, &mut cv);
        }
        // (x + p·y)(x + q·y) = x² + (p + q)·xy + p·q·y²: a must be 1.
        if av != 1.0 {
            return None;
        }
        let det = bv * bv - 4.0 * cv;
        if det < 0.0 {
            return None;
        }
        let (p, q) = ((bv + det.sqrt()) / 2.0, (bv - det.sqrt()) / 2.0);
        let dtype = self.typer.tensor(b, e)?.dtype;
        if !dtype.is_float() && (p.fract() != 0.0 || q.fract() != 0.0) {
            return None;
        }
        let factor = |nb: &mut BodyBuilder, k: f64| {
            let term = if k == 1.0 {
                y
            } else {
                let c = nb.constant(Arc::new(Tensor::scalar(dtype, k)));
                call(nb, "multiply", &[c, y], Attrs::new())
            };
            call(nb, "add", &[x, term], Attrs::new())
        };
        let first = factor(nb, p);
        let second = if p == q { first } else { factor(nb, q) };
        let out = call(nb, "multiply", &[first, second], Attrs::new());
        self.keep_if_same_type(nb.body(), out, e)
    }

    /// Constant reassociation (TVM's `SimplifyAdd`/`SimplifyMul`): `(x + c1) + c2` to
    /// `x + (c1 + c2)`, `(x * c1) * c2` to `x * (c1 * c2)`, `(x + c1) * c2` to
    /// `x * c2 + c1 * c2`, either operand order, the constants folded.
    fn reassociate(
        &mut self,
        nb: &mut BodyBuilder,
        e: ExprId,
        outer: &str,
        args: &[ExprId],
    ) -> Option<ExprId> {
        let b = nb.body();
        let (inner, c2) = match (constant(b, args[0]), constant(b, args[1])) {
            (None, Some(c)) => (args[0], c),
            (Some(c), None) => (args[1], c),
            _ => return None,
        };
        let (iname, iargs, _) = op_call(b, inner)?;
        if !matches!(iname, "add" | "multiply") {
            return None;
        }
        let (x, c1) = match (constant(b, iargs[0]), constant(b, iargs[1])) {
            (None, Some(c)) => (iargs[0], c),
            (Some(c), None) => (iargs[1], c),
            _ => return None,
        };
        // Combining two constants that broadcast against each other would make one larger
        // than both (a (C, 1, 1) and a (K, 1, 1, 1) scale become a (K, C, 1, 1) tensor): a
        // model would grow by the product's bytes for no fewer operations.
        let combined = irpass_ir::op::broadcast_concrete(c1.shape(), c2.shape()).ok()?;
        if combined.iter().product::<usize>() > c1.len().max(c2.len()) {
            return None;
        }
        let out = match (outer, iname) {
            ("add", "add") | ("multiply", "multiply") => {
                let k = fold(nb, outer, &c1, &c2)?;
                call(nb, outer, &[x, k], Attrs::new())
            }
            ("multiply", "add") => {
                let k = fold(nb, "multiply", &c1, &c2)?;
                let c2e = nb.constant(c2);
                let mut xm = call(nb, "multiply", &[x, c2e], Attrs::new());
                // The new product may simplify in turn (`(x * c1) * c2`).
                while let Some(next) = self.simplify(nb, xm) {
                    xm = next;
                }
                call(nb, "add", &[xm, k], Attrs::new())
            }
            _ => return None,
        };
        self.keep_if_same_type(nb.body(), out, e)
    }

    fn simplify(&mut self, nb: &mut BodyBuilder, e: ExprId) -> Option<ExprId> {
        let b = nb.body();
        let (name, args, attrs) = op_call(b, e)?;
        let args = args.to_vec();
        let attrs = attrs.clone();
        // Operators whose result another form gives directly (TVM's concretisation of the
        // `*_like` operators, when the shapes are static).
        match (name, &args[..]) {
            ("zeros_like" | "ones_like", &[x]) => {
                let t = self.typer.tensor(b, x)?;
                let shape = self.static_shape(b, x)?;
                let attrs = Attrs::from_pairs([
                    ("shape", ints(&shape)),
                    ("dtype", AttrValue::Str(t.dtype.name().into())),
                ]);
                return Some(call(nb, &name[..name.len() - 5], &[], attrs));
            }
            ("full_like", &[x, v]) => {
                let t = self.typer.tensor(b, x)?;
                let shape = self.static_shape(b, x)?;
                let attrs = Attrs::from_pairs([
                    ("shape", ints(&shape)),
                    ("dtype", AttrValue::Str(t.dtype.name().into())),
                ]);
                return Some(call(nb, "full", &[v], attrs));
            }
            ("cast_like", &[x, like]) => {
                let d = self.typer.tensor(b, like)?.dtype;
                let attrs = Attrs::from_pairs([("dtype", AttrValue::Str(d.name().into()))]);
                return Some(call(nb, "cast", &[x], attrs));
            }
            ("reshape_like", &[x, _]) => {
                let shape = self.static_shape(b, e)?;
                let attrs = Attrs::from_pairs([("newshape", ints(&shape))]);
                return Some(call(nb, "reshape", &[x], attrs));
            }
            ("broadcast_to_like", &[x, _]) => {
                let shape = self.static_shape(b, e)?;
                let attrs = Attrs::from_pairs([("shape", ints(&shape))]);
                return Some(call(nb, "broadcast_to", &[x], attrs));
            }
            // `x + x` is `x * 2` (TVM's `SimplifyAdd`).
            ("add", &[x, y]) if x == y => {
                let d = self.typer.tensor(b, x)?.dtype;
                let two = nb.constant(Arc::new(Tensor::scalar(d, 2.0)));
                return Some(call(nb, "multiply", &[x, two], Attrs::new()));
            }
            // `c / sqrt(x)` is `c * rsqrt(x)`, `rsqrt(x)` when c is a scalar 1.
            ("divide", &[c, s]) if constant(b, c).is_some() => {
                let Some(("sqrt", &[x], _)) = op_call(b, s) else {
                    return self.simplify_more(nb, e, name, &args, &attrs);
                };
                if !self.typer.tensor(b, x)?.dtype.is_float() {
                    return None;
                }
                let one =
                    constant(b, c).is_some_and(|t| t.shape().is_empty() && t.values() == [1.0]);
                let r = call(nb, "rsqrt", &[x], Attrs::new());
                let out = if one {
                    r
                } else {
                    call(nb, "multiply", &[c, r], Attrs::new())
                };
                return self.keep_if_same_type(nb.body(), out, e);
            }
            // An operand that is one value everywhere (`full` of a constant, `zeros`, `ones`)
            // is that value as a scalar, when the result keeps its type (TVM's
            // `SimplifyFullElementwise`); identities then apply.
            ("add" | "subtract" | "multiply" | "divide", &[l, r]) => {
                if matches!(name, "add" | "multiply") {
                    if let Some(out) = self.reassociate(nb, e, name, &args) {
                        return Some(out);
                    }
                }
                if name == "add" {
                    if let Some(out) = self.binomial(nb, e, &args) {
                        return Some(out);
                    }
                }
                for (i, operand) in [l, r].into_iter().enumerate() {
                    let Some(scalar) = self.uniform_scalar(nb.body(), operand) else {
                        continue;
                    };
                    let c = nb.constant(Arc::new(scalar));
                    let mut new_args = [l, r];
                    new_args[i] = c;
                    let out = call(nb, name, &new_args, Attrs::new());
                    if let Some(out) = self.keep_if_same_type(nb.body(), out, e) {
                        return Some(out);
                    }
                }
            }
            ("cast", &[a]) => {
                let to: DType = attrs.get("dtype")?.as_str()?.parse().ok()?;
                // A widening cast then another: one cast (TVM's `SimplifyConsecutiveCast`).
                if let Some(("cast", &[x], _)) = op_call(b, a) {
                    let (from, mid) = (
                        self.typer.tensor(b, x)?.dtype,
                        self.typer.tensor(b, a)?.dtype,
                    );
                    let recast = Attrs::from_pairs([("dtype", AttrValue::Str(to.name().into()))]);
                    if widens(from, mid) {
                        return Some(call(nb, "cast", &[x], recast));
                    }
                    // A clip to a range the intermediate integer type holds, cast to an
                    // integer type: the intermediate cast changes nothing (TVM's
                    // `SimplifyClipAndConsecutiveCast`).
                    if let Some(("clip", _, clip_attrs)) = op_call(b, x) {
                        let (lo, hi) = (
                            clip_attrs.get("a_min")?.as_float()?,
                            clip_attrs.get("a_max")?.as_float()?,
                        );
                        if let (Some((mlo, mhi)), Some(_)) = (int_range(mid), int_range(to)) {
                            if mlo <= lo && hi <= mhi {
                                return Some(call(nb, "cast", &[x], recast));
                            }
                        }
                    }
                }
            }
            // `squeeze` of exactly the axes an `expand_dims` added gives its operand back.
            ("squeeze", &[a]) => {
                if let Some(("expand_dims", &[x], ex_attrs)) = op_call(b, a) {
                    let rank = self.typer.tensor(b, x)?.rank() as i64;
                    let axis = ex_attrs.get("axis")?.as_int()?;
                    let axis = if axis < 0 { axis + rank + 1 } else { axis };
                    let n = ex_attrs
                        .get("num_newaxis")
                        .and_then(AttrValue::as_int)
                        .unwrap_or(1);
                    let added: Vec<i64> = (axis..axis + n).collect();
                    let mut squeezed = attrs.get("axis")?.as_int_list()?;
                    squeezed.sort_unstable();
                    if squeezed == added {
                        return self.keep_if_same_type(nb.body(), x, e);
                    }
                }
            }
            // A clip that covers every value of an integer type is the identity (TVM's
            // `SimplifyCastClip`).
            ("clip", &[x]) => {
                let d = self.typer.tensor(b, x)?.dtype;
                let (lo, hi) = (
                    attrs.get("a_min")?.as_float()?,
                    attrs.get("a_max")?.as_float()?,
                );
                if let Some((dlo, dhi)) = int_range(d) {
                    if lo <= dlo && dhi <= hi {
                        return Some(x);
                    }
                }
            }
            _ => {}
        }
        self.simplify_more(nb, e, name, &args, &attrs)
    }

    fn simplify_more(
        &mut self,
        nb: &mut BodyBuilder,
        e: ExprId,
        name: &'static str,
        args: &[ExprId],
        attrs: &Attrs,
    ) -> Option<ExprId> {
        let b = nb.body();
        match (name, args) {
            ("multiply", &[a, c]) if is_all(b, c, 1.0) => self.keep_if_same_type(b, a, e),
            ("multiply", &[c, a]) if is_all(b, c, 1.0) => self.keep_if_same_type(b, a, e),
            ("add", &[a, c]) if is_all(b, c, 0.0) => self.keep_if_same_type(b, a, e),
            ("add", &[c, a]) if is_all(b, c, 0.0) => self.keep_if_same_type(b, a, e),
            ("subtract", &[a, c]) if is_all(b, c, 0.0) => self.keep_if_same_type(b, a, e),
            ("divide", &[a, c]) if is_all(b, c, 1.0) => self.keep_if_same_type(b, a, e),
            ("negative", &[a]) => match op_call(b, a) {
                Some(("negative", &[x], _)) => Some(x),
                _ => None,
            },
            ("nn.relu", &[a]) => match op_call(b, a) {
                Some(("nn.relu", _, _)) => Some(a),
                _ => None,
            },
            ("cast", &[a]) => {
                let dtype = attrs.get("dtype")?.as_str()?.parse().ok()?;
                (self.typer.tensor(b, a)?.dtype == dtype).then_some(a)
            }
            ("reshape" | "reverse_reshape", &[a]) => {
                if let Some(("reshape" | "reverse_reshape", &[x], _)) = op_call(b, a) {
                    let out = self.typer.tensor(b, e)?.static_shape()?;
                    let shape: Vec<i64> = out.iter().map(|&d| d as i64).collect();
                    let attrs = Attrs::from_pairs([("newshape", ints(&shape))]);
                    let r = call(nb, "reshape", &[x], attrs);
                    return Some(self.simplify(nb, r).unwrap_or(r));
                }
                let (ti, to) = (self.ty(b, a)?, self.ty(b, e)?);
                (matches!(ti, Type::Tensor(_)) && ti == to).then_some(a)
            }
            // A chain of two axis permutations (`transpose`, or `layout_transform` between
            // layouts of the same letters) is one `transpose`, or nothing (TVM's
            // `SimplifyTranspose`); a lone permutation that changes nothing goes.
            ("transpose" | "layout_transform", &[a]) => {
                let rank = self.typer.tensor(b, e)?.rank();
                let outer = permutation_of(name, attrs, rank)?;
                let inner = op_call(b, a).and_then(|(iname, iargs, iattrs)| {
                    let p = permutation_of(iname, iattrs, rank)?;
                    Some((iargs[0], p))
                });
                if let Some((x, inner)) = inner {
                    let composed: Vec<usize> = outer.iter().map(|&i| inner[i]).collect();
                    if composed.iter().enumerate().all(|(i, &p)| i == p) {
                        return Some(x);
                    }
                    let axes: Vec<i64> = composed.iter().map(|&p| p as i64).collect();
                    let attrs = Attrs::from_pairs([("axes", ints(&axes))]);
                    return Some(call(nb, "transpose", &[x], attrs));
                }
                outer.iter().enumerate().all(|(i, &p)| i == p).then_some(a)
            }
            _ => None,
        }
    }
}

/// The axis permutation a `transpose` or a `layout_transform` applies (output axis `i` is
/// input axis `p[i]`); `None` for other operators and for layouts that are not the same
/// letters reordered.
fn permutation_of(name: &str, attrs: &Attrs, rank: usize) -> Option<Vec<usize>> {
    match name {
        "transpose" => Some(perm(attrs, rank)),
        "layout_transform" => {
            let (src, dst) = (
                attrs.get("src_layout")?.as_str()?,
                attrs.get("dst_layout")?.as_str()?,
            );
            if src.len() != rank || dst.len() != rank {
                return None;
            }
            dst.chars().map(|c| src.find(c)).collect()
        }
        _ => None,
    }
}

/// The permutation of a `transpose` call (reversed axes when none are given).
fn perm(attrs: &Attrs, rank: usize) -> Vec<usize> {
    match attrs.get("axes") {
        Some(AttrValue::List(items)) if !items.is_empty() => items
            .iter()
            .map(|v| {
                let a = v.as_int().unwrap_or(0);
                (if a < 0 { a + rank as i64 } else { a }) as usize
            })
            .collect(),
        _ => (0..rank).rev().collect(),
    }
}

impl Rewrite for Simplify<'_> {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: ExprId, new: ExprId) -> Option<ExprId> {
        super::seed(&mut self.typer, self.types, old, new);
        let mut cur = new;
        while let Some(next) = self.simplify(&mut cx.new, cur) {
            cur = next;
        }
        (cur != new).then_some(cur)
    }
}
