//! irpass on Cranelift's IR: the smaller of the repository's third-party IRs.
//!
//! Cranelift's `ir::Function` is a value (it implements `Clone`), so unlike walrus (see
//! `examples/wasm-opt`) it needs no shell: [`Clif`] is a list of named functions behind `Arc`,
//! and the whole adapter is the `IrModule` impl below. Two function passes show the IR's own
//! API at work: [`FoldConstants`] and [`DeadCode`].
//!
//! ```
//! use irpass::{IrModule, Pass};
//! use irpass_clif_opt::{Clif, FoldConstants};
//!
//! let m = Clif::parse("function %f() -> i32 {
//! block0:
//!     v0 = iconst.i32 2
//!     v1 = iconst.i32 3
//!     v2 = iadd v0, v1
//!     return v2
//! }").unwrap();
//! let out = Pass::from(FoldConstants).run(m).unwrap();
//! assert!(out.to_string().contains("v2 = iconst.i32 5"));
//! assert!(out.verify().is_ok());
//! ```

use std::fmt;
use std::sync::Arc;

use cranelift_codegen::ir::{Function, InstBuilder, InstructionData, Opcode, ValueDef};
use cranelift_codegen::settings;
use irpass::{Diagnostic, Diagnostics, IrModule, function_pass};

/// A module of Cranelift functions, by name, in the order of the text they were read from.
#[derive(Clone, Default)]
pub struct Clif(Arc<Vec<(String, Arc<Function>)>>);

impl Clif {
    /// Reads functions in Cranelift's text format (`function %name(...) { ... }`, one or more).
    ///
    /// # Errors
    /// What Cranelift's reader says about the text.
    pub fn parse(text: &str) -> Result<Clif, irpass::BoxError> {
        let funcs = cranelift_reader::parse_functions(text)?;
        Ok(Clif(Arc::new(
            funcs
                .into_iter()
                .map(|f| {
                    (
                        f.name.to_string().trim_start_matches('%').to_string(),
                        Arc::new(f),
                    )
                })
                .collect(),
        )))
    }
}

impl fmt::Display for Clif {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (_, func)) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{func}")?;
        }
        Ok(())
    }
}

impl IrModule for Clif {
    type Key = str;
    type Function = Arc<Function>;
    fn ir_name() -> &'static str {
        "clif"
    }
    fn functions(&self) -> impl Iterator<Item = (&str, &Arc<Function>)> {
        self.0.iter().map(|(n, f)| (n.as_str(), f))
    }
    fn replace_function(&mut self, name: &str, func: Arc<Function>) {
        if let Some(slot) = Arc::make_mut(&mut self.0)
            .iter_mut()
            .find(|(n, _)| n == name)
        {
            slot.1 = func;
        }
    }
    fn same_function(a: &Arc<Function>, b: &Arc<Function>) -> bool {
        Arc::ptr_eq(a, b)
    }
    fn function_identity(func: &Arc<Function>) -> Option<usize> {
        Some(Arc::as_ptr(func) as usize)
    }
    fn same_as(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
    /// Cranelift's own verifier, on every function.
    fn verify(&self) -> Result<(), Diagnostics> {
        let flags = settings::Flags::new(settings::builder());
        let errors: Vec<Diagnostic> = (self.0.iter())
            .filter_map(|(name, f)| {
                let e = cranelift_codegen::verify_function(f, &flags).err()?;
                Some(Diagnostic::error(e.to_string()).at(format!("%{name}")))
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.into())
        }
    }
}

/// Replaces an integer `iadd`, `isub`, `imul`, `band`, `bor` or `bxor` of two `iconst`s by the
/// `iconst` of its result, at the operation's width.
#[function_pass(opt_level = 1)]
pub fn fold_constants(func: Arc<Function>, _module: &Clif) -> Arc<Function> {
    let constant = |f: &Function, v| match f.dfg.value_def(f.dfg.resolve_aliases(v)) {
        ValueDef::Result(inst, 0) => match f.dfg.insts[inst] {
            InstructionData::UnaryImm {
                opcode: Opcode::Iconst,
                imm,
            } => Some(imm.bits()),
            _ => None,
        },
        _ => None,
    };
    let mut out: Option<Function> = None;
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            let f = out.as_ref().unwrap_or(&func);
            let InstructionData::Binary {
                opcode,
                args: [a, b],
            } = f.dfg.insts[inst]
            else {
                continue;
            };
            let (Some(a), Some(b)) = (constant(f, a), constant(f, b)) else {
                continue;
            };
            let value = match opcode {
                Opcode::Iadd => a.wrapping_add(b),
                Opcode::Isub => a.wrapping_sub(b),
                Opcode::Imul => a.wrapping_mul(b),
                Opcode::Band => a & b,
                Opcode::Bor => a | b,
                Opcode::Bxor => a ^ b,
                _ => continue,
            };
            let ty = f.dfg.ctrl_typevar(inst);
            if !ty.is_int() || ty.bits() > 64 {
                continue;
            }
            let imm = cranelift_codegen::ir::immediates::Imm64::new(value)
                .zero_extend_from_width(ty.bits());
            let f = out.get_or_insert_with(|| (*func).clone());
            f.dfg.replace(inst).iconst(ty, imm);
        }
    }
    out.map_or(func, Arc::new)
}

/// Removes instructions whose results nothing uses and that have no other effect (no call,
/// branch, store, load, trap or other side effect), until none is left.
#[function_pass(opt_level = 1)]
pub fn dead_code(func: Arc<Function>, _module: &Clif) -> Arc<Function> {
    let mut f: Option<Function> = None;
    loop {
        let g = f.as_ref().unwrap_or(&func);
        let mut used = std::collections::HashSet::new();
        for block in g.layout.blocks() {
            for inst in g.layout.block_insts(block) {
                for v in g.dfg.inst_values(inst) {
                    used.insert(g.dfg.resolve_aliases(v));
                }
            }
        }
        let dead: Vec<_> = (g.layout.blocks())
            .flat_map(|b| g.layout.block_insts(b))
            .filter(|&inst| {
                let op = g.dfg.insts[inst].opcode();
                let effect = op.is_call()
                    || op.is_branch()
                    || op.is_terminator()
                    || op.can_store()
                    || op.can_load()
                    || op.can_trap()
                    || op.other_side_effects();
                let results = g.dfg.inst_results(inst);
                !effect && !results.is_empty() && results.iter().all(|r| !used.contains(r))
            })
            .collect();
        if dead.is_empty() {
            return f.map_or(func, Arc::new);
        }
        let g = f.get_or_insert_with(|| (*func).clone());
        dead.into_iter().for_each(|inst| g.layout.remove_inst(inst));
    }
}
