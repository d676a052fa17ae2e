//! `Vacuum`.

use std::sync::Arc;

use irpass::function_pass;
use walrus::ir::Instr;

use crate::{Body, Wasm};

/// Removes values made without effects and then dropped (`i32.const 1; drop`,
/// `local.get 0; drop`, `global.get 0; drop`).
#[function_pass(opt_level = 1)]
pub fn vacuum(func: Arc<Body>, _module: &Wasm) -> Arc<Body> {
    let mut body: Option<Body> = None;
    for (s, seq) in func.seqs.iter().enumerate() {
        let mut out: Vec<Instr> = Vec::with_capacity(seq.instrs.len());
        for instr in &seq.instrs {
            match instr {
                Instr::Drop(_) if out.last().is_some_and(pure_value) => {
                    out.pop();
                }
                _ => out.push(instr.clone()),
            }
        }
        if out.len() != seq.instrs.len() {
            body.get_or_insert_with(|| (*func).clone()).seqs[s].instrs = out;
        }
    }
    body.map_or(func, Arc::new)
}

/// Whether `instr` pushes one value and does nothing else.
fn pure_value(instr: &Instr) -> bool {
    matches!(
        instr,
        Instr::Const(_) | Instr::LocalGet(_) | Instr::GlobalGet(_)
    )
}
