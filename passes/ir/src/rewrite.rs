//! The rewriter: a pass says what it changes ([`Rewrite`]); [`ArenaFunction::rewrite`] does
//! the walk, the old-id → new-id table, sharing, scoping, scheduling and change detection, and
//! [`ArenaFunction::fixpoint`] repeats a rewrite until nothing changes.
//!
//! ```
//! use irpass_ir::Module;
//! use irpass_ir::body::{ExprId, Node, VarId};
//! use irpass_ir::rewrite::{LetAction, Rewrite, RewriteCx};
//!
//! /// Inlines every binding whose value is a constant.
//! struct InlineConstants;
//! impl Rewrite for InlineConstants {
//!     fn visit_let(&mut self, cx: &mut RewriteCx<'_>, _var: VarId, value: ExprId) -> LetAction {
//!         match cx.new.body().node(value) {
//!             Node::Constant(_) => LetAction::Inline,
//!             _ => LetAction::Keep,
//!         }
//!     }
//! }
//!
//! let m = Module::parse("def @main(%x: float32) { let %c = 2f; add(%x, %c) }").unwrap();
//! let f = m.get("main").unwrap();
//! let out = f.code.rewrite(&mut InlineConstants);
//! let text = Module::from_functions([("main", f.with_code(out))]).to_string();
//! assert!(text.contains("def @main(%x: float32) {\n  add(%x, 2f)\n}"), "{text}");
//! ```

use crate::body::{
    ArenaFunction, BodyBuilder, ClosureData, ExprId, Idx, List, Node, Sig, SigId, VarId,
};

mod old;
pub use old::{OldBody, OldId, OldList};

/// What to do with a `let` binding once its value is rewritten ([`Rewrite::visit_let`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LetAction {
    /// Keep the binding as it is.
    Keep,
    /// Bind the variable to this expression (of the new body) instead.
    Replace(ExprId),
    /// Drop the binding: every use of the variable becomes the value. (A variable used in its
    /// own value, a recursive closure, is kept instead.)
    Inline,
    /// Drop the binding: every use of the variable becomes this expression of the new body
    /// (an earlier variable bound to the same value, say). Kept, like `Inline`, when the
    /// variable is used in its own value.
    Substitute(ExprId),
}

/// What a rewrite hook sees: the body being rewritten and the builder of the new one.
pub struct RewriteCx<'a> {
    /// The body being rewritten, read with [`OldId`]s.
    pub old: OldBody<'a>,
    /// The new body, built so far (the new ids); build replacements with it.
    pub new: BodyBuilder,
    /// Old id to new id, [`UNSET`] until the old node is rewritten (4 bytes a node).
    map: Vec<u32>,
}

impl RewriteCx<'_> {
    /// The new id of old node `old`, once it is rewritten (every operand of the node a hook is
    /// called for is; so is every node the walk has passed).
    pub fn new_id(&self, old: OldId) -> Option<ExprId> {
        mapped(&self.map, old.id())
    }
}

/// A rewrite of a body. Every hook has a default that changes nothing, so a pass writes only
/// what it changes.
pub trait Rewrite {
    /// Called once for every node reachable from the root, after its operands: `new` is the
    /// node as rebuilt in the new body (read it with `cx.new.body().node(new)`), `old` the
    /// node it was rebuilt from (read it through `cx.old`; an analysis of the input body, such
    /// as its types, with `old.id()`). Return a replacement built with `cx.new`, or `None` to
    /// keep `new`.
    fn rewrite(&mut self, _cx: &mut RewriteCx<'_>, _old: OldId, _new: ExprId) -> Option<ExprId> {
        None
    }

    /// Whether to keep the binding of `var` at all, asked before its value is
    /// walked: a binding dropped here costs nothing (dead code elimination answers from a
    /// liveness analysis of the old body).
    fn keep_binding(&mut self, _old: OldBody<'_>, _var: VarId, _value: OldId) -> bool {
        true
    }

