//! The printer: modules and expressions in the text format. Every non-atomic node is bound
//! once (`%0 = ...;`) and referred to by name, so shared nodes print once and the text reads
//! back as the same DAG.

use rustc_hash::{FxHashMap, FxHashSet};
use std::fmt::Write as _;
use std::rc::Rc;

use super::expr::with_stack;
use super::{Attrs, Callee, DType, Expr, ExprKind, Tensor, TensorType, Type, Var, VarNode};
use crate::expr::Function;
use crate::module::Module;

/// The text of a module.
pub fn module_text(m: &Module) -> String {
    let mut out = String::from("#[version = \"0.0.5\"]\n");
    for (i, (name, f)) in m.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let mut p = Printer::default();
        out.push_str(&format!("def @{name}"));
        out.push_str(&with_stack(|| p.function_text(f, 0)));
        out.push('\n');
    }
    out
}

/// The text of one function (`fn (...) { ... }`).
pub fn function_text(f: &Function) -> String {
    let mut p = Printer::default();
    format!("fn {}", with_stack(|| p.function_text(f, 0)))
}

/// The text of an expression (its bindings first, free variables declared).
pub fn expr_text(e: &Expr) -> String {
    let mut p = Printer::default();
    let mut free = Vec::new();
    super::visit::free_vars(e, &mut free);
    let mut out = String::new();
    for v in &free {
        let name = p.var_name(v);
        match &v.annotation {
            Some(t) => writeln!(out, "free_var {name}: {t};").ok(),
            None => writeln!(out, "free_var {name};").ok(),
        };
    }
    out.push_str(&with_stack(|| p.body(e, 0)));
    out
}

#[derive(Default)]
struct Printer {
    /// Printed names of variables (`%x`), by variable id.
    names: VarNames<u64>,
    /// The text of each tensor type written so far.
    type_texts: FxHashMap<TensorType, Box<str>>,
    /// Next graph binding number.
    counter: usize,
    /// Numbers of bound nodes, per open scope (innermost last).
    memo: Vec<FxHashMap<usize, usize>>,
    /// Binding lines of the open scopes, already indented.
    scopes: Vec<String>,
}

/// The printed names of variables: `%` and the name as written, made of letters, digits and
/// `_` (a name of digits only gets a `v` in front, as `%0` would read as a graph binding), with
/// a numeric suffix when another variable has it already. One per printed function.
pub(crate) struct VarNames<K> {
    names: FxHashMap<K, Rc<str>>,
    /// The names given so far.
    used: FxHashSet<Rc<str>>,
    /// Per name as written, the suffix to try next when it is taken: every suffix below it
    /// was taken when tried (so the thousandth `%y` does not try the 999 before it).
    next_suffix: FxHashMap<String, usize>,
}

impl<K> Default for VarNames<K> {
    fn default() -> Self {
        VarNames {
            names: FxHashMap::default(),
            used: FxHashSet::default(),
            next_suffix: FxHashMap::default(),
        }
    }
}

impl<K: std::hash::Hash + Eq + Copy> VarNames<K> {
    /// The printed name of the variable `key`, written `raw`, given now if it has none.
    pub(crate) fn get(&mut self, key: K, raw: &str) -> &Rc<str> {
        if !self.names.contains_key(&key) {
            let name = self.fresh(raw);
            self.names.insert(key, name);
        }
        &self.names[&key]
    }

    fn fresh(&mut self, raw: &str) -> Rc<str> {
        let mut name = String::with_capacity(raw.len() + 4);
        name.push('%');
        name.extend(raw.chars().map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        }));
        if name[1..].bytes().all(|b| b.is_ascii_digit()) {
            name.insert(1, 'v');
        }
        if self.used.contains(name.as_str()) {
            let base = name.clone();
            let mut k = self.next_suffix.get(&base).copied().unwrap_or(1);
            loop {
                name.truncate(base.len());
                let _ = write!(name, "{k}");
                k += 1;
                if !self.used.contains(name.as_str()) {
                    break;
                }
            }
            self.next_suffix.insert(base, k);
        }
        let name: Rc<str> = name.into();
        self.used.insert(name.clone());
        name
    }
}

