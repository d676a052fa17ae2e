//! Graphviz output of modules: each function's dataflow as a cluster of a `digraph`.

use std::fmt::Write as _;

use crate::body::{Idx, Node};
use crate::{Module, constant_text};

/// The module as a Graphviz `digraph`: one cluster per function, a node per reachable
/// expression (a shared one once), an edge from each operand to its user.
///
/// ```
/// use irpass_ir::{Module, module_dot};
/// let m = Module::parse("def @main(%x: float32) { %0 = exp(%x); add(%0, %0) }").unwrap();
/// let dot = module_dot(&m);
/// assert!(dot.starts_with("digraph module {"));
/// assert_eq!(dot.matches(" -> ").count(), 3, "{dot}");
/// ```
pub fn module_dot(m: &Module) -> String {
    let mut out = String::from("digraph module {\n  node [shape=box, fontname=monospace];\n");
    let mut next = 0usize;
    for (name, f) in m.iter() {
        let _ = writeln!(
            out,
            "  subgraph \"cluster_{name}\" {{\n    label=\"@{name}\";"
        );
        let body = &f.code.body;
        let live = body.reachable(f.code.root);
        // The graph node of each arena node, numbered across the module.
        let mut ids = vec![usize::MAX; body.len()];
        for e in body.ids().filter(|e| live[e.index()]) {
            let id = next;
            next += 1;
            ids[e.index()] = id;
            let label = match body.node(e) {
                Node::Var(v) => format!("%{}", body.var(*v).name),
                Node::Global(g) => format!("@{}", body.global(*g)),
                Node::Constant(k) => {
                    let t = body.constant(*k);
                    if t.len() <= 4 {
                        constant_text(t)
                    } else {
                        format!("const {}", t.tensor_type())
                    }
                }
                Node::CallOp { .. } => body.op_call(e).expect("a call").0.name().to_string(),
                Node::Call { .. } => "call".to_string(),
                Node::Let { bindings, .. } => {
                    let names: Vec<String> = body
                        .bindings(*bindings)
                        .iter()
                        .map(|&(v, _)| format!("%{}", body.var(v).name))
                        .collect();
                    format!("let {}", names.join(", "))
                }
                Node::Tuple(_) => "tuple".to_string(),
                Node::Proj(_, i) => format!(".{i}"),
                Node::If(..) => "if".to_string(),
                Node::Closure(c) => {
                    let primitive = body.closure(*c).attrs.is_true("Primitive");
                    if primitive { "fn (primitive)" } else { "fn" }.to_string()
                }
            };
            let label = label.replace('\\', "\\\\").replace('"', "\\\"");
            let _ = writeln!(out, "    n{id} [label=\"{label}\"];");
            body.for_each_operand(e, |o| {
                let _ = writeln!(out, "    n{} -> n{id};", ids[o.index()]);
            });
        }
        out.push_str("  }\n");
    }
    out.push_str("}\n");
    out
}