    /// Called with each kept binding's rewritten value (a new id), before the rest of its
    /// scope is walked. (A variable keeps its id across a rewrite.)
    fn visit_let(&mut self, _cx: &mut RewriteCx<'_>, _var: VarId, _value: ExprId) -> LetAction {
        LetAction::Keep
    }

    /// Called when the walk enters a `let` block (before its first binding): what is bound
    /// from here on is in scope until the matching [`Rewrite::leave_block`].
    fn enter_block(&mut self) {}

    /// Called when the walk leaves a `let` block (after its result, before the block's own
    /// [`Rewrite::rewrite`]).
    fn leave_block(&mut self) {}
}

enum Task {
    Visit(ExprId),
    Build(ExprId),
    /// A block starts: remember where its new bindings begin.
    LetStart,
    /// Binding `index` of the bindings pool starts: ask whether to keep it.
    BindStart(usize),
    /// Binding `index`'s value is rewritten: ask what to do with it.
    Bind(usize),
}

// The rewriter's entry points are methods of the code it rewrites (defined here, above the
// representation's layer).
impl ArenaFunction {
    /// This code rewritten by `r`, or `None` when no hook changed anything (the caller keeps
    /// what it had, so identity is preserved).
    ///
    /// The walk goes in evaluation order (a binding's value before the rest of its scope) with
    /// an explicit stack, so no input is too deep for it; each node reachable from the root is
    /// visited once however many users it has (the table from old to new ids is a dense
    /// vector), and a shared node stays shared. The new body holds only what is reachable, in
    /// evaluation post-order; the parameters keep their variables.
    ///
    /// ```
    /// use irpass_ir::{ExprId, Module, OldId, Rewrite, RewriteCx};
    /// /// `exp` becomes `log`.
    /// struct ExpToLog;
    /// impl Rewrite for ExpToLog {
    ///     fn rewrite(&mut self, cx: &mut RewriteCx<'_>, _old: OldId, new: ExprId) -> Option<ExprId> {
    ///         let (args, attrs) = cx.new.body().call_of(new, "exp")?;
    ///         let (args, attrs) = (args.to_vec(), attrs.clone());
    ///         cx.new.op("log", &args, attrs).ok()
    ///     }
    /// }
    /// let m = Module::parse("def @main(%x: float32) { exp(%x) }").unwrap();
    /// let code = &m.get("main").unwrap().code;
    /// let out = code.rewrite(&mut ExpToLog).unwrap();
    /// assert_eq!(out.params, code.params);
    /// struct Nothing;
    /// impl Rewrite for Nothing {}
    /// assert!(code.rewrite(&mut Nothing).is_none());
    /// ```
    pub fn rewrite<R: Rewrite + ?Sized>(&self, r: &mut R) -> Option<ArenaFunction> {
        rewrite(self, r)
    }

    /// Rewrites with a fresh rewrite from `make` until nothing changes, at most `limit` times
    /// (as Binaryen's `--converge`): for rewrite sets whose results enable each other. `None`
    /// when the first round changed nothing.
    pub fn fixpoint<R: Rewrite>(
        &self,
        limit: usize,
        mut make: impl FnMut() -> R,
    ) -> Option<ArenaFunction> {
        let mut last: Option<ArenaFunction> = None;
        for _ in 0..limit {
            match last.as_ref().unwrap_or(self).rewrite(&mut make()) {
                Some(next) => last = Some(next),
                None => break,
            }
        }
        last
    }
}

