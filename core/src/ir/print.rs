//! The printer: modules and expressions in the text format. Every non-atomic node is bound
//! once (`%0 = ...;`) and referred to by name, so shared nodes print once and the text reads
//! back as the same DAG.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use super::expr::with_stack;
use super::tensor::float_text_for;
use super::{Attrs, Callee, DType, Expr, ExprKind, Function, Module, Tensor, Var};

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
    /// Printed names of variables.
    var_names: HashMap<u64, String>,
    used: HashSet<String>,
    /// Next graph binding number.
    counter: usize,
    /// Names of bound nodes, per open scope (innermost last).
    memo: Vec<HashMap<usize, String>>,
    /// Binding lines of the open scopes.
    lines: Vec<Vec<String>>,
}

fn indent(n: usize) -> String {
    " ".repeat(n)
}

impl Printer {
    fn var_name(&mut self, v: &Var) -> String {
        if let Some(n) = self.var_names.get(&v.id()) {
            return n.clone();
        }
        let base: String = v
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let base = if base.is_empty() || base.chars().all(|c| c.is_ascii_digit()) {
            format!("v{base}")
        } else {
            base
        };
        let mut name = base.clone();
        let mut k = 1;
        while self.used.contains(&name) {
            name = format!("{base}{k}");
            k += 1;
        }
        self.used.insert(name.clone());
        let printed = format!("%{name}");
        self.var_names.insert(v.id(), printed.clone());
        printed
    }

    fn param_list(&mut self, params: &[Var], attrs: &Attrs) -> String {
        let mut parts: Vec<String> = params
            .iter()
            .map(|p| {
                let name = self.var_name(p);
                match &p.annotation {
                    Some(t) => format!("{name}: {t}"),
                    None => name,
                }
            })
            .collect();
        parts.extend(attrs.iter().map(|(k, v)| format!("{k}={v}")));
        parts.join(", ")
    }

    /// `(params) -> ret {\n body \n}` at indentation `ind`.
    fn function_text(&mut self, f: &Function, ind: usize) -> String {
        let params = self.param_list(&f.params, &f.attrs);
        let ret = f
            .ret_type
            .as_ref()
            .map(|t| format!(" -> {t}"))
            .unwrap_or_default();
        let body = self.body(&f.body, ind + 2);
        format!("({params}){ret} {{\n{body}\n{}}}", indent(ind))
    }

    /// A body: its bindings and final expression, each line indented by `ind`.
    fn body(&mut self, e: &Expr, ind: usize) -> String {
        self.memo.push(HashMap::new());
        self.lines.push(Vec::new());
        let mut cur = e.clone();
        let result = loop {
            if let Some(name) = self.lookup(&cur) {
                break name;
            }
            match &cur.kind {
                ExprKind::Let(v, value, body) => {
                    let value_text = self.inline(value, ind);
                    let name = self.var_name(v);
                    let line = match &v.annotation {
                        Some(t) => format!("let {name}: {t} = {value_text};"),
                        None => format!("let {name} = {value_text};"),
                    };
                    self.push_line(line);
                    cur = body.clone();
                }
                _ => break self.inline(&cur, ind),
            }
        };
        let lines = self.lines.pop().unwrap_or_default();
        self.memo.pop();
        let pad = indent(ind);
        let mut out = String::new();
        for l in lines {
            out.push_str(&pad);
            out.push_str(&l);
            out.push('\n');
        }
        out.push_str(&pad);
        out.push_str(&result);
        out
    }

    fn push_line(&mut self, line: String) {
        if let Some(l) = self.lines.last_mut() {
            l.push(line);
        }
    }

    fn lookup(&self, e: &Expr) -> Option<String> {
        let key = e.addr();
        self.memo.iter().rev().find_map(|m| m.get(&key).cloned())
    }

    /// How `e` is referred to: atoms inline, anything else bound once in the current scope.
    fn atom(&mut self, e: &Expr, ind: usize) -> String {
        match &e.kind {
            ExprKind::Var(v) => self.var_name(v),
            ExprKind::GlobalVar(name) => format!("@{name}"),
            ExprKind::Constant(t) => constant_text(t),
            _ => {
                if let Some(name) = self.lookup(e) {
                    return name;
                }
                // A closure or `if` takes its number before its (nested) body's bindings, as
                // Relay prints them; other nodes after their operands'.
                let early = matches!(
                    e.kind,
                    ExprKind::Function(_) | ExprKind::If(..) | ExprKind::Let(..)
                );
                let mut name = String::new();
                if early {
                    name = format!("%{}", self.counter);
                    self.counter += 1;
                }
                let text = with_stack(|| self.inline(e, ind));
                if !early {
                    name = format!("%{}", self.counter);
                    self.counter += 1;
                }
                self.push_line(format!("{name} = {text};"));
                if let Some(m) = self.memo.last_mut() {
                    m.insert(e.addr(), name.clone());
                }
                name
            }
        }
    }

    /// The text of `e` itself, its operands as atoms.
    fn inline(&mut self, e: &Expr, ind: usize) -> String {
        match &e.kind {
            ExprKind::Var(_) | ExprKind::GlobalVar(_) | ExprKind::Constant(_) => self.atom(e, ind),
            ExprKind::Call(call) => {
                let callee = match &call.callee {
                    Callee::Op(op) => op.name().to_string(),
                    Callee::Expr(f) => self.atom(f, ind),
                };
                let mut parts: Vec<String> = call.args.iter().map(|a| self.atom(a, ind)).collect();
                parts.extend(call.attrs.iter().map(|(k, v)| format!("{k}={v}")));
                format!("{callee}({})", parts.join(", "))
            }
            ExprKind::Tuple(fields) => {
                let parts: Vec<String> = fields.iter().map(|f| self.atom(f, ind)).collect();
                if parts.len() == 1 {
                    format!("({},)", parts[0])
                } else {
                    format!("({})", parts.join(", "))
                }
            }
            ExprKind::TupleGetItem(t, i) => format!("{}.{i}", self.atom(t, ind)),
            ExprKind::If(c, t, o) => {
                let cond = self.atom(c, ind);
                let then = self.body(t, ind + 2);
                let other = self.body(o, ind + 2);
                let pad = indent(ind);
                format!("if ({cond}) {{\n{then}\n{pad}}} else {{\n{other}\n{pad}}}")
            }
            ExprKind::Function(f) => format!("fn {}", self.function_text(f, ind)),
            ExprKind::Let(..) => {
                // A `let` in operand position: print it as a nested body in a block-free way
                // by binding its value and continuing (Relay prints it the same way).
                let text = self.body(e, ind + 2);
                format!("{{\n{text}\n{}}}", indent(ind))
            }
        }
    }
}

/// A constant: scalars as literals (`1f`, `3`, `2i64`, `True`), others as tensor literals.
pub fn constant_text(t: &Tensor) -> String {
    if t.shape().is_empty() {
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
            DType::Bool => return v,
        };
        if finite {
            return format!("{v}{suffix}");
        }
        return format!("{}{{{v}}}", t.dtype());
    }
    let _ = float_text_for;
    t.to_string()
}
