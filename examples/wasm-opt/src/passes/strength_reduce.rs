//! `StrengthReduce`.

use std::sync::Arc;

use irpass::{PassContext, PassOptions, function_pass};
use serde::Deserialize;
use walrus::ir::{Binop, Instr};

use super::int::{IntOp, binary_op, classify, constant, make_constant};
use crate::{Body, Wasm};

/// `StrengthReduce` and its options.
#[derive(Clone, Copy, Debug, Default, Deserialize, PassOptions)]
#[serde(default, deny_unknown_fields)]
pub struct StrengthReduce {
    /// Leave multiplications alone (rewrite only unsigned divisions and remainders).
    pub keep_mul: bool,
    /// Leave unsigned divisions and remainders alone.
    pub keep_div: bool,
}

/// Replaces integer operations by a power of two with cheaper ones: `x * 2^k` becomes
/// `x << k`, unsigned `x / 2^k` becomes `x >> k`, unsigned `x % 2^k` becomes `x & (2^k - 1)`.
#[function_pass(opt_level = 2, default, options)]
impl StrengthReduce {
    fn transform_function(&self, func: Arc<Body>, _m: &Wasm, _ctx: &PassContext) -> Arc<Body> {
        Body::rewrite_seqs(func, |instrs| {
            let mut out: Option<Vec<Instr>> = None;
            for (i, pair) in instrs.windows(2).enumerate() {
                if let Some([k, op]) = self.reduce(&pair[0], &pair[1]) {
                    let out = out.get_or_insert_with(|| instrs.to_vec());
                    out[i] = k;
                    out[i + 1] = op;
                }
            }
            out
        })
    }
}

impl StrengthReduce {
    /// The replacement of a constant operand `k` and the operator `op` using it.
    fn reduce(&self, k: &Instr, op: &Instr) -> Option<[Instr; 2]> {
        let Instr::Binop(binop) = op else { return None };
        let (wide, op) = classify(binop.op)?;
        let (k, k_wide) = constant(k)?;
        if k_wide != wide || !k.is_power_of_two() {
            return None;
        }
        let shift = u64::from(k.trailing_zeros());
        let (new_k, new_op) = match op {
            IntOp::Mul if !self.keep_mul => (shift, IntOp::Shl),
            IntOp::DivU if !self.keep_div => (shift, IntOp::ShrU),
            IntOp::RemU if !self.keep_div => (k - 1, IntOp::And),
            _ => return None,
        };
        let op = Instr::Binop(Binop {
            op: binary_op(wide, new_op),
        });
        Some([make_constant(new_k, wide), op])
    }
}