pub(crate) fn pad(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

impl Printer {
    fn var_name(&mut self, v: &Var) -> Rc<str> {
        self.names.get(v.id(), &v.name).clone()
    }

    /// Writes `t`; a tensor type's text is made once per distinct type (a model writes a few
    /// types on thousands of parameters).
    fn write_type(&mut self, t: &Type, out: &mut String) {
        let Type::Tensor(tt) = t else {
            let _ = write!(out, "{t}");
            return;
        };
        if let Some(text) = self.type_texts.get(&**tt) {
            out.push_str(text);
            return;
        }
        let text = tt.to_string();
        out.push_str(&text);
        self.type_texts.insert((**tt).clone(), text.into());
    }

    fn write_var(&mut self, v: &VarNode, out: &mut String) {
        out.push_str(self.names.get(v.id(), &v.name));
    }

    fn param_list(&mut self, params: &[Var], attrs: &Attrs, out: &mut String) {
        let mut first = true;
        for p in params {
            if !first {
                out.push_str(", ");
            }
            first = false;
            self.write_var(p, out);
            if let Some(t) = &p.annotation {
                out.push_str(": ");
                self.write_type(t, out);
            }
        }
        for (k, v) in attrs.iter() {
            if !first {
                out.push_str(", ");
            }
            first = false;
            let _ = write!(out, "{k}={v}");
        }
    }

    /// `(params) -> ret {\n body \n}` at indentation `ind`.
    fn function_text(&mut self, f: &Function, ind: usize) -> String {
        let mut out = String::new();
        self.function_into(f, ind, &mut out);
        out
    }

    fn function_into(&mut self, f: &Function, ind: usize, out: &mut String) {
        out.push('(');
        self.param_list(&f.params, &f.attrs, out);
        out.push(')');
        if let Some(t) = &f.ret_type {
            out.push_str(" -> ");
            self.write_type(t, out);
        }
        out.push_str(" {\n");
        self.body_into(&f.body, ind + 2, out);
        out.push('\n');
        pad(out, ind);
        out.push('}');
    }

    /// A body as text (see [`Printer::body_into`]).
    fn body(&mut self, e: &Expr, ind: usize) -> String {
        let mut out = String::new();
        self.body_into(e, ind, &mut out);
        out
    }

    /// A body: its bindings and final expression, each line indented by `ind`.
    fn body_into(&mut self, e: &Expr, ind: usize, out: &mut String) {
        self.memo.push(FxHashMap::default());
        self.scopes.push(String::new());
        let mut result = String::new();
        let mut cur = e.clone();
        loop {
            if let Some(n) = self.lookup(&cur) {
                let _ = write!(result, "%{n}");
                break;
            }
            match &cur.kind {
                ExprKind::Let(bindings, body) => {
                    for (v, value) in bindings {
                        let mut line = String::from("let ");
                        self.write_var(v, &mut line);
                        if let Some(t) = &v.annotation {
                            line.push_str(": ");
                            self.write_type(t, &mut line);
                        }
                        line.push_str(" = ");
                        self.inline(value, ind, &mut line);
                        line.push(';');
                        self.push_line(ind, &line);
                    }
                    cur = body.clone();
                }
                _ => {
                    self.inline(&cur, ind, &mut result);
                    break;
                }
            }
        }
        let lines = self.scopes.pop().unwrap_or_default();
        self.memo.pop();
        out.push_str(&lines);
        pad(out, ind);
        out.push_str(&result);
    }

    fn push_line(&mut self, ind: usize, line: &str) {
        if let Some(buf) = self.scopes.last_mut() {
            pad(buf, ind);
            buf.push_str(line);
            buf.push('\n');
        }
    }

    fn lookup(&self, e: &Expr) -> Option<usize> {
        let key = e.addr();
        self.memo.iter().rev().find_map(|m| m.get(&key).copied())
    }

    /// Writes how `e` is referred to: atoms inline, anything else bound once in the current
    /// scope (`%n = ...;`) and referred to by number.
    fn atom(&mut self, e: &Expr, ind: usize, out: &mut String) {
        match &e.kind {
            ExprKind::Var(v) => self.write_var(v, out),
            ExprKind::GlobalVar(name) => {
                out.push('@');
                out.push_str(name);
            }
            ExprKind::Constant(t) => write_constant(t, out),
            _ => {
                if let Some(n) = self.lookup(e) {
                    let _ = write!(out, "%{n}");
                    return;
                }
                // A closure or `if` takes its number before its (nested) body's bindings, as
                // Relay prints them; other nodes after their operands'.
                let early = matches!(
                    e.kind,
                    ExprKind::Function(_) | ExprKind::If(..) | ExprKind::Let(..)
                );
                let mut n = usize::MAX;
                if early {
                    n = self.counter;
                    self.counter += 1;
                }
                let mut line = String::new();
                with_stack(|| self.inline(e, ind, &mut line));
                if !early {
                    n = self.counter;
                    self.counter += 1;
                }
                let mut full = String::with_capacity(line.len() + 8);
                let _ = write!(full, "%{n} = {line};");
                self.push_line(ind, &full);
                if let Some(m) = self.memo.last_mut() {
                    m.insert(e.addr(), n);
                }
                let _ = write!(out, "%{n}");
            }
        }
    }

    /// Writes the text of `e` itself, its operands as atoms.
    fn inline(&mut self, e: &Expr, ind: usize, out: &mut String) {
        match &e.kind {
            ExprKind::Var(_) | ExprKind::GlobalVar(_) | ExprKind::Constant(_) => {
                self.atom(e, ind, out)
            }
            ExprKind::Call(call) => {
                match &call.callee {
                    Callee::Op(op) => out.push_str(op.name()),
                    Callee::Expr(f) => self.atom(f, ind, out),
                }
                out.push('(');
                let mut first = true;
                for a in &call.args {
                    if !first {
                        out.push_str(", ");
                    }
                    first = false;
                    self.atom(a, ind, out);
                }
                for (k, v) in call.attrs.iter() {
                    if !first {
                        out.push_str(", ");
                    }
                    first = false;
                    let _ = write!(out, "{k}={v}");
                }
                out.push(')');
            }
            ExprKind::Tuple(fields) => {
                out.push('(');
                for (i, f) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.atom(f, ind, out);
                }
                if fields.len() == 1 {
                    out.push(',');
                }
                out.push(')');
            }
            ExprKind::TupleGetItem(t, i) => {
                self.atom(t, ind, out);
                let _ = write!(out, ".{i}");
            }
            ExprKind::If(c, t, o) => {
                out.push_str("if (");
                self.atom(c, ind, out);
                out.push_str(") {\n");
                self.body_into(t, ind + 2, out);
                out.push('\n');
                pad(out, ind);
                out.push_str("} else {\n");
                self.body_into(o, ind + 2, out);
                out.push('\n');
                pad(out, ind);
                out.push('}');
            }
            ExprKind::Function(f) => {
                out.push_str("fn ");
                self.function_into(f, ind, out);
            }
            ExprKind::Let(..) => {
                // A `let` in operand position prints as a block.
                out.push_str("{\n");
                self.body_into(e, ind + 2, out);
                out.push('\n');
                pad(out, ind);
                out.push('}');
            }
        }
    }
}

/// A constant: scalars as literals (`1f`, `3`, `2i64`, `True`), others as tensor literals.
pub fn constant_text(t: &Tensor) -> String {
    let mut out = String::new();
    write_constant(t, &mut out);
    out
}

/// Appends [`constant_text`]`(t)` to `out`.
pub(crate) fn write_constant(t: &Tensor, out: &mut String) {
    if !t.shape().is_empty() {
        return t.write_literal(out);
    }
    let v = t.element_text(0);
    let finite = t.scalar_value().is_none_or(f64::is_finite);
    let suffix = match t.dtype() {
        DType::Float32 => "f",
        DType::Float16 => "f16",
        DType::Float64 => "f64",
        DType::Int8 => "i8",
        DType::Int16 => "i16",
        DType::Int32 => "",
        DType::Int64 => "i64",
        DType::UInt8 => "u8",
        DType::Bool => return out.push_str(&v),
    };
    if finite {
        out.push_str(&v);
        out.push_str(suffix);
    } else {
        let _ = write!(out, "{}{{{v}}}", t.dtype());
    }
}
