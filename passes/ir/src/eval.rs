//! The interpreter: evaluates functions on concrete values with the operators' reference
//! kernels. It is the semantic reference the pass library is tested against.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Arc;

use super::error::{ErrorKind, IrError};
use super::expr::with_stack;
use super::{Callee, Expr, ExprKind, Span, Value, Var};
use crate::expr::Function;
use crate::module::Module;

/// A function value: the function and the values of its free variables.
pub struct Closure(pub(crate) ClosureRepr);

/// A closure of either IR while the reference IR moves to arenas.
pub(crate) enum ClosureRepr {
    /// A function of the node-per-expression IR.
    Expr(ExprClosure),
    /// A function or closure of an arena.
    Arena(crate::arena::ArenaClosure),
}

/// A function value of the node-per-expression IR.
pub(crate) struct ExprClosure {
    /// The function.
    func: Function,
    env: HashMap<u64, Value>,
    /// A `let`-bound closure's own variable (bound to itself when called, for recursion).
    self_var: Option<Var>,
}

/// Bounds on one evaluation, so that a program that does not end (`@main` calling itself
/// forever) is an error rather than a process that grows until it is killed.
///
/// ```
/// use irpass_ir::{EvalLimits, Module, eval_function_limited};
/// let m = Module::parse("def @main(%x: int32) -> int32 { @main(%x) }").unwrap();
/// let x = irpass_ir::Value::tensor(irpass_ir::Tensor::scalar(irpass_ir::DType::Int32, 1.0));
/// let limits = EvalLimits { max_call_depth: 100, ..EvalLimits::default() };
/// let err = eval_function_limited(&m, "main", vec![x], limits).unwrap_err();
/// assert!(err.to_string().contains("call depth"), "{err}");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvalLimits {
    /// Calls of functions and closures nested deeper than this are an error.
    pub max_call_depth: usize,
    /// Evaluating more expressions than this (counting each call's body anew) is an error.
    pub max_steps: u64,
}

impl Default for EvalLimits {
    /// 10 000 nested calls and 100 million evaluated expressions: far beyond any model, and
    /// reached by a runaway recursion in well under a second.
    fn default() -> Self {
        EvalLimits {
            max_call_depth: 10_000,
            max_steps: 100_000_000,
        }
    }
}

/// Evaluates the function `name` of `module` on `args`, within [`EvalLimits::default`].
///
/// # Errors
/// An unknown function, a wrong number of arguments, a kernel's error, or a limit reached,
/// with its position.
///
/// ```
/// use irpass_ir::{Module, Tensor, DType, Value, eval_function};
/// let m = Module::parse(r#"def @main(%x: Tensor[(2), float32]) { add(%x, 1f) }"#).unwrap();
/// let x = Value::tensor(Tensor::from_vec(DType::Float32, &[2], vec![1.0, 2.0]).unwrap());
/// let out = eval_function(&m, "main", vec![x]).unwrap();
/// assert_eq!(out.as_tensor().unwrap().values(), [2.0, 3.0]);
/// ```
pub fn eval_function(module: &Module, name: &str, args: Vec<Value>) -> Result<Value, IrError> {
    eval_function_limited(module, name, args, EvalLimits::default())
}

/// [`eval_function`] within `limits`.
///
/// # Errors
/// As [`eval_function`].
pub fn eval_function_limited(
    module: &Module,
    name: &str,
    args: Vec<Value>,
    limits: EvalLimits,
) -> Result<Value, IrError> {
    let f = module.get(name).ok_or_else(|| {
        IrError::new(
            ErrorKind::Eval,
            format!("the module has no function `@{name}`"),
            None,
        )
    })?;
    let interp = Interp::new(module, limits);
    let closure = ExprClosure {
        func: f.clone(),
        env: HashMap::new(),
        self_var: None,
    };
    with_stack(|| interp.call(&closure, args, None))
        .map_err(|e| e.with_source(module.source().cloned()))
}

/// Evaluates a closed expression (no free variables) in `module`, within
/// [`EvalLimits::default`].
///
/// # Errors
/// As [`eval_function`].
pub fn eval_expr(module: &Module, e: &Expr) -> Result<Value, IrError> {
    let interp = Interp::new(module, EvalLimits::default());
    let mut frame = Frame {
        env: HashMap::new(),
        memo: HashMap::new(),
    };
    with_stack(|| interp.eval(e, &mut frame)).map_err(|e| e.with_source(module.source().cloned()))
}

struct Interp<'m> {
    module: &'m Module,
    limits: EvalLimits,
    /// Calls in progress.
    depth: Cell<usize>,
    /// Expressions evaluated so far.
    steps: Cell<u64>,
}

struct Frame {
    env: HashMap<u64, Value>,
    memo: HashMap<usize, Value>,
}

fn fail(msg: impl Into<String>, span: Option<Span>) -> IrError {
    IrError::new(ErrorKind::Eval, msg, span)
}

impl<'m> Interp<'m> {
    fn new(module: &'m Module, limits: EvalLimits) -> Self {
        Interp {
            module,
            limits,
            depth: Cell::new(0),
            steps: Cell::new(0),
        }
    }

    fn call(
        &self,
        c: &ExprClosure,
        args: Vec<Value>,
        span: Option<Span>,
    ) -> Result<Value, IrError> {
        let depth = self.depth.get();
        if depth >= self.limits.max_call_depth {
            return Err(fail(
                format!(
                    "calls nested deeper than the call depth limit of {} (a recursion that \
                     does not end?)",
                    self.limits.max_call_depth
                ),
                span,
            ));
        }
        self.depth.set(depth + 1);
        let result = self.call_inner(c, args, span);
        self.depth.set(depth);
        result
    }

