//! `DeadFunctions` and its config key.

use std::collections::{HashMap, HashSet};

use irpass::{IrModule, PassContext, module_pass, pass_config_option};
use walrus::ir::Instr;
use walrus::{ConstExpr, ConstOp, ElementItems, ExportItem, FunctionId, GlobalKind, Module};

use crate::{Body, FuncKey, Wasm};

pass_config_option! {
    /// Functions `DeadFunctions` keeps although nothing reaches them, by name (the name
    /// section's, or `#INDEX`).
    pub KEEP_FUNCTIONS: Vec<String> = "wasm.DeadFunctions.keep";
}

/// Removes the functions nothing can reach: not exported, not the start function, not in a
/// table or a global, not called or referenced by a function that is reached, and not named by
/// the config key `wasm.DeadFunctions.keep`.
#[module_pass(opt_level = 1)]
pub fn dead_functions(mut module: Wasm, ctx: &PassContext) -> Wasm {
    let keep = ctx.get(&KEEP_FUNCTIONS).cloned().unwrap_or_default();
    let kept = |k: &FuncKey| keep.iter().any(|name| *name == k.to_string());
    let bodies: HashMap<FunctionId, &Body> =
        module.functions().map(|(k, b)| (k.id, &**b)).collect();
    let mut work: Vec<FunctionId> = roots(&module.shell());
    let declared = module
        .declarations()
        .chain(module.functions().map(|(k, _)| k));
    work.extend(declared.filter(|k| kept(k)).map(|k| k.id));
    let mut reached: HashSet<FunctionId> = HashSet::new();
    while let Some(id) = work.pop() {
        if !reached.insert(id) {
            continue;
        }
        for instr in bodies.get(&id).into_iter().flat_map(|b| b.instrs()) {
            match instr {
                Instr::Call(c) => work.push(c.func),
                Instr::ReturnCall(c) => work.push(c.func),
                Instr::RefFunc(r) => work.push(r.func),
                _ => {}
            }
        }
    }
    if bodies.keys().any(|id| !reached.contains(id)) {
        module.retain(|k, _| reached.contains(&k.id));
    }
    module
}

/// The functions the module's exports, start, tables and globals name.
fn roots(shell: &Module) -> Vec<FunctionId> {
    let mut roots: Vec<FunctionId> = shell.start.into_iter().collect();
    for export in shell.exports.iter() {
        if let ExportItem::Function(f) = export.item {
            roots.push(f);
        }
    }
    for element in shell.elements.iter() {
        match &element.items {
            ElementItems::Functions(fs) => roots.extend(fs),
            ElementItems::Expressions(_, exprs) => exprs.iter().for_each(|e| named(e, &mut roots)),
        }
    }
    for global in shell.globals.iter() {
        if let GlobalKind::Local(e) = &global.kind {
            named(e, &mut roots);
        }
    }
    roots
}

/// The functions a constant expression references.
fn named(expr: &ConstExpr, into: &mut Vec<FunctionId>) {
    match expr {
        ConstExpr::RefFunc(f) => into.push(*f),
        ConstExpr::Extended(ops) => into.extend(ops.iter().filter_map(|op| match op {
            ConstOp::RefFunc(f) => Some(*f),
            _ => None,
        })),
        _ => {}
    }
}
