//! `CanonicalizeOps`.

use irpass::{PassContext, function_pass};
use irpass_ir::visit::{Memo, Mutator};
use irpass_ir::{AttrValue, Attrs, Expr, Function, Module};

use crate::util::{Types, call, op_call};

/// Rewrites operators into simpler ones the rest of the pipeline handles: `nn.bias_add(x, b,
/// axis)` becomes `add(x, expand_dims(b, ...))`, the bias broadcast along `axis`.
#[function_pass(opt_level = 3, name = "CanonicalizeOps", required = [crate::InferType])]
pub fn canonicalize_ops(func: Function, _module: &Module, _ctx: &PassContext) -> Function {
    let mut c = Canon {
        types: Types::default(),
        memo: Memo::default(),
    };
    c.mutate_function(&func)
}

struct Canon {
    types: Types,
    memo: Memo,
}

impl Mutator for Canon {
    fn memo(&mut self) -> &mut Memo {
        &mut self.memo
    }

    fn rewrite(&mut self, e: Expr) -> Expr {
        let Some(("nn.bias_add", [x, b], attrs)) = op_call(&e) else {
            return e;
        };
        let Some(t) = self.types.tensor(x) else {
            return e;
        };
        let rank = t.rank() as i64;
        let a = attrs.get("axis").and_then(AttrValue::as_int).unwrap_or(1);
        let axis = if a < 0 { a + rank } else { a };
        let trailing = rank - axis - 1;
        let bias = if trailing > 0 {
            call(
                "expand_dims",
                vec![b.clone()],
                Attrs::from_pairs([
                    ("axis", AttrValue::Int(1)),
                    ("num_newaxis", AttrValue::Int(trailing)),
                ]),
            )
        } else {
            b.clone()
        };
        call("add", vec![x.clone(), bias], Attrs::new())
    }
}
