//! Solving what the scan left pending: operator relations and projections, as soon as their
//! operand types are known, until nothing moves.

use super::FunctionInput;
use super::terms::{Infer, Pending, Proj, Term};
use crate::Type;

impl Infer {
    pub(super) fn try_relation(&mut self, p: &Pending, functions: &[FunctionInput<'_>]) -> bool {
        let mut types = Vec::with_capacity(p.args.len());
        for &a in &p.args {
            match self.concrete(a) {
                Some(id) => types.push(self.table.get(id).clone()),
                None => return false,
            }
        }
        let attrs = functions[p.function].body.attrs(p.attrs);
        match p.op.infer(&types, attrs) {
            Ok(t) => match self.intern(t) {
                Some(id) => {
                    let t = self.known(id);
                    self.unify(p.out, t, p.span, || {
                        format!("the result of `{}`", p.op.name())
                    });
                }
                None => self.deep(p.span),
            },
            Err(msg) => self.problem(msg, p.span),
        }
        true
    }

    pub(super) fn try_proj(&mut self, p: &Proj) -> bool {
        let head = self.find(p.tuple);
        let field = match self.terms[head as usize] {
            Term::Var => return false,
            Term::Tuple { start, len } => Ok(self
                .items(start, len)
                .get(p.index as usize)
                .copied()
                .ok_or(len as usize)),
            Term::Known(id) => match self.table.get(id) {
                Type::Tuple(fields) => match fields.get(p.index as usize).cloned() {
                    Some(f) => Ok(Ok(self.lift(&f))),
                    None => Ok(Err(fields.len())),
                },
                _ => Err(()),
            },
            Term::Func { .. } => Err(()),
        };
        match field {
            Ok(Ok(f)) => {
                self.unify(p.out, f, p.span, || "the projected field".to_string());
            }
            Ok(Err(len)) => self.problem(
                format!(
                    "field {} of a tuple of {len} fields does not exist",
                    p.index
                ),
                p.span,
            ),
            Err(()) => {
                let shown = self.show(head);
                self.problem(
                    format!(
                        "`.{}` projects a tuple field, but the value has type `{shown}`",
                        p.index
                    ),
                    p.span,
                );
            }
        }
        true
    }

    pub(super) fn solve(&mut self, functions: &[FunctionInput<'_>]) {
        loop {
            let mut progress = false;
            for p in std::mem::take(&mut self.pending) {
                if self.try_relation(&p, functions) {
                    progress = true;
                } else {
                    self.pending.push(p);
                }
            }
            for p in std::mem::take(&mut self.projs) {
                if self.try_proj(&p) {
                    progress = true;
                } else {
                    self.projs.push(p);
                }
            }
            if !progress {
                break;
            }
        }
        for p in std::mem::take(&mut self.pending) {
            self.problem(
                format!(
                    "cannot infer the argument types of `{}`: annotate the variables involved",
                    p.op.name()
                ),
                p.span,
            );
        }
        for p in std::mem::take(&mut self.projs) {
            self.problem(
                "cannot infer the type of the tuple projected here: annotate it".to_string(),
                p.span,
            );
        }
    }
}
