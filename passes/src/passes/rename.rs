//! Copying expressions with substituted and fresh variables (for inlining and lifting).

use irpass_ir::visit::{Memo, Mutator, rebuild_children};
use irpass_ir::{Expr, ExprKind, Function, Var, VarMap};

/// A mutator that replaces variables by expressions (`subst`) and, when `fresh` is set, gives
/// every variable bound inside a new identity, so the copy can live beside the original.
pub struct Renamer {
    /// Variable id to its replacement.
    pub subst: VarMap<Expr>,
    /// Whether bound variables get fresh copies.
    pub fresh: bool,
    memo: Memo,
}

impl Renamer {
    /// A renamer with these substitutions.
    pub fn new(subst: VarMap<Expr>, fresh: bool) -> Renamer {
        Renamer {
            subst,
            fresh,
            memo: Memo::default(),
        }
    }

    fn rebind(&mut self, v: &Var) -> Var {
        if !self.fresh {
            return v.clone();
        }
        let nv = Var::new(v.name.clone(), v.annotation.clone());
        self.subst.insert(v.id(), Expr::var(&nv));
        nv
    }

    /// The function with its parameters and body renamed.
    pub fn function(&mut self, f: &Function) -> Function {
        let params: Vec<Var> = f.params.iter().map(|p| self.rebind(p)).collect();
        let body = self.mutate(&f.body);
        Function::new(params, f.ret_type.clone(), body, f.attrs.clone())
    }
}

impl Mutator for Renamer {
    fn memo(&mut self) -> &mut Memo {
        &mut self.memo
    }

    fn rebuild(&mut self, e: &Expr) -> Expr {
        match &e.kind {
            ExprKind::Let(bindings, body) if self.fresh => {
                let bindings = bindings
                    .iter()
                    .map(|(v, value)| {
                        let nv = self.rebind(v);
                        (nv, self.mutate(value))
                    })
                    .collect();
                let body = self.mutate(body);
                Expr::lets_with_span(bindings, body, e.span)
            }
            ExprKind::Function(f) if self.fresh => Expr::function(self.function(f)),
            _ => rebuild_children(self, e),
        }
    }

    fn rewrite(&mut self, e: Expr) -> Expr {
        match &e.kind {
            ExprKind::Var(v) => self.subst.get(&v.id()).cloned().unwrap_or(e),
            _ => e,
        }
    }
}
