//! Well-formedness: every variable bound once and used only in its scope, every global
//! defined. One walk per function in evaluation order with an explicit stack.
//! [`Module::check_well_formed`](crate::Module::check_well_formed) checks a whole module.

use crate::body::{ExprId, Idx, Node, VarId};
use crate::error::Problem;
use crate::{Function, Span};

/// At most this many problems are reported.
const MAX_PROBLEMS: usize = 20;

/// The problems of `functions` (at most 20, each with its position and the function's name),
/// where `defined` says whether a global of that name exists.
///
/// ```
/// use irpass_ir::Module;
/// use irpass_ir::verify::check_functions;
/// let m = Module::parse("def @main(%x: float32) { @missing(%x) }").unwrap();
/// let problems = check_functions(m.iter(), |name| m.get(name).is_some());
/// assert_eq!(problems[0].message, "`@missing` is not defined in the module in `@main`");
/// ```
pub fn check_functions<'a>(
    functions: impl IntoIterator<Item = (&'a str, &'a Function)>,
    defined: impl Fn(&str) -> bool,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (name, f) in functions {
        let before = problems.len();
        check_function(&defined, f, &mut problems);
        for p in &mut problems[before..] {
            p.message = format!("{} in `@{name}`", p.message);
        }
    }
    problems
}

enum Task {
    /// Check a node, used by a node written at the span.
    Visit(ExprId, Option<Span>),
    /// A variable comes into scope.
    Define(VarId),
    /// Variables leave scope.
    Leave(Vec<VarId>),
}

fn check_function(
    global_defined: &impl Fn(&str) -> bool,
    f: &Function,
    problems: &mut Vec<Problem>,
) {
    let body = &f.code.body;
    let n = body.var_count();
    let (mut defined, mut in_scope, mut reported) =
        (vec![false; n], vec![false; n], vec![false; n]);
    let mut visited = vec![false; body.len()];
    let mut problem = |message: String, span: Option<Span>| {
        if problems.len() < MAX_PROBLEMS {
            problems.push(Problem {
                message,
                span,
                note: None,
            });
        }
    };
    let mut tasks = vec![
        Task::Leave(f.code.params.clone()),
        Task::Visit(f.code.root, f.span),
    ];
    tasks.extend(f.code.params.iter().rev().map(|&p| Task::Define(p)));
    while let Some(task) = tasks.pop() {
        match task {
            Task::Define(v) => {
                let data = body.var(v);
                if std::mem::replace(&mut defined[v.index()], true) {
                    problem(format!("`%{}` is bound twice", data.name), data.span);
                }
                in_scope[v.index()] = true;
            }
            Task::Leave(vars) => {
                for v in vars {
                    in_scope[v.index()] = false;
                }
            }
            Task::Visit(e, at) => {
                if let Node::Var(v) = body.node(e) {
                    let i = v.index();
                    if !in_scope[i] && !std::mem::replace(&mut reported[i], true) {
                        let data = body.var(*v);
                        let msg = if defined[i] {
                            format!("`%{}` is used outside the scope of its binding", data.name)
                        } else {
                            format!("`%{}` is not bound (a free variable)", data.name)
                        };
                        problem(msg, at.or(data.span));
                    }
                    continue;
                }
                if std::mem::replace(&mut visited[e.index()], true) {
                    continue;
                }
                let span = body.span(e);
                match body.node(e) {
                    Node::Var(_) => unreachable!("handled above"),
                    Node::Global(g) => {
                        let name = body.global(*g);
                        if !global_defined(name) {
                            problem(format!("`@{name}` is not defined in the module"), span);
                        }
                    }
                    Node::Let {
                        bindings,
                        body: result,
                    } => {
                        let bindings = body.bindings(*bindings);
                        tasks.push(Task::Leave(bindings.iter().map(|&(v, _)| v).collect()));
                        tasks.push(Task::Visit(*result, span));
                        for &(v, value) in bindings.iter().rev() {
                            tasks.push(Task::Visit(value, body.var(v).span.or(span)));
                            tasks.push(Task::Define(v));
                        }
                    }
                    Node::Closure(c) => {
                        let data = body.closure(*c);
                        tasks.push(Task::Leave(data.params.clone()));
                        tasks.push(Task::Visit(data.body, span));
                        tasks.extend(data.params.iter().rev().map(|&p| Task::Define(p)));
                    }
                    _ => {
                        let mut ops = Vec::new();
                        body.for_each_operand(e, |o| ops.push(o));
                        tasks.extend(ops.into_iter().rev().map(|o| Task::Visit(o, span)));
                    }
                }
            }
        }
    }
}
