//! The text of an arena function: every non-atomic node shared by two users is bound once
//! (`%0 = ...;`), so the text reads back as the same graph; without recursion and in time
//! linear in the output however deep the nesting: the work is a stack of tasks, and a nested
//! scope's text is referenced by its parent's, never copied into it. The output itself is
//! linear in the input: indentation stops growing at 64 levels.

use std::fmt::Write as _;

use super::names::{VarNames, pad, write_constant};
use crate::body::ArenaFunction;
use crate::body::Idx;
use crate::body::{Body, ExprId, Node, Sig, VarId};
use crate::{Attrs, Type};

/// `def @name(params) -> ret { body }` and a newline: the text a module prints for this
/// function (the module's text is `#[version = "0.0.5"]`, a newline, then its functions
/// separated by blank lines).
///
/// ```
/// use irpass_ir::Module;
/// use irpass_ir::text::function_text;
/// let text = "#[version = \"0.0.5\"]\ndef @main(%x: float32) -> float32 {\n  %0 = exp(%x);\n  add(%0, %0)\n}\n";
/// let m = Module::parse(text).unwrap();
/// let f = m.get("main").unwrap();
/// let a = &f.code;
/// let printed = function_text("main", a, f.ret_type.as_ref(), &f.attrs);
/// assert_eq!(format!("#[version = \"0.0.5\"]\n{printed}"), text);
/// ```
pub fn function_text(
    name: &str,
    f: &ArenaFunction,
    ret_type: Option<&Type>,
    attrs: &Attrs,
) -> String {
    let mut p = Printer::new(&f.body);
    p.mark_shared_let_values(f.root);
    let root = p.rope.new_buf();
    p.rope.push_str(root, "def @");
    p.rope.push_str(root, name);
    p.signature(&f.params, attrs, ret_type, root);
    p.tasks.push(Task::Lit("\n}\n", root));
    p.tasks.push(Task::Body(f.root, 2, root));
    p.run();
    let mut out = String::with_capacity(p.rope.store.len());
    p.rope.write(root, &mut out);
    out
}

/// A buffer of the output: a list of pieces, each a run of the shared text store or another
/// buffer. Appending a buffer to another is O(1); the text is put together once, at the end.
#[derive(Clone, Copy)]
struct Buf(u32);

enum Piece {
    Text(usize, usize),
    Buf(u32),
}

#[derive(Default)]
struct Rope {
    store: String,
    bufs: Vec<Vec<Piece>>,
    /// Buffers spliced into their parents, empty, for `new_buf` to hand out again (a line's
    /// buffer is made for every binding: reusing them keeps the printer off the allocator).
    free: Vec<u32>,
}

impl Rope {
    fn new_buf(&mut self) -> Buf {
        if let Some(b) = self.free.pop() {
            return Buf(b);
        }
        self.bufs.push(Vec::new());
        Buf(u32::try_from(self.bufs.len() - 1).expect("fewer than 2^32 buffers"))
    }

    /// Moves the pieces of `child` to the end of `b` (no text is copied) and frees `child`
    /// for reuse: it must be referenced nowhere else.
    fn splice(&mut self, b: Buf, child: Buf) {
        let mut pieces = std::mem::take(&mut self.bufs[child.0 as usize]);
        for piece in pieces.drain(..) {
            match piece {
                Piece::Text(start, end) => {
                    let dest = &mut self.bufs[b.0 as usize];
                    match dest.last_mut() {
                        Some(Piece::Text(_, last_end)) if *last_end == start => *last_end = end,
                        _ => dest.push(Piece::Text(start, end)),
                    }
                }
                Piece::Buf(_) => self.bufs[b.0 as usize].push(piece),
            }
        }
        self.bufs[child.0 as usize] = pieces;
        self.free.push(child.0);
    }

    /// Appends what `write` writes to the store to buffer `b`.
    fn write_with(&mut self, b: Buf, write: impl FnOnce(&mut String)) {
        let start = self.store.len();
        write(&mut self.store);
        let end = self.store.len();
        let pieces = &mut self.bufs[b.0 as usize];
        match pieces.last_mut() {
            Some(Piece::Text(_, last_end)) if *last_end == start => *last_end = end,
            _ => pieces.push(Piece::Text(start, end)),
        }
    }

    fn push_str(&mut self, b: Buf, s: &str) {
        self.write_with(b, |out| out.push_str(s));
    }

    fn push_buf(&mut self, b: Buf, child: Buf) {
        self.bufs[b.0 as usize].push(Piece::Buf(child.0));
    }

