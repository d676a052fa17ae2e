//! `ConvertLayout`.

use irpass::{PassContext, function_pass};
use irpass_ir::visit::{Memo, Mutator};
use irpass_ir::{AttrValue, Attrs, Expr, ExprKind, Function, Module, OpPattern};
use rustc_hash::FxHashMap;
use serde::Deserialize;

use crate::util::{Types, call, op_call};

/// Converts convolutions between NCHW and NHWC (`layout`, default `"NHWC"`; `"NCHW"` converts
/// the other way), and the operators around them that can follow — elementwise operators,
/// broadcasts with a scalar or a per-channel operand, batch norm, pooling — so that
/// `layout_transform`s appear only at the edges of converted regions: where a value enters
/// (inputs, weights) and where an operator that cannot follow needs the old layout.
#[derive(Clone, Debug, Deserialize)]
#[serde(default)]
pub struct ConvertLayout {
    /// The desired data layout of `nn.conv2d`: `"NHWC"` or `"NCHW"`.
    pub layout: String,
}

impl Default for ConvertLayout {
    fn default() -> Self {
        ConvertLayout {
            layout: "NHWC".to_string(),
        }
    }
}

/// Converts conv2d regions to the desired data layout, transforms only at the edges.
#[function_pass(opt_level = 3, default, options, required = [crate::InferType])]
impl ConvertLayout {
    fn transform_function(
        &self,
        func: Function,
        _module: &Module,
        _ctx: &PassContext,
    ) -> irpass::Result<Function> {
        let (from, to, kfrom, kto) = match self.layout.as_str() {
            "NHWC" => ("NCHW", "NHWC", "OIHW", "HWIO"),
            "NCHW" => ("NHWC", "NCHW", "HWIO", "OIHW"),
            other => {
                return Err(format!(
                    "ConvertLayout: layout `{other}` is not supported (NHWC or NCHW)"
                )
                .into());
            }
        };
        let mut c = Converter {
            from,
            to,
            kfrom,
            kto,
            types: Types::default(),
            converted: FxHashMap::default(),
            to_cache: FxHashMap::default(),
            memo: Memo::default(),
        };
        Ok(c.mutate_function(&func))
    }
}

struct Converter {
    from: &'static str,
    to: &'static str,
    kfrom: &'static str,
    kto: &'static str,
    types: Types,
    /// Rewritten node (in the old layout) to the same value in the new layout.
    converted: FxHashMap<usize, Expr>,
    /// Values transformed into the new layout at an edge, by the old-layout node (variables
    /// by identity: each reference to one is its own node).
    to_cache: FxHashMap<(bool, u64), Expr>,
    memo: Memo,
}

fn transform(e: Expr, src: &str, dst: &str) -> Expr {
    call(
        "layout_transform",
        vec![e],
        Attrs::from_pairs([
            ("src_layout", AttrValue::Str(src.into())),
            ("dst_layout", AttrValue::Str(dst.into())),
        ]),
    )
}

fn with(attrs: &Attrs, pairs: &[(&str, AttrValue)]) -> Attrs {
    let mut out = attrs.clone();
    for (k, v) in pairs {
        out.set(k, v.clone());
    }
    out
}

impl Converter {
    fn rank(&mut self, e: &Expr) -> Option<usize> {
        self.types.tensor(e).map(|t| t.rank())
    }

    /// `e` in the new layout: its converted form, or a transform at the edge.
    fn in_new_layout(&mut self, e: &Expr) -> Expr {
        if let Some(c) = self.converted.get(&e.addr()) {
            return c.clone();
        }
        let key = match &e.kind {
            ExprKind::Var(v) => (true, v.id()),
            _ => (false, e.addr() as u64),
        };
        if let Some(c) = self.to_cache.get(&key) {
            return c.clone();
        }
        let t = transform(e.clone(), self.from, self.to);
        self.to_cache.insert(key, t.clone());
        t
    }

    /// Records `new` as the new-layout form of the result, returns the old-layout form.
    fn done(&mut self, new: Expr) -> Expr {
        let old = transform(new.clone(), self.to, self.from);
        self.converted.insert(old.addr(), new);
        old
    }

