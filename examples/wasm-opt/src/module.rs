//! The adapter: a walrus module as an [`IrModule`].
//!
//! walrus edits in place and cannot clone a module, and its ids belong to one module instance.
//! So [`Wasm`] keeps one walrus module (the *shell*: types, imports, globals, tables, data) and
//! takes the function bodies out as values (`Arc<Body>`): passes replace bodies and drop
//! functions by value, and only writing a module puts its bodies back into the shell and emits.
//! An older value stays writable: the shell only ever grows (new locals), and the functions a
//! value dropped are deleted from a copy made at writing.

use std::collections::HashSet;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, RwLock, RwLockReadGuard};

use irpass::{Diagnostic, Diagnostics, IrModule};
use walrus::ir::{Instr, InstrLocId, InstrSeq, InstrSeqId, Visitor, dfs_in_order};
use walrus::{FunctionId, FunctionKind, LocalFunction, LocalId, Module, ValType};

/// How a function is identified: walrus's id, its position in the module as read (the wasm
/// function index), and a name for messages (the name section's, else `#index`).
#[derive(Clone, Debug)]
pub struct FuncKey {
    /// walrus's id of the function in the shell.
    pub id: FunctionId,
    /// The function's index in the module as read.
    pub index: usize,
    name: Arc<str>,
}

impl PartialEq for FuncKey {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
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

    /// Every instruction of the body, sequence after sequence.
    pub fn instrs(&self) -> impl Iterator<Item = &Instr> {
        self.seqs.iter().flat_map(|s| &s.instrs)
    }
}

/// A WebAssembly module: walrus's module for all but the bodies, and the bodies as values.
#[derive(Clone)]
pub struct Wasm {
    shell: Arc<RwLock<Module>>,
    funcs: Arc<Vec<(FuncKey, Arc<Body>)>>,
    imports: Arc<Vec<FuncKey>>,
}

impl Wasm {
    /// Reads a binary module (validated by walrus's parser).
    pub fn read(bytes: &[u8]) -> Result<Wasm, irpass::BoxError> {
        let module = Module::from_buffer(bytes)?;
        let (mut funcs, mut imports) = (Vec::new(), Vec::new());
        for (index, f) in module.funcs.iter().enumerate() {
            let name = f.name.clone().unwrap_or_else(|| format!("#{index}")).into();
            let key = FuncKey {
                id: f.id(),
                index,
                name,
            };
            match &f.kind {
                FunctionKind::Local(local) => funcs.push((key, Arc::new(Body::of(local)))),
                _ => imports.push(key),
            }
        }
        Ok(Wasm {
            shell: Arc::new(RwLock::new(module)),
            funcs: Arc::new(funcs),
            imports: Arc::new(imports),
        })
    }

    /// Reads the text format (WAT).
    pub fn parse(text: &str) -> Result<Wasm, irpass::BoxError> {
        Wasm::read(&wat::parse_str(text)?)
    }

