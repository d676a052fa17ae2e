//! `LocalCse`: a function pass that needs new locals, which walrus keeps module-wide, so it
//! asks for them with a module edit.

use std::sync::Arc;

use irpass::{IrModule, ModuleEdits, function_pass};
use walrus::ValType;
use walrus::ir::{Instr, LocalGet, LocalTee};

use super::int::{classify, constant};
use crate::{Body, FuncKey, Wasm};

/// Where one rewrite goes: the sequence, the end of the second operand (the operator's
/// position), the operand's length, and whether it is 64 bits wide.
type Site = (usize, usize, usize, bool);

/// Computes a repeated operand once: in `E; E; op`, where `E` is the same expression of three
/// or more instructions without effects (constants, `local.get`, `global.get`, integer
/// operators), the second `E` becomes `local.tee $t; local.get $t` of a new local `$t`. The
/// rewrites are found in parallel; the module edit, applied after the map in the order of the
/// functions, makes the locals (so their ids do not depend on the thread count) and rewrites.
#[function_pass(opt_level = 2)]
pub fn local_cse(f: Arc<Body>, _module: &Wasm, edits: &mut ModuleEdits<Wasm>) -> Arc<Body> {
    let sites = sites(&f);
    if sites.is_empty() {
        return f;
    }
    let mut body = (*f).clone();
    edits.push_for_function(move |m: &mut Wasm, key: &FuncKey| {
        let mut locals = [None, None];
        for &(s, op, len, wide) in sites.iter().rev() {
            let ty = if wide { ValType::I64 } else { ValType::I32 };
            let new = || m.shell_mut().add_local(ty);
            let local = *locals[usize::from(wide)].get_or_insert_with(new);
            let reuse = [
                Instr::LocalTee(LocalTee { local }),
                Instr::LocalGet(LocalGet { local }),
            ];
            body.seqs[s].instrs.splice(op - len..op, reuse);
        }
        m.replace_function(key, Arc::new(body));
        Ok(())
    });
    f
}

/// The rewrites of `body`, none overlapping another, in order.
fn sites(body: &Body) -> Vec<Site> {
    let mut sites = Vec::new();
    for (s, seq) in body.seqs.iter().enumerate() {
        let mut free_from = 0;
        for (op, instr) in seq.instrs.iter().enumerate() {
            let Instr::Binop(binop) = instr else { continue };
            let Some((wide, _)) = classify(binop.op) else {
                continue;
            };
            let Some(right) = operand(&seq.instrs, op) else {
                continue;
            };
            let Some(left) = operand(&seq.instrs, right) else {
                continue;
            };
            let len = op - right;
            if right - left == len && len >= 3 && left >= free_from {
                let same = (0..len).all(|i| same(&seq.instrs[left + i], &seq.instrs[right + i]));
                if same {
                    sites.push((s, op, len, wide));
                    free_from = op + 1;
                }
            }
        }
    }
    sites
}

/// The start of the effect-free expression that makes the one value used at `end`, if the
/// instructions before `end` are one.
fn operand(instrs: &[Instr], end: usize) -> Option<usize> {
    let mut needed = 1usize;
    for i in (0..end).rev() {
        let (pops, pushes) = match &instrs[i] {
            Instr::Const(_) | Instr::LocalGet(_) | Instr::GlobalGet(_) => (0, 1),
            Instr::Binop(b) if classify(b.op).is_some() => (2, 1),
            _ => return None,
        };
        needed = needed.checked_sub(pushes)? + pops;
        if needed == 0 {
            return Some(i);
        }
    }
    None
}

/// Whether two effect-free instructions compute the same value (in the same place).
fn same(a: &Instr, b: &Instr) -> bool {
    match (a, b) {
        (Instr::Const(_), Instr::Const(_)) => constant(a).is_some() && constant(a) == constant(b),
        (Instr::LocalGet(x), Instr::LocalGet(y)) => x.local == y.local,
        (Instr::GlobalGet(x), Instr::GlobalGet(y)) => x.global == y.global,
        (Instr::Binop(x), Instr::Binop(y)) => {
            classify(x.op).is_some() && classify(x.op) == classify(y.op)
        }
        _ => false,
    }
}
