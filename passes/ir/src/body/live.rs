//! Analyses of a body that passes share: which bindings are live.

use super::index::Idx;
use super::node::{Body, ExprId, Node};

/// Which variables a value reachable from `root` uses, following `let` blocks backwards: a
/// binding counts only if its variable is used by something that counts (its own value's
/// uses of it do not, so an unused recursive closure is dead). One walk with an explicit
/// stack; each node is looked at once.
///
/// ```
/// use irpass_ir::Module;
/// use irpass_ir::body::live_vars;
/// let m = Module::parse("def @main(%x: float32) { let %a = exp(%x); let %b = log(%a); %x }").unwrap();
/// let a = &m.get("main").unwrap().code;
/// let live = live_vars(&a.body, a.root);
/// assert_eq!(live.iter().filter(|&&l| l).count(), 1); // only %x
/// ```
pub fn live_vars(body: &Body, root: ExprId) -> Vec<bool> {
    enum Task {
        Visit(ExprId),
        /// Binding `i` of the pool: walk its value if its variable is live.
        Decide(usize),
    }
    let mut seen = vec![false; body.len()];
    let mut live = vec![false; body.var_count()];
    let mut tasks = vec![Task::Visit(root)];
    while let Some(task) = tasks.pop() {
        let id = match task {
            Task::Decide(i) => {
                let (v, value) = body.bindings[i];
                if live[v.index()] {
                    tasks.push(Task::Visit(value));
                }
                continue;
            }
            Task::Visit(id) => id,
        };
        if std::mem::replace(&mut seen[id.index()], true) {
            continue;
        }
        match body.node(id) {
            Node::Var(v) => live[v.index()] = true,
            Node::Let {
                bindings,
                body: result,
            } => {
                // The result first, then the bindings from the last: every use of a binding's
                // variable is walked before the binding is decided.
                for i in bindings.range() {
                    tasks.push(Task::Decide(i));
                }
                tasks.push(Task::Visit(*result));
            }
            _ => body.for_each_operand(id, |o| tasks.push(Task::Visit(o))),
        }
    }
    live
}
