//! `ConvertLayout`: the pass and its rewrite of a function's code.

use super::call;
use crate::analyses::Types;
use irpass::{PassContext, PassOptions, function_pass};
use irpass_ir::body::{ArenaFunction, BodyBuilder, ExprId, Node};
use irpass_ir::infer::{BodyTypes, LocalTyper};
use irpass_ir::layout::Layout;
use irpass_ir::rewrite::{OldId, Rewrite, RewriteCx};
use irpass_ir::{AttrValue, Attrs, Function, Module, OpPattern};
use rustc_hash::FxHashMap;
use serde::Deserialize;

/// `ConvertLayout` and its options.
#[derive(Clone, Debug, Deserialize, PassOptions)]
#[serde(default)]
pub struct ConvertLayout {
    /// The desired data layout of nn.conv2d: NHWC, NCHW, or a split layout of either
    /// (NCHW4c).
    #[option(type_name = "\"NHWC\" | \"NCHW\" | split (\"NCHW4c\")")]
    pub layout: String,
    /// The desired kernel layout (TVM's second desired layout): by default HWIO for NHWC,
    /// OIHW for NCHW; a split data layout needs one (OIHW4o).
    #[option(type_name = "string", default_text = "default")]
    pub kernel_layout: Option<String>,
}

impl Default for ConvertLayout {
    fn default() -> Self {
        ConvertLayout {
            layout: "NHWC".to_string(),
            kernel_layout: None,
        }
    }
}

/// Converts convolutions between NCHW and NHWC (`layout`, default `"NHWC"`; `"NCHW"` converts
/// the other way), or into a split layout (`layout="NCHW4c"` with `kernel_layout="OIHW4o"`),
/// and the operators around them that can follow — elementwise operators,
/// broadcasts (an operand of lower rank is given leading axes and transformed, as TVM does),
/// `nn.bias_add` (as the broadcast add it stands for), batch norm, pooling, `concatenate`
/// (its axis moved), `split` (its axis moved, its indices in blocks), tuples and their
/// projections — so that `layout_transform`s appear only at
/// the edges of converted regions: where a value enters (inputs, weights) and where an
/// operator that cannot follow needs the old layout. A `transpose` of a converted value takes
/// it as it is, with the permutation that gives the same result.
#[function_pass(opt_level = 3, default, options)]
impl ConvertLayout {
    fn transform_function(
        &self,
        func: Function,
        module: &Module,
        ctx: &PassContext,
    ) -> irpass::Result<Function> {
        let types = Types::of(&func, module, ctx)?;
        let kernel = self.kernel_layout.as_deref();
        let out = convert_layout(&func.code, &types, &self.layout, kernel)
            .map_err(irpass::BoxError::from)?;
        Ok(func.with_code(out))
    }
}

/// Converts convolutions to data layout `layout` (`"NHWC"`, `"NCHW"`, or a split layout of
/// either such as `"NCHW4c"`) with weights in `kernel` (`None`: `"HWIO"` for NHWC, `"OIHW"`
/// for NCHW; required for a split layout, e.g. `"OIHW4o"`), and the operators around them
/// that can follow, as the registered `ConvertLayout` (whose doc comment gives the rules).
/// `types` are the input's.
///
/// # Errors
/// A layout that is not one of those, or a split layout without its kernel layout.
pub fn convert_layout(
    f: &ArenaFunction,
    types: &BodyTypes,
    layout: &str,
    kernel: Option<&str>,
) -> Result<Option<ArenaFunction>, String> {
    let bad = |what: &str| format!("ConvertLayout: {what}");
    let to = Layout::parse(layout).map_err(|e| bad(&e))?;
    let (from, kfrom, kdefault) = match to.primal().to_string().as_str() {
        "NHWC" if to.is_primal() => ("NCHW", "OIHW", Some("HWIO")),
        "NCHW" if to.is_primal() => ("NHWC", "HWIO", Some("OIHW")),
        "NCHW" => ("NCHW", "OIHW", None),
        "NHWC" => ("NHWC", "HWIO", None),
        _ => {
            return Err(bad(&format!(
                "layout `{layout}` is not supported (NHWC, NCHW, or a split layout of either such \
                 as NCHW4c)"
            )));
        }
    };
    let kto = match (kernel.filter(|k| *k != "default"), kdefault) {
        (Some(k), _) => k.to_string(),
        (None, Some(k)) => k.to_string(),
        (None, None) => {
            return Err(bad(&format!(
                "the split layout `{layout}` needs a kernel layout (`kernel_layout`, e.g. \
                 \"OIHW4o\")"
            )));
        }
    };
    let kto_layout = Layout::parse(&kto).map_err(|e| bad(&e))?;
    if !kto_layout.same_axes(&Layout::parse("OIHW").expect("a layout")) {
        return Err(bad(&format!(
            "kernel layout `{kto}` is not a layout of O, I, H and W"
        )));
    }
    let (from, kfrom) = (
        Layout::parse(from).expect("a layout"),
        Layout::parse(kfrom).expect("a layout"),
    );
    let mut c = Converter {
        from,
        to,
        kfrom,
        kto: kto_layout,
        types,
        typer: irpass_ir::infer::LocalTyper::for_rewrite_of(&f.body, types),
        converted: FxHashMap::default(),
        to_cache: FxHashMap::default(),
        tuples: FxHashMap::default(),
    };
    Ok(f.rewrite(&mut c))
}