    /// The text of buffer `root`, appended to `out` (an explicit stack: buffers nest as deep
    /// as the program).
    fn write(&self, root: Buf, out: &mut String) {
        let mut stack = vec![(root.0, 0usize)];
        while let Some((b, i)) = stack.pop() {
            let Some(piece) = self.bufs[b as usize].get(i) else {
                continue;
            };
            stack.push((b, i + 1));
            match piece {
                Piece::Text(start, end) => out.push_str(&self.store[*start..*end]),
                Piece::Buf(child) => stack.push((*child, 0)),
            }
        }
    }
}

/// `k=v` for each attribute, separated by `, `, with one before the first unless `first`
/// (nothing precedes them in the list).
fn write_attrs(attrs: &Attrs, mut first: bool, out: &mut String) {
    for (k, v) in attrs.iter() {
        if !first {
            out.push_str(", ");
        }
        first = false;
        let _ = write!(out, "{k}={v}");
    }
}

enum Task {
    /// Literal text.
    Lit(&'static str, Buf),
    /// Text made when the task was made.
    Text(String, Buf),
    /// `ind` spaces.
    Pad(usize, Buf),
    /// How an operand is referred to: a leaf inline, anything else by its number.
    Atom(ExprId, usize, Buf),
    /// An operand's node is written (into `line`): bind it in its scope's lines.
    AtomEnd {
        e: ExprId,
        ind: usize,
        number: Option<usize>,
        line: Buf,
        lines: Buf,
        dest: Buf,
    },
    /// A node itself, its operands as atoms.
    Inline(ExprId, usize, Buf),
    /// A scope: its bindings' lines, then its result.
    Body(ExprId, usize, Buf),
    /// The rest of a scope from `cur` (its lines go to the open scope's buffer).
    BodyStep(ExprId, usize, Buf),
    /// A `let` binding's line.
    Binding(VarId, ExprId, usize),
    /// A finished line: `ind` spaces, `line`, `;` and a newline, added to `lines`.
    LineEnd(Buf, usize, Buf),
    /// The innermost scope is done.
    BodyEnd,
}

struct Printer<'a> {
    body: &'a Body,
    rope: Rope,
    tasks: Vec<Task>,
    names: VarNames,
    /// Next graph binding number.
    counter: usize,
    /// Per node, its binding number and the scope it is bound in (valid while that scope is
    /// open).
    bound: Vec<Option<(usize, usize)>>,
    /// Per scope ever opened, whether it still is.
    open: Vec<bool>,
    /// The open scopes, innermost last, with the buffer of their lines.
    scopes: Vec<(usize, Buf)>,
    /// The `let` values that something else uses too: written as a graph binding the `let`
    /// refers to, so that reading the text back shares them again.
    shared_let_value: Vec<bool>,
}

impl<'a> Printer<'a> {
    fn new(body: &'a Body) -> Self {
        Printer {
            body,
            // About a line of ~24 bytes a node: growing the store by doubling from nothing
            // copied it a few times over (a tenth of the printer's time at 100 000 nodes).
            rope: Rope {
                store: String::with_capacity(24 * body.len()),
                ..Rope::default()
            },
            tasks: Vec::new(),
            names: VarNames::with_count(body.var_count()),
            counter: 0,
            bound: vec![None; body.len()],
            open: Vec::new(),
            scopes: Vec::new(),
            shared_let_value: Vec::new(),
        }
    }

    /// Finds the `let` values used elsewhere too (one scan, only for a body with a `let`).
    fn mark_shared_let_values(&mut self, root: ExprId) {
        let body = self.body;
        let has_let = body.ids().any(|e| matches!(body.node(e), Node::Let { .. }));
        if !has_let {
            return;
        }
        let uses = body.use_counts(root);
        let mut shared = vec![false; body.len()];
        for e in body.ids() {
            if let Node::Let { bindings, .. } = body.node(e) {
                for &(_, value) in body.bindings(*bindings) {
                    shared[value.index()] |= uses[value.index()] > 1;
                }
            }
        }
        self.shared_let_value = shared;
    }

    fn lookup(&self, e: ExprId) -> Option<usize> {
        self.bound[e.index()].and_then(|(n, scope)| self.open[scope].then_some(n))
    }

    fn current_lines(&self) -> Buf {
        self.scopes
            .last()
            .expect("atoms are written inside a scope")
            .1
    }

    fn write_var(&mut self, v: VarId, dest: Buf) {
        let name = self.names.get(v.index(), &self.body.var(v).name);
        self.rope.push_str(dest, name);
    }

