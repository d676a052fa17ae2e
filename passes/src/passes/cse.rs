//! `EliminateCommonSubexpr`.

use std::collections::HashMap;

use irpass::ir::visit::{Memo, Mutator};
use irpass::ir::{Attrs, Callee, Expr, ExprKind, Function, Module, Var};
use irpass::{PassContext, function_pass, pass_config_option};

pass_config_option! {
    /// When true, `EliminateCommonSubexpr` merges only calls (not tuples, projections or
    /// constants).
    pub CSE_CALLS_ONLY: bool = "relay.EliminateCommonSubexpr.calls_only";
}

/// Merges structurally identical expressions into one shared node: calls of the same operator
/// with the same attributes on the same arguments (calls that differ in an attribute stay
/// apart), tuples, projections, equal constants, and references to the same variable. A `let`
/// whose value is already bound by an earlier `let` (or is a variable) is dropped and its
/// variable replaced by the earlier one. One linear pass, bottom-up: once the arguments are
/// merged, equal calls have identical keys.
#[function_pass(opt_level = 3, name = "EliminateCommonSubexpr", required = [crate::InferType])]
pub fn eliminate_common_subexpr(func: Function, _module: &Module, ctx: &PassContext) -> Function {
    let calls_only = ctx.get(&CSE_CALLS_ONLY).copied().unwrap_or(false);
    let mut cse = Cse {
        calls_only,
        table: HashMap::new(),
        consts: HashMap::new(),
        vars: HashMap::new(),
        bound: HashMap::new(),
        memo: Memo::default(),
    };
    cse.mutate_function(&func)
}

#[derive(PartialEq, Eq, Hash)]
enum Key {
    Call(Callee2, Attrs, Vec<usize>),
    Tuple(Vec<usize>),
    Get(usize, usize),
}

#[derive(PartialEq, Eq, Hash)]
enum Callee2 {
    Op(&'static str),
    Expr(usize),
}

struct Cse {
    calls_only: bool,
    table: HashMap<Key, Expr>,
    consts: HashMap<u64, Vec<Expr>>,
    vars: HashMap<u64, Expr>,
    /// Value node (address) to the variable of the `let` that binds it.
    bound: HashMap<usize, Expr>,
    memo: Memo,
}

impl Mutator for Cse {
    fn memo(&mut self) -> &mut Memo {
        &mut self.memo
    }

    fn visit_let(&mut self, var: &Var, value: Expr) -> Option<Expr> {
        let earlier = match &value.kind {
            ExprKind::Var(_) => Some(value.clone()),
            _ => self.bound.get(&value.addr()).cloned(),
        };
        if let Some(earlier) = earlier {
            // The variable means the earlier one: later references to it are rewritten.
            self.vars.insert(var.id(), earlier);
            return None;
        }
        // The canonical reference node of the variable (not through `mutate`: a temporary node
        // would leave a memo entry under an address the allocator can reuse).
        let var_ref = self
            .vars
            .entry(var.id())
            .or_insert_with(|| Expr::var(var))
            .clone();
        self.bound.insert(value.addr(), var_ref);
        Some(value)
    }

    fn rewrite(&mut self, e: Expr) -> Expr {
        let key = match &e.kind {
            // References to one variable become one node (so calls on it compare equal).
            ExprKind::Var(v) => return self.vars.entry(v.id()).or_insert(e).clone(),
            ExprKind::Constant(t) if !self.calls_only => {
                use std::hash::Hasher;
                let mut h = rustc_hash::FxHasher::default();
                t.hash_bits(&mut h);
                let bucket = self.consts.entry(h.finish()).or_default();
                return match bucket
                    .iter()
                    .find(|c| matches!(&c.kind, ExprKind::Constant(u) if u.bit_eq(t)))
                {
                    Some(c) => c.clone(),
                    None => {
                        bucket.push(e.clone());
                        e
                    }
                };
            }
            ExprKind::Call(call) => {
                let callee = match &call.callee {
                    Callee::Op(op) => Callee2::Op(op.name()),
                    Callee::Expr(f) => Callee2::Expr(f.addr()),
                };
                Key::Call(
                    callee,
                    call.attrs.clone(),
                    call.args.iter().map(Expr::addr).collect(),
                )
            }
            ExprKind::Tuple(fields) if !self.calls_only => {
                Key::Tuple(fields.iter().map(Expr::addr).collect())
            }
            ExprKind::TupleGetItem(t, i) if !self.calls_only => Key::Get(t.addr(), *i),
            _ => return e,
        };
        self.table.entry(key).or_insert(e).clone()
    }
}
