//! `CanonicalizeOps`, as a rewrite of a function's code.

use irpass_ir::body::{ArenaFunction, ExprId};

use irpass_ir::infer::{LocalTypes, local_types};

use irpass_ir::rewrite::{Rewrite, RewriteCx, Rewritten, rewrite_body};
use irpass_ir::{AttrValue, Attrs, Op, Type};

/// Rewrites `nn.bias_add(x, b, axis)` into `add(x, expand_dims(b, ...))`, the bias broadcast
/// along `axis`, where the type of `x` is known. `None` when there is none to rewrite.
pub fn canonicalize_ops(f: &ArenaFunction) -> Option<Rewritten> {
    let types = local_types(&f.body);
    rewrite_body(&f.body, &f.params, f.root, &mut Canon { types })
}

struct Canon {
    /// The types of the input body (read through the old ids).
    types: LocalTypes,
}

impl Rewrite for Canon {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: ExprId, new: ExprId) -> Option<ExprId> {
        let (op, args, attrs) = cx.new.body().op_call(new)?;
        let [x, b] = *args else { return None };
        if op.name() != "nn.bias_add" {
            return None;
        }
        let a = attrs.get("axis").and_then(AttrValue::as_int).unwrap_or(1);
        // The type of `x` as the input had it: the old call's first operand.
        let (_, old_args, _) = cx.old.op_call(old)?;
        let Some(Type::Tensor(t)) = self.types.of(old_args[0]) else {
            return None;
        };
        let rank = t.rank() as i64;
        let axis = if a < 0 { a + rank } else { a };
        let trailing = rank - axis - 1;
        let bias = if trailing > 0 {
            let attrs = Attrs::from_pairs([
                ("axis", AttrValue::Int(1)),
                ("num_newaxis", AttrValue::Int(trailing)),
            ]);
            let expand = Op::get("expand_dims").ok()?;
            let attrs = expand.normalize_attrs(attrs).ok()?;
            cx.new.call_op(expand, &[b], attrs)
        } else {
            b
        };
        let add = Op::get("add").ok()?;
        Some(cx.new.call_op(add, &[x, bias], Attrs::new()))
    }
}