    /// `(params, attrs) -> ret {` and a newline.
    fn signature(&mut self, params: &[VarId], attrs: &Attrs, ret: Option<&Type>, dest: Buf) {
        self.rope.push_str(dest, "(");
        let mut first = true;
        for &p in params {
            if !first {
                self.rope.push_str(dest, ", ");
            }
            first = false;
            self.write_var(p, dest);
            if let Some(t) = &self.body.var(p).annotation {
                self.rope.write_with(dest, |out| {
                    let _ = write!(out, ": {t}");
                });
            }
        }
        self.rope
            .write_with(dest, |out| write_attrs(attrs, first, out));
        self.rope.push_str(dest, ")");
        if let Some(t) = ret {
            self.rope.write_with(dest, |out| {
                let _ = write!(out, " -> {t}");
            });
        }
        self.rope.push_str(dest, " {\n");
    }

    fn run(&mut self) {
        while let Some(task) = self.tasks.pop() {
            match task {
                Task::Lit(s, b) => self.rope.push_str(b, s),
                Task::Text(s, b) => self.rope.push_str(b, &s),
                Task::Pad(n, b) => self.rope.write_with(b, |out| pad(out, n)),
                Task::Atom(e, ind, dest) => self.atom(e, ind, dest),
                Task::AtomEnd {
                    e,
                    ind,
                    number,
                    line,
                    lines,
                    dest,
                } => {
                    let n = number.unwrap_or_else(|| {
                        self.counter += 1;
                        self.counter - 1
                    });
                    self.rope.write_with(lines, |out| {
                        pad(out, ind);
                        let _ = write!(out, "%{n} = ");
                    });
                    self.rope.splice(lines, line);
                    self.rope.push_str(lines, ";\n");
                    if let Some(&(scope, _)) = self.scopes.last() {
                        self.bound[e.index()] = Some((n, scope));
                    }
                    self.rope.write_with(dest, |out| {
                        let _ = write!(out, "%{n}");
                    });
                }
                Task::Inline(e, ind, dest) => self.inline(e, ind, dest),
                Task::Body(e, ind, dest) => {
                    let lines = self.rope.new_buf();
                    let result = self.rope.new_buf();
                    self.rope.push_buf(dest, lines);
                    self.rope.write_with(dest, |out| pad(out, ind));
                    self.rope.push_buf(dest, result);
                    self.scopes.push((self.open.len(), lines));
                    self.open.push(true);
                    self.tasks.push(Task::BodyStep(e, ind, result));
                }
                Task::BodyStep(cur, ind, result) => {
                    if let Some(n) = self.lookup(cur) {
                        self.rope.write_with(result, |out| {
                            let _ = write!(out, "%{n}");
                        });
                        self.tasks.push(Task::BodyEnd);
                        continue;
                    }
                    match self.body.node(cur) {
                        Node::Let { bindings, body } => {
                            self.tasks.push(Task::BodyStep(*body, ind, result));
                            for &(v, value) in self.body.bindings(*bindings).iter().rev() {
                                self.tasks.push(Task::Binding(v, value, ind));
                            }
                        }
                        _ => {
                            self.tasks.push(Task::BodyEnd);
                            self.tasks.push(Task::Inline(cur, ind, result));
                        }
                    }
                }
                Task::Binding(v, value, ind) => {
                    let line = self.rope.new_buf();
                    self.rope.push_str(line, "let ");
                    self.write_var(v, line);
                    if let Some(t) = &self.body.var(v).annotation {
                        self.rope.write_with(line, |out| {
                            let _ = write!(out, ": {t}");
                        });
                    }
                    self.rope.push_str(line, " = ");
                    let lines = self.current_lines();
                    self.tasks.push(Task::LineEnd(line, ind, lines));
                    if self.shared_let_value.get(value.index()) == Some(&true) {
                        self.tasks.push(Task::Atom(value, ind, line));
                    } else {
                        self.tasks.push(Task::Inline(value, ind, line));
                    }
                }
                Task::LineEnd(line, ind, lines) => {
                    self.rope.write_with(lines, |out| pad(out, ind));
                    self.rope.splice(lines, line);
                    self.rope.push_str(lines, ";\n");
                }
                Task::BodyEnd => {
                    if let Some((scope, _)) = self.scopes.pop() {
                        self.open[scope] = false;
                    }
                }
            }
        }
    }

