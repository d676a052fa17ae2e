//! Well-formedness of arena functions: every variable bound once and used only in its scope,
//! every global defined. One walk in evaluation order with an explicit stack.

use super::{ExprId, Function, Idx, Module, Node, VarId};
use crate::Span;
use crate::error::{ErrorKind, IrError, Problem};

/// Checks every function of `m`.
///
/// # Errors
/// The problems found (at most 20), each with its position.
///
/// ```
/// use irpass_ir::arena::{Module, check_well_formed};
/// let m = Module::parse("def @main(%x: float32) { @missing(%x) }").unwrap();
/// let err = check_well_formed(&m).unwrap_err();
/// assert!(err.message().contains("`@missing` is not defined in the module"), "{err}");
/// ```
pub fn check_well_formed(m: &Module) -> Result<(), IrError> {
    let mut problems = Vec::new();
    for (name, f) in m.iter() {
        check_function(m, f, &mut problems);
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

enum Task {
    /// Check a node, used by a node written at the span.
    Visit(ExprId, Option<Span>),
    /// A variable comes into scope.
    Define(VarId),
    /// Variables leave scope.
    Leave(Vec<VarId>),
}

fn check_function(m: &Module, f: &Function, problems: &mut Vec<Problem>) {
    let body = &f.code.body;
    let n = body.var_count();
    let (mut defined, mut in_scope, mut reported) =
        (vec![false; n], vec![false; n], vec![false; n]);
    let mut visited = vec![false; body.len()];
    let mut problem = |message: String, span: Option<Span>| {
        if problems.len() < 20 {
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
                        if m.get(name).is_none() {
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

#[cfg(test)]
mod tests {
    use super::super::{ArenaFunction, BodyBuilder, ClosureData};
    use super::*;
    use crate::{Attrs, DType, Op, Type};

    fn module(build: impl FnOnce(&mut BodyBuilder, VarId) -> ExprId) -> Module {
        let mut b = BodyBuilder::new();
        let x = b.var("x", Some(Type::scalar(DType::Float32)), None);
        let root = build(&mut b, x);
        let code = ArenaFunction {
            body: b.finish(),
            params: vec![x],
            root,
        };
        Module::from_functions([("main", Function::new(code, None, Attrs::new(), None))])
    }

    fn message(m: &Module) -> String {
        check_well_formed(m)
            .map(|()| String::new())
            .unwrap_or_else(|e| e.message().to_string())
    }

    #[test]
    fn every_model_and_every_parsed_closure_is_well_formed() {
        let dir =
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/models");
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "relay") {
                let m = Module::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
                check_well_formed(&m).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                m.verify().unwrap();
            }
        }
    }

    #[test]
    fn a_variable_used_outside_its_scope_bound_twice_or_free_and_a_missing_global_are_reported() {
        let exp = Op::get("exp").unwrap();
        // `let %y = exp(%x); %y` used again after the block.
        let m = module(|b, x| {
            let y = b.var("y", None, None);
            let xe = b.use_var(x);
            let v = b.call_op(exp, &[xe], Attrs::new());
            let ye = b.use_var(y);
            let block = b.lets(&[(y, v)], ye);
            b.tuple(&[block, ye])
        });
        assert!(message(&m).contains("`%y` is used outside the scope of its binding in `@main`"));
        // The same variable bound by two blocks.
        let m = module(|b, x| {
            let y = b.var("y", None, None);
            let xe = b.use_var(x);
            let ye = b.use_var(y);
            let one = b.lets(&[(y, xe)], ye);
            let v = b.call_op(exp, &[xe], Attrs::new());
            let two = b.lets(&[(y, v)], ye);
            b.tuple(&[one, two])
        });
        assert!(
            message(&m).contains("`%y` is bound twice"),
            "{}",
            message(&m)
        );
        // A variable nothing binds, and a closure parameter used outside the closure.
        let m = module(|b, _| {
            let z = b.var("z", None, None);
            b.use_var(z)
        });
        assert!(message(&m).contains("`%z` is not bound (a free variable)"));
        let m = module(|b, _| {
            let p = b.var("p", None, None);
            let pe = b.use_var(p);
            let c = b.closure(ClosureData {
                params: vec![p],
                ret_type: None,
                attrs: Attrs::new(),
                body: pe,
            });
            b.tuple(&[c, pe])
        });
        assert!(
            message(&m).contains("`%p` is used outside the scope"),
            "{}",
            message(&m)
        );
        let m = module(|b, _| b.global("missing"));
        assert!(message(&m).contains("`@missing` is not defined in the module"));
    }

    #[test]
    fn a_million_nested_blocks_are_checked_without_recursion() {
        let m = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                let m = module(|b, x| {
                    let mut e = b.use_var(x);
                    for i in 0..1_000_000 {
                        let v = b.var(&format!("v{i}"), None, None);
                        let ve = b.use_var(v);
                        e = b.lets(&[(v, e)], ve);
                    }
                    e
                });
                message(&m)
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(m, "");
    }
}
