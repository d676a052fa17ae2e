//! Graphviz output: each function's dataflow as a cluster of a `digraph`.

use std::fmt::Write as _;

use rustc_hash::FxHashMap;

use super::visit::post_order;
use super::{Callee, ExprKind, constant_text};
use crate::module::Module;

/// The module as a Graphviz `digraph`: one cluster per function, a node per expression (shared
/// nodes once), an edge from each operand to its user.
pub fn module_dot(m: &Module) -> String {
    let mut out = String::from("digraph module {\n  node [shape=box, fontname=monospace];\n");
    let mut next = 0usize;
    for (name, f) in m.iter() {
        let _ = writeln!(
            out,
            "  subgraph \"cluster_{name}\" {{\n    label=\"@{name}\";"
        );
        let mut ids: FxHashMap<usize, usize> = FxHashMap::default();
        post_order(&f.body, &mut |e| {
            let id = next;
            next += 1;
            ids.insert(e.addr(), id);
            let label = match &e.kind {
                ExprKind::Var(v) => format!("%{}", v.name),
                ExprKind::GlobalVar(g) => format!("@{g}"),
                ExprKind::Constant(t) if t.len() <= 4 => constant_text(t),
                ExprKind::Constant(t) => format!("const {}", t.tensor_type()),
                ExprKind::Call(c) => match &c.callee {
                    Callee::Op(op) => op.name().to_string(),
                    Callee::Expr(_) => "call".to_string(),
                },
                ExprKind::Let(bindings, _) => {
                    let names: Vec<String> = bindings
                        .iter()
                        .map(|(v, _)| format!("%{}", v.name))
                        .collect();
                    format!("let {}", names.join(", "))
                }
                ExprKind::Tuple(_) => "tuple".to_string(),
                ExprKind::TupleGetItem(_, i) => format!(".{i}"),
                ExprKind::If(..) => "if".to_string(),
                ExprKind::Function(f) if f.has_attr("Primitive") => "fn (primitive)".to_string(),
                ExprKind::Function(_) => "fn".to_string(),
            };
            let label = label.replace('\\', "\\\\").replace('"', "\\\"");
            let _ = writeln!(out, "    n{id} [label=\"{label}\"];");
            for c in e.children() {
                if let Some(cid) = ids.get(&c.addr()) {
                    let _ = writeln!(out, "    n{cid} -> n{id};");
                }
            }
        });
        out.push_str("  }\n");
    }
    out.push_str("}\n");
    out
}