    fn call_inner(
        &self,
        c: &ExprClosure,
        args: Vec<Value>,
        span: Option<Span>,
    ) -> Result<Value, IrError> {
        let f = &c.func;
        if args.len() != f.params.len() {
            return Err(fail(
                format!(
                    "the function takes {} arguments, {} given",
                    f.params.len(),
                    args.len()
                ),
                span,
            ));
        }
        let mut env = c.env.clone();
        if let Some(v) = &c.self_var {
            let me = ExprClosure {
                func: f.clone(),
                env: c.env.clone(),
                self_var: Some(v.clone()),
            };
            env.insert(
                v.id(),
                Value::Closure(Arc::new(Closure(ClosureRepr::Expr(me)))),
            );
        }
        for (p, a) in f.params.iter().zip(args) {
            env.insert(p.id(), a);
        }
        let mut frame = Frame {
            env,
            memo: HashMap::new(),
        };
        self.eval(&f.body, &mut frame)
    }

    fn closure(&self, f: &Function, frame: &Frame, self_var: Option<Var>) -> Value {
        let mut free = Vec::new();
        super::visit::free_vars(&Expr::function(f.clone()), &mut free);
        let env = free
            .iter()
            .filter_map(|v| frame.env.get(&v.id()).map(|val| (v.id(), val.clone())))
            .collect();
        Value::Closure(Arc::new(Closure(ClosureRepr::Expr(ExprClosure {
            func: f.clone(),
            env,
            self_var,
        }))))
    }

    fn eval(&self, e: &Expr, frame: &mut Frame) -> Result<Value, IrError> {
        if let Some(v) = frame.memo.get(&e.addr()) {
            return Ok(v.clone());
        }
        let steps = self.steps.get() + 1;
        if steps > self.limits.max_steps {
            return Err(fail(
                format!(
                    "more than {} expressions evaluated: the step limit (a loop that does not \
                     end?)",
                    self.limits.max_steps
                ),
                e.span,
            ));
        }
        self.steps.set(steps);
        let v = with_stack(|| self.eval_inner(e, frame))?;
        frame.memo.insert(e.addr(), v.clone());
        Ok(v)
    }

    fn eval_inner(&self, e: &Expr, frame: &mut Frame) -> Result<Value, IrError> {
        match &e.kind {
            ExprKind::Var(v) => {
                frame.env.get(&v.id()).cloned().ok_or_else(|| {
                    fail(format!("`%{}` has no value here (unbound)", v.name), e.span)
                })
            }
            ExprKind::GlobalVar(name) => {
                let f = self.module.get(name).ok_or_else(|| {
                    fail(format!("`@{name}` is not defined in the module"), e.span)
                })?;
                Ok(Value::Closure(Arc::new(Closure(ClosureRepr::Expr(
                    ExprClosure {
                        func: f.clone(),
                        env: HashMap::new(),
                        self_var: None,
                    },
                )))))
            }
            ExprKind::Constant(t) => Ok(Value::Tensor(t.clone())),
            ExprKind::Call(call) => {
                let args = call
                    .args
                    .iter()
                    .map(|a| self.eval(a, frame))
                    .collect::<Result<Vec<_>, _>>()?;
                match &call.callee {
                    Callee::Op(op) => op.eval(&args, &call.attrs).map_err(|m| fail(m, e.span)),
                    Callee::Expr(f) => match self.eval(f, frame)? {
                        Value::Closure(c) => match &c.0 {
                            ClosureRepr::Expr(c) => self.call(c, args, e.span),
                            ClosureRepr::Arena(_) => Err(fail(
                                "a closure of an arena is called in the Expr interpreter",
                                e.span,
                            )),
                        },
                        other => Err(fail(
                            format!("`{other}` is called, but it is not a function"),
                            e.span,
                        )),
                    },
                }
            }
            ExprKind::Let(bindings, body) => {
                for (v, value) in bindings {
                    let val = match &value.kind {
                        ExprKind::Function(f) => self.closure(f, frame, Some(v.clone())),
                        _ => self.eval(value, frame)?,
                    };
                    frame.env.insert(v.id(), val);
                }
                self.eval(body, frame)
            }
            ExprKind::Tuple(fields) => Ok(Value::Tuple(
                fields
                    .iter()
                    .map(|f| self.eval(f, frame))
                    .collect::<Result<_, _>>()?,
            )),
            ExprKind::TupleGetItem(t, i) => match self.eval(t, frame)? {
                Value::Tuple(fields) => fields.get(*i).cloned().ok_or_else(|| {
                    fail(
                        format!("field {i} of a tuple of {} fields", fields.len()),
                        e.span,
                    )
                }),
                other => Err(fail(
                    format!("`.{i}` of `{other}`, which is not a tuple"),
                    e.span,
                )),
            },
            ExprKind::If(c, t, o) => {
                let cond = self.eval(c, frame)?;
                let b = cond
                    .as_tensor()
                    .and_then(|t| {
                        (t.len() == 1).then(|| t.to_bool().iter().next().copied().unwrap_or(false))
                    })
                    .ok_or_else(|| {
                        fail(
                            format!("the condition of `if` must be a bool scalar, got `{cond}`"),
                            c.span,
                        )
                    })?;
                self.eval(if b { t } else { o }, frame)
            }
            ExprKind::Function(f) => Ok(self.closure(f, frame, None)),
        }
    }
}