    /// The shell, for what passes read beside the bodies (exports, types, globals). Its
    /// function bodies are the ones read, not this value's.
    pub fn shell(&self) -> RwLockReadGuard<'_, Module> {
        self.shell.read().unwrap_or_else(|e| e.into_inner())
    }

    /// A new local of type `ty` (walrus keeps locals module-wide; a function uses any).
    pub fn add_local(&mut self, ty: ValType) -> LocalId {
        let mut shell = self.shell.write().unwrap_or_else(|e| e.into_inner());
        shell.locals.add(ty)
    }

    /// Keeps the functions for which `keep` is true (callers make sure none left is used).
    pub fn retain(&mut self, keep: impl Fn(&FuncKey, &Body) -> bool) {
        Arc::make_mut(&mut self.funcs).retain(|(k, b)| keep(k, b));
    }

    /// The binary module: this value's bodies put into the shell, emitted, and the functions
    /// this value dropped deleted from a copy.
    pub fn to_wasm(&self) -> Result<Vec<u8>, String> {
        let mut shell = self.shell.write().unwrap_or_else(|e| e.into_inner());
        for (key, body) in self.funcs.iter() {
            if let FunctionKind::Local(local) = &mut shell.funcs.get_mut(key.id).kind {
                for seq in &body.seqs {
                    let with_locs = seq
                        .instrs
                        .iter()
                        .map(|i| (i.clone(), InstrLocId::default()));
                    local.block_mut(seq.id).instrs = with_locs.collect();
                }
            }
        }
        // The functions this value dropped are deleted from a copy, found there by a name
        // given for the emit (walrus orders functions its own way when it emits).
        let kept: HashSet<FunctionId> = self.funcs.iter().map(|(k, _)| k.id).collect();
        let dropped: Vec<(FunctionId, Option<String>)> = (shell.funcs.iter_mut())
            .filter(|f| matches!(f.kind, FunctionKind::Local(_)) && !kept.contains(&f.id()))
            .map(|f| (f.id(), f.name.replace(DROPPED.to_string())))
            .collect();
        let emit = |m: &mut Module| catch_unwind(AssertUnwindSafe(|| m.emit_wasm()));
        let bytes = emit(&mut shell);
        for (id, name) in &dropped {
            shell.funcs.get_mut(*id).name.clone_from(name);
        }
        let bytes = bytes.map_err(|_| "walrus cannot emit the module".to_string())?;
        if dropped.is_empty() {
            return Ok(bytes);
        }
        let mut copy = Module::from_buffer(&bytes).map_err(|e| e.to_string())?;
        let marked: Vec<FunctionId> = (copy.funcs.iter())
            .filter(|f| f.name.as_deref() == Some(DROPPED))
            .map(|f| f.id())
            .collect();
        marked.into_iter().for_each(|id| copy.funcs.delete(id));
        emit(&mut copy).map_err(|_| "a dropped function is still used".to_string())
    }
}

/// The name a dropped function has in the copy it is deleted from.
const DROPPED: &str = "\0irpass-dropped";

impl fmt::Display for Wasm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self
            .to_wasm()
            .and_then(|b| wasmprinter::print_bytes(b).map_err(|e| e.to_string()));
        match text {
            Ok(text) => f.write_str(&text),
            Err(e) => write!(f, ";; the module cannot be written: {e}"),
        }
    }
}

impl fmt::Debug for Wasm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = |keys: &mut dyn Iterator<Item = &FuncKey>| {
            keys.map(|k| k.to_string()).collect::<Vec<_>>()
        };
        f.debug_struct("Wasm")
            .field("functions", &names(&mut self.funcs.iter().map(|(k, _)| k)))
            .field("declarations", &names(&mut self.imports.iter()))
            .finish()
    }
}

impl IrModule for Wasm {
    type Key = FuncKey;
    type Function = Arc<Body>;
    fn ir_name() -> &'static str {
        "wasm"
    }
    fn functions(&self) -> impl Iterator<Item = (&FuncKey, &Arc<Body>)> {
        self.funcs.iter().map(|(k, b)| (k, b))
    }
    fn function_count(&self) -> usize {
        self.funcs.len()
    }
    fn declarations(&self) -> impl Iterator<Item = &FuncKey> {
        self.imports.iter()
    }
    fn replace_function(&mut self, key: &FuncKey, func: Arc<Body>) {
        let funcs = Arc::make_mut(&mut self.funcs);
        if let Ok(i) = funcs.binary_search_by_key(&key.index, |(k, _)| k.index) {
            funcs[i].1 = func;
        }
    }
    fn same_function(a: &Arc<Body>, b: &Arc<Body>) -> bool {
        Arc::ptr_eq(a, b)
    }
    fn function_identity(func: &Arc<Body>) -> Option<usize> {
        Some(Arc::as_ptr(func) as usize)
    }
    fn same_as(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.funcs, &other.funcs)
    }
    /// Valid WebAssembly: the module is emitted and checked by `wasmparser`'s validator.
    fn verify(&self) -> Result<(), Diagnostics> {
        let bytes = self.to_wasm().map_err(Diagnostic::error)?;
        let mut validator = wasmparser::Validator::new();
        match validator.validate_all(&bytes) {
            Ok(_) => Ok(()),
            Err(e) => Err(vec![Diagnostic::error(e.to_string())].into()),
        }
    }
}
