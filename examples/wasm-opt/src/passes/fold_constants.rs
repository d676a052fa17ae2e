//! `FoldConstants`.

use std::sync::Arc;

use irpass::function_pass;
use walrus::ir::Instr;

use super::int::{classify, constant, eval, make_constant};
use crate::{Body, Wasm};

/// Evaluates integer operators whose operands are constants (`i32.const 2; i32.const 3;
/// i32.add` becomes `i32.const 5`), chains of them in one sweep; an operation that would trap
/// (a division by zero) is left to trap.
#[function_pass(opt_level = 1)]
pub fn fold_constants(func: Arc<Body>, _module: &Wasm) -> Arc<Body> {
    Body::rewrite_seqs(func, |instrs| {
        let mut out: Vec<Instr> = Vec::with_capacity(instrs.len());
        let mut folded = false;
        for instr in instrs {
            if let Some(value) = fold(&out, instr) {
                out.truncate(out.len() - 2);
                out.push(value);
                folded = true;
            } else {
                out.push(instr.clone());
            }
        }
        folded.then_some(out)
    })
}

/// The constant `instr` computes from the two constants that end `done`, if it is an integer
/// operator that does not trap on them.
fn fold(done: &[Instr], instr: &Instr) -> Option<Instr> {
    let Instr::Binop(binop) = instr else {
        return None;
    };
    let (wide, op) = classify(binop.op)?;
    let [a, b] = done.last_chunk::<2>()?;
    let ((a, wa), (b, wb)) = (constant(a)?, constant(b)?);
    if wa != wide || (wb != wide) {
        return None;
    }
    let (value, wide) = eval(wide, op, a, b)?;
    Some(make_constant(value, wide))
}