    fn convert(&mut self, e: &Expr) -> Option<Expr> {
        let (name, args, attrs) = op_call(e)?;
        let in_new = |c: &Self, a: &Expr| c.converted.contains_key(&a.addr());
        let layout_attr = |n: &str| attrs.get(n).and_then(AttrValue::as_str).map(str::to_string);
        match name {
            "nn.conv2d" => {
                let data = layout_attr("data_layout").unwrap_or_else(|| "NCHW".into());
                let kernel = layout_attr("kernel_layout").unwrap_or_else(|| "OIHW".into());
                let out = layout_attr("out_layout").unwrap_or_default();
                if data != self.from
                    || kernel != self.kfrom
                    || !(out.is_empty() || out == self.from)
                {
                    return None;
                }
                let x = self.in_new_layout(&args[0]);
                let w = transform(args[1].clone(), self.kfrom, self.kto);
                let attrs = with(
                    attrs,
                    &[
                        ("data_layout", AttrValue::Str(self.to.into())),
                        ("kernel_layout", AttrValue::Str(self.kto.into())),
                    ],
                );
                Some(self.done(call("nn.conv2d", vec![x, w], attrs)))
            }
            "nn.max_pool2d" | "nn.avg_pool2d" | "nn.global_avg_pool2d"
                if in_new(self, &args[0]) =>
            {
                if layout_attr("layout").unwrap_or_else(|| "NCHW".into()) != self.from {
                    return None;
                }
                let x = self.in_new_layout(&args[0]);
                let attrs = with(attrs, &[("layout", AttrValue::Str(self.to.into()))]);
                Some(self.done(call(name, vec![x], attrs)))
            }
            "nn.batch_norm" if in_new(self, &args[0]) => {
                let axis = attrs.get("axis").and_then(AttrValue::as_int).unwrap_or(1);
                let c_from = self.from.find('C')? as i64;
                if axis != c_from && axis != c_from - 4 {
                    return None;
                }
                let c_to = self.to.find('C')? as i64;
                let mut new_args = vec![self.in_new_layout(&args[0])];
                new_args.extend(args[1..].iter().cloned());
                let bn = call(
                    name,
                    new_args,
                    with(attrs, &[("axis", AttrValue::Int(c_to))]),
                );
                // The tuple in the old layout; projecting field 0 finds the new-layout form.
                let out0 = self.done(Expr::get(bn.clone(), 0));
                let tuple = Expr::tuple(vec![out0, Expr::get(bn.clone(), 1), Expr::get(bn, 2)]);
                Some(tuple)
            }
            _ => {
                let pattern = irpass_ir::Op::get(name).ok()?.def().pattern;
                if pattern > OpPattern::Broadcast
                    || args.is_empty()
                    || !args.iter().any(|a| in_new(self, a))
                {
                    return None;
                }
                // Every operand must be convertible: in the new layout already, a scalar, or a
                // rank-4 tensor (transformed at the edge).
                let mut new_args = Vec::with_capacity(args.len());
                for a in args {
                    match self.rank(a) {
                        _ if in_new(self, a) => new_args.push(self.in_new_layout(a)),
                        Some(0) => new_args.push(a.clone()),
                        Some(4) => new_args.push(self.in_new_layout(a)),
                        _ => return None,
                    }
                }
                Some(self.done(call(name, new_args, attrs.clone())))
            }
        }
    }
}

impl Mutator for Converter {
    fn memo(&mut self) -> &mut Memo {
        &mut self.memo
    }

    fn rewrite(&mut self, e: Expr) -> Expr {
        // A projection of a converted batch norm's first field is already converted.
        if let ExprKind::TupleGetItem(t, 0) = &e.kind {
            if let ExprKind::Tuple(fields) = &t.kind {
                if let Some(f) = fields.first() {
                    if self.converted.contains_key(&f.addr()) {
                        return f.clone();
                    }
                }
            }
        }
        self.convert(&e).unwrap_or(e)
    }
}