    fn atom(&mut self, e: ExprId, ind: usize, dest: Buf) {
        let body = self.body;
        match body.node(e) {
            Node::Var(v) => return self.write_var(*v, dest),
            Node::Global(g) => {
                self.rope.push_str(dest, "@");
                return self.rope.push_str(dest, body.global(*g));
            }
            Node::Constant(k) => {
                return self
                    .rope
                    .write_with(dest, |out| write_constant(body.constant(*k), out));
            }
            _ => {}
        }
        if let Some(n) = self.lookup(e) {
            return self.rope.write_with(dest, |out| {
                let _ = write!(out, "%{n}");
            });
        }
        // A closure, `if` or block takes its number before its (nested) body's bindings, as
        // Relay prints them; other nodes after their operands'.
        let number = matches!(
            body.node(e),
            Node::Closure(_) | Node::If(..) | Node::Let { .. }
        )
        .then(|| {
            self.counter += 1;
            self.counter - 1
        });
        let line = self.rope.new_buf();
        let lines = self.current_lines();
        self.tasks.push(Task::AtomEnd {
            e,
            ind,
            number,
            line,
            lines,
            dest,
        });
        self.tasks.push(Task::Inline(e, ind, line));
    }

    /// Pushes the tasks that write `items` as atoms separated by `, ` (in reverse, so that
    /// they run in order).
    fn push_atoms(&mut self, items: &[ExprId], ind: usize, dest: Buf) {
        for (i, &a) in items.iter().enumerate().rev() {
            self.tasks.push(Task::Atom(a, ind, dest));
            if i > 0 {
                self.tasks.push(Task::Lit(", ", dest));
            }
        }
    }

    fn inline(&mut self, e: ExprId, ind: usize, dest: Buf) {
        let body = self.body;
        match body.node(e) {
            Node::Var(_) | Node::Global(_) | Node::Constant(_) => self.atom(e, ind, dest),
            Node::CallOp { sig, args } => {
                let Sig { op, attrs } = body.sig(*sig);
                self.rope.push_str(dest, op.name());
                self.rope.push_str(dest, "(");
                let args = body.list(*args);
                let mut tail = String::new();
                write_attrs(body.attrs(attrs), args.is_empty(), &mut tail);
                tail.push(')');
                self.tasks.push(Task::Text(tail, dest));
                self.push_atoms(args, ind, dest);
            }
            Node::Call { callee, args } => {
                self.tasks.push(Task::Lit(")", dest));
                self.push_atoms(body.list(*args), ind, dest);
                self.tasks.push(Task::Lit("(", dest));
                self.tasks.push(Task::Atom(*callee, ind, dest));
            }
            Node::Tuple(fields) => {
                let fields = body.list(*fields);
                self.rope.push_str(dest, "(");
                self.tasks
                    .push(Task::Lit(if fields.len() == 1 { ",)" } else { ")" }, dest));
                self.push_atoms(fields, ind, dest);
            }
            Node::Proj(t, i) => {
                self.tasks.push(Task::Text(format!(".{i}"), dest));
                self.tasks.push(Task::Atom(*t, ind, dest));
            }
            Node::If(c, t, o) => {
                self.rope.push_str(dest, "if (");
                self.tasks.push(Task::Lit("}", dest));
                self.tasks.push(Task::Pad(ind, dest));
                self.tasks.push(Task::Lit("\n", dest));
                self.tasks.push(Task::Body(*o, ind + 2, dest));
                self.tasks.push(Task::Lit("} else {\n", dest));
                self.tasks.push(Task::Pad(ind, dest));
                self.tasks.push(Task::Lit("\n", dest));
                self.tasks.push(Task::Body(*t, ind + 2, dest));
                self.tasks.push(Task::Lit(") {\n", dest));
                self.tasks.push(Task::Atom(*c, ind, dest));
            }
            Node::Closure(c) => {
                let data = body.closure(*c);
                self.rope.push_str(dest, "fn ");
                self.signature(&data.params, &data.attrs, data.ret_type.as_ref(), dest);
                self.tasks.push(Task::Lit("}", dest));
                self.tasks.push(Task::Pad(ind, dest));
                self.tasks.push(Task::Lit("\n", dest));
                self.tasks.push(Task::Body(data.body, ind + 2, dest));
            }
            Node::Let { .. } => {
                // A block in operand position prints as a block.
                self.rope.push_str(dest, "{\n");
                self.tasks.push(Task::Lit("}", dest));
                self.tasks.push(Task::Pad(ind, dest));
                self.tasks.push(Task::Lit("\n", dest));
                self.tasks.push(Task::Body(e, ind + 2, dest));
            }
        }
    }
}
