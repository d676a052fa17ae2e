//! Well-formedness: every variable bound once and used only in its scope; every global exists.

use std::collections::HashSet;

use super::error::{ErrorKind, IrError, Problem};
use super::expr::with_stack;
use super::{Expr, ExprKind};
use crate::expr::Function;
use crate::module::Module;

/// Checks every function of `m`.
pub fn check_module(m: &Module) -> Result<(), IrError> {
    let mut problems = Vec::new();
    for (name, f) in m.iter() {
        let mut c = Checker {
            module: m,
            scope: HashSet::new(),
            defined: HashSet::new(),
            problems: &mut problems,
            visited: HashSet::new(),
            reported: HashSet::new(),
        };
        c.function(f);
        if let Some(p) = problems.last_mut() {
            if !p.message.contains(" in `@") {
                p.message = format!("{} in `@{name}`", p.message);
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(IrError {
            kind: ErrorKind::WellFormed,
            problems,
            source: m.source().cloned(),
        })
    }
}

struct Checker<'a> {
    module: &'a Module,
    scope: HashSet<u64>,
    defined: HashSet<u64>,
    problems: &'a mut Vec<Problem>,
    visited: HashSet<usize>,
    reported: HashSet<u64>,
}

impl Checker<'_> {
    fn problem(&mut self, message: String, span: Option<super::Span>) {
        if self.problems.len() < 20 {
            self.problems.push(Problem {
                message,
                span,
                note: None,
            });
        }
    }

    fn define(&mut self, v: &super::Var) {
        if !self.defined.insert(v.id()) {
            self.problem(format!("`%{}` is bound twice", v.name), v.span());
        }
        self.scope.insert(v.id());
    }

    fn function(&mut self, f: &Function) {
        for p in &f.params {
            self.define(p);
        }
        self.expr(&f.body, f.span);
        for p in &f.params {
            self.scope.remove(&p.id());
        }
    }

    /// Checks `e`, used by a node written at `at`. A variable is one node however often it is
    /// used, so it is checked at every use, and a problem is reported at the first use.
    fn expr(&mut self, e: &Expr, at: Option<super::Span>) {
        if let ExprKind::Var(v) = &e.kind {
            if !self.scope.contains(&v.id()) && self.reported.insert(v.id()) {
                let msg = if self.defined.contains(&v.id()) {
                    format!("`%{}` is used outside the scope of its binding", v.name)
                } else {
                    format!("`%{}` is not bound (a free variable)", v.name)
                };
                self.problem(msg, at.or(e.span));
            }
            return;
        }
        if !self.visited.insert(e.addr()) {
            return;
        }
        with_stack(|| match &e.kind {
            ExprKind::Var(_) => {}
            ExprKind::GlobalVar(n) => {
                if self.module.get(n).is_none() {
                    self.problem(format!("`@{n}` is not defined in the module"), e.span);
                }
            }
            ExprKind::Let(bindings, body) => {
                for (v, value) in bindings {
                    self.define(v);
                    self.expr(value, v.span().or(e.span));
                }
                self.expr(body, e.span);
                for (v, _) in bindings {
                    self.scope.remove(&v.id());
                }
            }
            ExprKind::Function(f) => self.function(f),
            _ => {
                for c in e.children() {
                    self.expr(c, e.span);
                }
            }
        })
    }
}