fn rewrite<R: Rewrite + ?Sized>(code: &ArenaFunction, r: &mut R) -> Option<ArenaFunction> {
    let (old, root) = (&code.body, code.root);
    let mut d = Driver {
        cx: RewriteCx {
            old: OldBody::of(old),
            new: BodyBuilder::for_rewrite_of(old),
            map: vec![UNSET; old.len()],
        },
        sigs: vec![None; old.sigs.len()],
        scratch: Vec::with_capacity(8),
        subst: vec![None; old.var_count()],
        pending: Vec::with_capacity(old.bindings.len()),
        marks: Vec::new(),
        changed: false,
    };
    let params = code.params.clone();
    // Room for a task a node, which a walk rarely outgrows (the stack holds the operands
    // still to visit, not the whole body).
    let mut tasks = Vec::with_capacity(old.len() + 1);
    tasks.push(Task::Visit(root));
    while let Some(task) = tasks.pop() {
        match task {
            Task::Visit(id) => d.visit(r, id, &mut tasks),
            Task::Build(id) => d.build(r, id),
            Task::LetStart => {
                d.marks.push(d.pending.len());
                r.enter_block();
            }
            Task::BindStart(i) => {
                let (v, value) = old.bindings[i];
                if r.keep_binding(d.cx.old, v, OldId::of(value)) {
                    tasks.push(Task::Bind(i));
                    tasks.push(Task::Visit(value));
                } else {
                    d.changed = true;
                }
            }
            Task::Bind(i) => d.bind(r, i),
        }
    }
    let root = d.get(root);
    d.changed.then(|| ArenaFunction {
        body: d.cx.new.finish(),
        params,
        root,
    })
}

struct Driver<'a> {
    cx: RewriteCx<'a>,
    /// Old signature to new (each operator and attribute set is interned in the new body once).
    sigs: Vec<Option<SigId>>,
    /// Operand lists being rebuilt (one buffer for all, no allocation per node).
    scratch: Vec<ExprId>,
    /// Variables whose binding was dropped, to what their uses become.
    subst: Vec<Option<ExprId>>,
    /// New bindings of the blocks being rebuilt, innermost last.
    pending: Vec<(VarId, ExprId)>,
    /// Where each open block's bindings start in `pending`.
    marks: Vec<usize>,
    changed: bool,
}

/// The entry of `RewriteCx::map` for an old node not rewritten yet.
const UNSET: u32 = u32::MAX;

/// The new id of old node `e`, if it is rewritten.
#[inline]
fn mapped(exprs: &[u32], e: ExprId) -> Option<ExprId> {
    let v = exprs[e.index()];
    (v != UNSET).then(|| ExprId::new(v as usize))
}

