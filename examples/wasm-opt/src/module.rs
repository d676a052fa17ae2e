//! The adapter: walrus's module as an irpass module, through [`irpass::shell`].
//!
//! walrus edits in place, cannot clone a module, and its ids belong to one module instance, so
//! [`Wasm`] is a [`Shelled`] module: the walrus module is the shared shell (types, imports,
//! globals, tables, data, module-wide locals) and the function bodies are taken out as values.

use std::collections::HashSet;
use std::fmt;
use std::ops::Deref;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use irpass::shell::{Shell, Shelled, TakenOut};
use irpass::{Diagnostic, Diagnostics};
use walrus::ir::{Instr, InstrLocId, InstrSeq, InstrSeqId, Visitor, dfs_in_order};
use walrus::{FunctionId, FunctionKind, LocalFunction, LocalId, Module, ValType};

/// A WebAssembly module as a value (see the module's documentation).
pub type Wasm = Shelled<WasmShell>;

/// Reads a binary module (validated by walrus's parser).
///
/// # Errors
/// What walrus says about a module it cannot read.
pub fn read(bytes: &[u8]) -> Result<Wasm, irpass::BoxError> {
    Ok(Shelled::new(WasmShell(Module::from_buffer(bytes)?)))
}

/// Reads the text format (WAT).
///
/// # Errors
/// What `wat` says about the text, or walrus about the module.
pub fn parse(text: &str) -> Result<Wasm, irpass::BoxError> {
    read(&wat::parse_str(text)?)
}

/// How a function is identified: its index in the module as read (the order of functions),
/// walrus's id, and a name for messages (the name section's, else `#INDEX`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FuncKey {
    /// The function's index in the module as read (unique: it alone orders keys).
    pub index: usize,
    /// walrus's id of the function in the shell.
    pub id: FunctionId,
    name: String,
}

impl fmt::Display for FuncKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// One instruction sequence of a body (a block's, a loop's, an `if` arm's, or the entry).
#[derive(Clone, Debug)]
pub struct Seq {
    /// walrus's id of the sequence, which `block`/`loop`/`if` instructions name.
    pub id: InstrSeqId,
    /// Its instructions.
    pub instrs: Vec<Instr>,
}

/// A function's body: its instruction sequences, the entry first.
#[derive(Clone, Debug)]
pub struct Body {
    /// The sequences, the entry first, then the nested ones in order.
    pub seqs: Vec<Seq>,
}

impl Body {
    fn of(func: &LocalFunction) -> Body {
        struct Collect(Vec<Seq>);
        impl<'a> Visitor<'a> for Collect {
            fn start_instr_seq(&mut self, seq: &'a InstrSeq) {
                let instrs = seq.instrs.iter().map(|(i, _)| i.clone()).collect();
                self.0.push(Seq {
                    id: seq.id(),
                    instrs,
                });
            }
        }
        let mut seqs = Collect(Vec::new());
        dfs_in_order(&mut seqs, func, func.entry_block());
        Body { seqs: seqs.0 }
    }

    /// `func` with the sequences `rewrite` gives new instructions for (`None`: unchanged); the
    /// very same `Arc` when it changes none, as change detection asks.
    pub fn rewrite_seqs(
        func: Arc<Body>,
        mut rewrite: impl FnMut(&[Instr]) -> Option<Vec<Instr>>,
    ) -> Arc<Body> {
        let mut body: Option<Body> = None;
        for (s, seq) in func.seqs.iter().enumerate() {
            if let Some(instrs) = rewrite(&seq.instrs) {
                body.get_or_insert_with(|| (*func).clone()).seqs[s].instrs = instrs;
            }
        }
        body.map_or(func, Arc::new)
    }

    /// Every instruction of the body, sequence after sequence.
    pub fn instrs(&self) -> impl Iterator<Item = &Instr> {
        self.seqs.iter().flat_map(|s| &s.instrs)
    }
}

/// The shell: walrus's module (read through `Deref`).
pub struct WasmShell(Module);

impl Deref for WasmShell {
    type Target = Module;
    fn deref(&self) -> &Module {
        &self.0
    }
}

impl WasmShell {
    /// A new local of type `ty` (walrus keeps locals module-wide; a function uses any).
    pub fn add_local(&mut self, ty: ValType) -> LocalId {
        self.0.locals.add(ty)
    }
}

/// The name a dropped function has in the copy it is deleted from.
const DROPPED: &str = "\0irpass-dropped";

impl Shell for WasmShell {
    type Key = FuncKey;
    type Body = Body;
    type Written = Vec<u8>;

    fn ir_name() -> &'static str {
        "wasm"
    }

    fn take_out(&self) -> TakenOut<FuncKey, Body> {
        let (mut funcs, mut imports) = (Vec::new(), Vec::new());
        for (index, f) in self.0.funcs.iter().enumerate() {
            let name = f.name.clone().unwrap_or_else(|| format!("#{index}"));
            let key = FuncKey {
                id: f.id(),
                index,
                name,
            };
            match &f.kind {
                FunctionKind::Local(local) => funcs.push((key, Body::of(local))),
                _ => imports.push(key),
            }
        }
        TakenOut {
            functions: funcs,
            declarations: imports,
        }
    }

    /// Puts the bodies into walrus's functions and emits; the dropped functions are deleted
    /// from a copy, found there by a name given for the emit (walrus orders functions its own
    /// way when it emits).
    fn write(
        &mut self,
        bodies: &[(&FuncKey, &Body)],
        dropped: &[FuncKey],
    ) -> irpass::Result<Vec<u8>> {
        let module = &mut self.0;
        for (key, body) in bodies {
            if let FunctionKind::Local(local) = &mut module.funcs.get_mut(key.id).kind {
                for seq in &body.seqs {
                    let with_locs = seq
                        .instrs
                        .iter()
                        .map(|i| (i.clone(), InstrLocId::default()));
                    local.block_mut(seq.id).instrs = with_locs.collect();
                }
            }
        }
        let names: Vec<Option<String>> = (dropped.iter())
            .map(|k| module.funcs.get_mut(k.id).name.replace(DROPPED.to_string()))
            .collect();
        let emit = |m: &mut Module| catch_unwind(AssertUnwindSafe(|| m.emit_wasm()));
        let bytes = emit(module);
        for (key, name) in dropped.iter().zip(names) {
            module.funcs.get_mut(key.id).name = name;
        }
        let bytes = bytes.map_err(|_| "walrus cannot emit the module")?;
        if dropped.is_empty() {
            return Ok(bytes);
        }
        let mut copy = Module::from_buffer(&bytes)?;
        let marked: HashSet<FunctionId> = (copy.funcs.iter())
            .filter(|f| f.name.as_deref() == Some(DROPPED))
            .map(|f| f.id())
            .collect();
        marked.into_iter().for_each(|id| copy.funcs.delete(id));
        Ok(emit(&mut copy).map_err(|_| "a dropped function is still used")?)
    }

    fn print(written: &Vec<u8>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match wasmprinter::print_bytes(written) {
            Ok(text) => f.write_str(&text),
            Err(e) => write!(f, ";; not printable: {e}"),
        }
    }

    /// Valid WebAssembly, as `wasmparser`'s validator says.
    fn verify(written: &Vec<u8>) -> Result<(), Diagnostics> {
        match wasmparser::Validator::new().validate_all(written) {
            Ok(_) => Ok(()),
            Err(e) => Err(Diagnostic::error(e.to_string()).into()),
        }
    }
}