struct Converter<'t> {
    from: Layout,
    to: Layout,
    kfrom: Layout,
    kto: Layout,
    types: &'t BodyTypes,
    typer: LocalTyper,
    /// A node of the new body (in the old layout) to the same value in the new layout.
    converted: FxHashMap<ExprId, ExprId>,
    /// Values transformed into the new layout at an edge, by the old-layout node.
    to_cache: FxHashMap<ExprId, ExprId>,
    /// A tuple of the new body with a converted field to the same tuple in the new layout
    /// (which its projections read).
    tuples: FxHashMap<ExprId, ExprId>,
}

fn transform(b: &mut BodyBuilder, e: ExprId, src: &Layout, dst: &Layout) -> ExprId {
    let attrs = Attrs::from_pairs([
        ("src_layout", AttrValue::Str(src.to_string())),
        ("dst_layout", AttrValue::Str(dst.to_string())),
    ]);
    call(b, "layout_transform", &[e], attrs)
}

fn with(attrs: &Attrs, pairs: &[(&str, AttrValue)]) -> Attrs {
    let mut out = attrs.clone();
    for (k, v) in pairs {
        out.set(k, v.clone());
    }
    out
}

impl Converter<'_> {
    /// `e` in the new layout: its converted form, or a transform at the edge (`None` when
    /// its shape does not fit the new layout: a channel count the block size does not divide).
    fn in_new_layout(&mut self, b: &mut BodyBuilder, e: ExprId) -> Option<ExprId> {
        if let Some(&c) = self.converted.get(&e) {
            return Some(c);
        }
        if let Some(&c) = self.to_cache.get(&e) {
            return Some(c);
        }
        self.transformed(b, e, e)
    }

    /// `x` transformed to the new layout, remembered as `e`'s form there (`None` when `x`'s
    /// shape does not fit the new layout).
    fn transformed(&mut self, b: &mut BodyBuilder, e: ExprId, x: ExprId) -> Option<ExprId> {
        if !self.fits(b, x, false) {
            return None;
        }
        let t = transform(b, x, &self.from, &self.to);
        self.to_cache.insert(e, t);
        Some(t)
    }

    /// Whether `e`'s shape moves from the old layout to the new one (the old kernel layout
    /// to the new one when `kernel`).
    fn fits(&mut self, b: &BodyBuilder, e: ExprId, kernel: bool) -> bool {
        let Some(t) = self.typer.tensor(b.body(), e) else {
            return false;
        };
        let (src, dst) = if kernel {
            (&self.kfrom, &self.kto)
        } else {
            (&self.from, &self.to)
        };
        src.transform_shape(&t.shape, dst).is_ok()
    }

    /// A tensor of rank below 4 that broadcasts against a 4-D value, in the new layout: given
    /// the missing leading axes (TVM's `expand_dims(axis=0)`), then transformed.
    fn broadcast_in_new_layout(
        &mut self,
        b: &mut BodyBuilder,
        e: ExprId,
        rank: usize,
    ) -> Option<ExprId> {
        if let Some(&c) = self.to_cache.get(&e) {
            return Some(c);
        }
        let attrs = Attrs::from_pairs([
            ("axis", AttrValue::Int(0)),
            ("num_newaxis", AttrValue::Int(4 - rank as i64)),
        ]);
        let expanded = call(b, "expand_dims", &[e], attrs);
        self.transformed(b, e, expanded)
    }

    /// Axis `axis` of a value in the old layout, in the new one.
    fn moved_axis(&self, axis: i64) -> Option<i64> {
        let letter = self.from.axes().get(axis_index(axis)?)?.primal;
        self.to.position(letter).map(|p| p as i64)
    }

    /// The block size the new layout splits old axis `axis` into (1 when it is not split).
    fn lanes(&self, axis: i64) -> i64 {
        axis_index(axis)
            .and_then(|a| self.from.axes().get(a))
            .and_then(|x| self.to.factor(x.primal))
            .unwrap_or(1)
    }

    /// Records `new` as the new-layout form of the result, returns the old-layout form.
    fn done(&mut self, b: &mut BodyBuilder, new: ExprId) -> ExprId {
        let old = transform(b, new, &self.to, &self.from);
        self.converted.insert(old, new);
        old
    }

    fn convert(&mut self, b: &mut BodyBuilder, e: ExprId) -> Option<ExprId> {
        let (op, args, attrs) = b.body().op_call(e)?;
        let (name, args, attrs) = (op.name(), args.to_vec(), attrs.clone());
        let converted = |a: &ExprId| self.converted.contains_key(a);
        match name {
            "nn.conv2d" => self.conv2d(b, &args, &attrs),
            "nn.max_pool2d" | "nn.avg_pool2d" | "nn.global_avg_pool2d" | "nn.global_max_pool2d"
                if converted(&args[0]) =>
            {
                let layout = layout_attr(&attrs, "layout").unwrap_or_else(|| "NCHW".into());
                if layout != self.from.to_string() || !self.to.is_primal() {
                    return None;
                }
                let x = self.in_new_layout(b, args[0])?;
                let attrs = with(&attrs, &[("layout", AttrValue::Str(self.to.to_string()))]);
                let pool = call(b, name, &[x], attrs);
                Some(self.done(b, pool))
            }
            "concatenate" => self.concatenate(b, &args, &attrs),
            "split" if converted(&args[0]) => self.split(b, &args, &attrs),
            "nn.bias_add" if converted(&args[0]) => self.bias_add(b, &args, &attrs),
            "transpose" if converted(&args[0]) && self.to.is_primal() => {
                // The same output from the converted input: the permutation that takes the new
                // layout to the dimensions the old permutation produced. No transform back.
                // No axes (or none listed) reverses them.
                let perm: Vec<i64> = attrs
                    .get("axes")
                    .and_then(AttrValue::as_int_list)
                    .filter(|p| !p.is_empty())
                    .unwrap_or_else(|| vec![3, 2, 1, 0]);
                let axes: Vec<i64> = perm
                    .iter()
                    .map(|&a| self.moved_axis(a))
                    .collect::<Option<_>>()?;
                let x = self.in_new_layout(b, args[0])?;
                let attrs = with(&attrs, &[("axes", crate::util::ints(&axes))]);
                Some(call(b, name, &[x], attrs))
            }
            "nn.batch_norm" if converted(&args[0]) && self.to.is_primal() => {
                self.batch_norm(b, &args, &attrs)
            }
            _ if op.def().pattern <= OpPattern::Broadcast
                && !args.is_empty()
                && args.iter().any(converted) =>
            {
                self.elementwise(b, name, &args, attrs)
            }
            _ => None,
        }
    }

    /// A convolution in the old layouts, redone in the new ones.
    fn conv2d(&mut self, b: &mut BodyBuilder, args: &[ExprId], attrs: &Attrs) -> Option<ExprId> {
        let data = layout_attr(attrs, "data_layout").unwrap_or_else(|| "NCHW".into());
        let kernel = layout_attr(attrs, "kernel_layout").unwrap_or_else(|| "OIHW".into());
        let out = layout_attr(attrs, "out_layout").unwrap_or_default();
        let from = self.from.to_string();
        if data != from || kernel != self.kfrom.to_string() || !(out.is_empty() || out == from) {
            return None;
        }
        if !self.fits(b, args[1], true) {
            return None;
        }
        let x = self.in_new_layout(b, args[0])?;
        let w = transform(b, args[1], &self.kfrom, &self.kto);
        let attrs = with(
            attrs,
            &[
                ("data_layout", AttrValue::Str(self.to.to_string())),
                ("kernel_layout", AttrValue::Str(self.kto.to_string())),
            ],
        );
        let conv = call(b, "nn.conv2d", &[x, w], attrs);
        Some(self.done(b, conv))
    }

    /// A tuple of 4-D values, one of them converted: concatenated in the new layout along the
    /// same dimension.
    fn concatenate(
        &mut self,
        b: &mut BodyBuilder,
        args: &[ExprId],
        attrs: &Attrs,
    ) -> Option<ExprId> {
        let Node::Tuple(fields) = b.body().node(args[0]) else {
            return None;
        };
        let fields = b.body().list(*fields).to_vec();
        if !fields.iter().any(|f| self.converted.contains_key(f))
            || fields
                .iter()
                .any(|&f| self.typer.tensor(b.body(), f).map(|t| t.rank()) != Some(4))
        {
            return None;
        }
        let axis = self.moved_axis(attrs.get("axis").and_then(AttrValue::as_int).unwrap_or(0))?;
        let new_fields: Vec<ExprId> = fields
            .iter()
            .map(|&f| self.in_new_layout(b, f))
            .collect::<Option<_>>()?;
        let t = b.tuple(&new_fields);
        let out = call(
            b,
            "concatenate",
            &[t],
            with(attrs, &[("axis", AttrValue::Int(axis))]),
        );
        Some(self.done(b, out))
    }

    /// A split of a converted value along the same dimension in the new layout (its indices
    /// in blocks where the new layout splits that dimension), each part transformed back.
    fn split(&mut self, b: &mut BodyBuilder, args: &[ExprId], attrs: &Attrs) -> Option<ExprId> {
        let axis = attrs.get("axis").and_then(AttrValue::as_int).unwrap_or(0);
        let new_axis = self.moved_axis(axis)?;
        let lanes = self.lanes(axis);
        let size = {
            let t = self.typer.tensor(b.body(), args[0])?;
            t.shape.get(axis_index(axis)?)?.value()?
        };
        let (sections, parts) = match attrs.get("indices_or_sections")? {
            AttrValue::Int(n) if *n > 0 && size % (n * lanes) == 0 => {
                (AttrValue::Int(*n), *n as u32)
            }
            list @ AttrValue::List(_) => {
                let indices = list.as_int_list()?;
                if indices.iter().any(|i| i % lanes != 0) {
                    return None;
                }
                let scaled: Vec<i64> = indices.iter().map(|i| i / lanes).collect();
                (crate::util::ints(&scaled), scaled.len() as u32 + 1)
            }
            _ => return None,
        };
        let x = self.in_new_layout(b, args[0])?;
        let attrs = with(
            attrs,
            &[
                ("axis", AttrValue::Int(new_axis)),
                ("indices_or_sections", sections),
            ],
        );
        let split = call(b, "split", &[x], attrs);
        let fields: Vec<ExprId> = (0..parts)
            .map(|i| {
                let p = b.proj(split, i);
                self.done(b, p)
            })
            .collect();
        Some(b.tuple(&fields))
    }

    /// As TVM, which canonicalises first: a broadcast add of the bias laid along its axis
    /// (trailing axes of 1), given leading axes and transformed.
    fn bias_add(&mut self, b: &mut BodyBuilder, args: &[ExprId], attrs: &Attrs) -> Option<ExprId> {
        let axis = attrs.get("axis").and_then(AttrValue::as_int).unwrap_or(1);
        let axis = axis_index(axis)?;
        let rank = self.typer.tensor(b.body(), args[1])?.rank();
        if axis > 3 || rank != 1 {
            return None;
        }
        let bias = if axis < 3 {
            let attrs = Attrs::from_pairs([
                ("axis", AttrValue::Int(1)),
                ("num_newaxis", AttrValue::Int(3 - axis as i64)),
            ]);
            call(b, "expand_dims", &[args[1]], attrs)
        } else {
            args[1]
        };
        let x = self.in_new_layout(b, args[0])?;
        let bias = self.broadcast_in_new_layout(b, bias, 4 - axis)?;
        let out = call(b, "add", &[x, bias], Attrs::new());
        Some(self.done(b, out))
    }

    /// Batch norm along the channel axis, on the converted input: the same along the
    /// channel's new position.
    fn batch_norm(
        &mut self,
        b: &mut BodyBuilder,
        args: &[ExprId],
        attrs: &Attrs,
    ) -> Option<ExprId> {
        let axis = attrs.get("axis").and_then(AttrValue::as_int).unwrap_or(1);
        let c_from = self.from.position('C')? as i64;
        if axis != c_from && axis != c_from - 4 {
            return None;
        }
        let c_to = self.to.position('C')? as i64;
        let mut new_args = vec![self.in_new_layout(b, args[0])?];
        new_args.extend_from_slice(&args[1..]);
        let bn = call(
            b,
            "nn.batch_norm",
            &new_args,
            with(attrs, &[("axis", AttrValue::Int(c_to))]),
        );
        // The tuple in the old layout; projecting field 0 finds the new-layout form.
        let field0 = b.proj(bn, 0);
        let out0 = self.done(b, field0);
        let (f1, f2) = (b.proj(bn, 1), b.proj(bn, 2));
        Some(b.tuple(&[out0, f1, f2]))
    }

    /// An elementwise or broadcast operator with a converted operand. Every operand must be
    /// convertible: in the new layout already, a scalar, a rank-4 tensor (transformed at the
    /// edge) or a lower-rank one that broadcasts (given leading axes, then transformed).
    fn elementwise(
        &mut self,
        b: &mut BodyBuilder,
        name: &str,
        args: &[ExprId],
        attrs: Attrs,
    ) -> Option<ExprId> {
        let mut new_args = Vec::with_capacity(args.len());
        for &a in args {
            if self.converted.contains_key(&a) {
                new_args.push(self.in_new_layout(b, a)?);
                continue;
            }
            match self.typer.tensor(b.body(), a).map(|t| t.rank()) {
                Some(0) => new_args.push(a),
                Some(4) => new_args.push(self.in_new_layout(b, a)?),
                Some(r @ 1..=3) => new_args.push(self.broadcast_in_new_layout(b, a, r)?),
                _ => return None,
            }
        }
        let out = call(b, name, &new_args, attrs);
        Some(self.done(b, out))
    }
}