impl Driver<'_> {
    #[inline]
    fn mapped(&self, e: ExprId) -> Option<ExprId> {
        mapped(&self.cx.map, e)
    }

    fn get(&self, old: ExprId) -> ExprId {
        self.mapped(old)
            .expect("operands are rewritten before their users")
    }

    /// The new ids of `list`'s old ones, in `scratch`.
    fn map_list(&mut self, list: List) {
        self.scratch.clear();
        for &a in self.cx.old.body().list(list) {
            self.scratch
                .push(mapped(&self.cx.map, a).expect("operands are rewritten before their users"));
        }
    }

    fn visit<R: Rewrite + ?Sized>(&mut self, r: &mut R, id: ExprId, tasks: &mut Vec<Task>) {
        if self.mapped(id).is_some() {
            return;
        }
        let old = self.cx.old.body();
        match old.node(id) {
            Node::Var(_) | Node::Global(_) | Node::Constant(_) => self.build(r, id),
            Node::Let { bindings, body } => {
                tasks.push(Task::Build(id));
                tasks.push(Task::Visit(*body));
                for i in bindings.range().rev() {
                    tasks.push(Task::BindStart(i));
                }
                tasks.push(Task::LetStart);
            }
            Node::Closure(c) => {
                tasks.push(Task::Build(id));
                tasks.push(Task::Visit(old.closure(*c).body));
            }
            _ => {
                tasks.push(Task::Build(id));
                let at = tasks.len();
                old.for_each_operand(id, |o| tasks.push(Task::Visit(o)));
                tasks[at..].reverse();
            }
        }
    }

    fn build<R: Rewrite + ?Sized>(&mut self, r: &mut R, id: ExprId) {
        let old = self.cx.old.body();
        let b = &mut self.cx.new;
        let new = match old.node(id) {
            Node::Var(v) => match self.subst[v.index()] {
                Some(e) => {
                    // A dropped binding: the use is what replaces it, already rewritten.
                    self.cx.map[id.index()] = e.index() as u32;
                    return;
                }
                None => b.use_var(*v),
            },
            Node::Global(g) => b.global(old.global(*g)),
            Node::Constant(k) => b.constant_hashed(old.constant(*k).clone(), old.constant_hash(*k)),
            Node::CallOp { sig, args } => {
                let sig = match self.sigs[sig.index()] {
                    Some(s) => s,
                    None => {
                        let Sig { op, attrs } = old.sig(*sig);
                        let attrs = b.intern_attrs(old.attrs(attrs).clone());
                        let s = b.intern_sig(op, attrs);
                        self.sigs[sig.index()] = Some(s);
                        s
                    }
                };
                self.map_list(*args);
                self.cx.new.call_sig(sig, &self.scratch)
            }
            Node::Call { callee, args } => {
                let callee = self.get(*callee);
                self.map_list(*args);
                self.cx.new.call(callee, &self.scratch)
            }
            Node::Let { body, .. } => {
                r.leave_block();
                let mark = self.marks.pop().expect("a block's start was recorded");
                let body = self.get(*body);
                // The block's bindings go from the pending stack straight into the new body's
                // pool (no list of their own in between).
                let block = self.cx.new.lets(&self.pending[mark..], body);
                self.pending.truncate(mark);
                block
            }
            Node::Tuple(fields) => {
                let fields: Vec<ExprId> = old.list(*fields).iter().map(|&a| self.get(a)).collect();
                self.cx.new.tuple(&fields)
            }
            Node::Proj(t, i) => {
                let t = self.get(*t);
                self.cx.new.proj(t, *i)
            }
            Node::If(c, t, o) => {
                let (c, t, o) = (self.get(*c), self.get(*t), self.get(*o));
                self.cx.new.if_(c, t, o)
            }
            Node::Closure(c) => {
                let data = old.closure(*c);
                let body = self.get(data.body);
                self.cx.new.closure(ClosureData {
                    params: data.params.clone(),
                    ret_type: data.ret_type.clone(),
                    attrs: data.attrs.clone(),
                    body,
                })
            }
        };
        if self.cx.new.body().span(new).is_none() {
            self.cx.new.set_span(new, old.span(id));
        }
        let out = match r.rewrite(&mut self.cx, OldId::of(id), new) {
            Some(replacement) => {
                self.changed |= replacement != new;
                replacement
            }
            None => new,
        };
        self.cx.map[id.index()] = out.index() as u32;
    }

    fn bind<R: Rewrite + ?Sized>(&mut self, r: &mut R, i: usize) {
        let (v, value) = self.cx.old.body().bindings[i];
        let nvalue = self.get(value);
        match r.visit_let(&mut self.cx, v, nvalue) {
            LetAction::Keep => self.pending.push((v, nvalue)),
            LetAction::Replace(e) => {
                self.changed |= e != nvalue;
                self.pending.push((v, e));
            }
            LetAction::Inline => self.substitute(v, nvalue, nvalue),
            LetAction::Substitute(e) => self.substitute(v, nvalue, e),
        }
    }

    /// Drops the binding of `v` (value `nvalue`), its uses becoming `e`, unless `v`
    /// is used in its own value.
    fn substitute(&mut self, v: VarId, nvalue: ExprId, e: ExprId) {
        let used_in_own_value = self
            .cx
            .old
            .body()
            .var_node(v)
            .is_some_and(|n| self.mapped(n).is_some());
        if used_in_own_value {
            self.pending.push((v, nvalue));
        } else {
            self.subst[v.index()] = Some(e);
            self.changed = true;
        }
    }
}
