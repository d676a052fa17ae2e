//! `Vacuum`.

use std::sync::Arc;

use irpass::function_pass;
use walrus::ir::Instr;

use crate::{Body, Wasm};

/// Removes values made without effects and then dropped (`i32.const 1; drop`,
/// `local.get 0; drop`, `global.get 0; drop`).
#[function_pass(opt_level = 1)]
pub fn vacuum(func: Arc<Body>, _module: &Wasm) -> Arc<Body> {
    Body::rewrite_seqs(func, |instrs| {
        let mut out: Vec<Instr> = Vec::with_capacity(instrs.len());
        for instr in instrs {
            match instr {
                Instr::Drop(_) if out.last().is_some_and(pure_value) => {
                    out.pop();
                }
                _ => out.push(instr.clone()),
            }
        }
        (out.len() != instrs.len()).then_some(out)
    })
}

/// Whether `instr` pushes one value and does nothing else.
fn pure_value(instr: &Instr) -> bool {
    matches!(
        instr,
        Instr::Const(_) | Instr::LocalGet(_) | Instr::GlobalGet(_)
    )
}