/// An axis of a 4-D value, negative ones counted from the end.
fn axis_index(axis: i64) -> Option<usize> {
    usize::try_from(if axis < 0 { axis + 4 } else { axis }).ok()
}

/// A string attribute (a layout), if given.
fn layout_attr(attrs: &Attrs, name: &str) -> Option<String> {
    attrs
        .get(name)
        .and_then(AttrValue::as_str)
        .map(str::to_string)
}

impl Rewrite for Converter<'_> {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: OldId, new: ExprId) -> Option<ExprId> {
        self.typer.seed_from(self.types, old, new);
        let b = &mut cx.new;
        // A tuple holding a converted value has a twin in the new layout, which projections
        // of it read (the tuple itself, where used, stays in the old layout).
        if let Node::Tuple(fields) = b.body().node(new) {
            let fields = b.body().list(*fields).to_vec();
            if fields.iter().any(|f| self.converted.contains_key(f)) {
                let twin: Vec<ExprId> = fields
                    .iter()
                    .map(|f| self.converted.get(f).copied().unwrap_or(*f))
                    .collect();
                let t = b.tuple(&twin);
                self.tuples.insert(new, t);
            }
            return None;
        }
        if let Node::Proj(t, i) = *b.body().node(new)
            && let Some(&twin) = self.tuples.get(&t)
        {
            let Node::Tuple(fields) = b.body().node(t) else {
                unreachable!("only tuples have twins")
            };
            if self
                .converted
                .contains_key(&b.body().list(*fields)[i as usize])
            {
                let p = b.proj(twin, i);
                return Some(self.done(b, p));
            }
            return None;
        }
        // A projection of a converted batch norm's first field, or of a converted split's
        // part, is already converted.
        if let Node::Proj(t, i) = *b.body().node(new)
            && let Node::Tuple(fields) = b.body().node(t)
            && let Some(&f) = b.body().list(*fields).get(i as usize)
            && self.converted.contains_key(&f)
        {
            return Some(f);
        }
        self.convert(b, new)
    }
}
