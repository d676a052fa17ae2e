//! The interpreter: evaluates functions on concrete values with the operators' reference
//! kernels. It is the semantic reference the pass library is tested against.

use std::collections::HashMap;
use std::sync::Arc;

use super::error::{ErrorKind, IrError};
use super::expr::with_stack;
use super::{Callee, Expr, ExprKind, Function, Module, Span, Value, Var};

/// A function value: the function and the values of its free variables.
pub struct Closure {
    /// The function.
    pub func: Function,
    env: HashMap<u64, Value>,
    /// A `let`-bound closure's own variable (bound to itself when called, for recursion).
    self_var: Option<Var>,
}

/// Evaluates the function `name` of `module` on `args`.
///
/// # Errors
/// An unknown function, a wrong number of arguments, or a kernel's error, with its position.
///
/// ```
/// use irpass_ir::{Module, Tensor, DType, Value, eval_function};
/// let m = Module::parse(r#"def @main(%x: Tensor[(2), float32]) { add(%x, 1f) }"#).unwrap();
/// let x = Value::tensor(Tensor::from_vec(DType::Float32, &[2], vec![1.0, 2.0]).unwrap());
/// let out = eval_function(&m, "main", vec![x]).unwrap();
/// assert_eq!(out.as_tensor().unwrap().values(), [2.0, 3.0]);
/// ```
pub fn eval_function(module: &Module, name: &str, args: Vec<Value>) -> Result<Value, IrError> {
    let f = module.get(name).ok_or_else(|| {
        IrError::new(
            ErrorKind::Eval,
            format!("the module has no function `@{name}`"),
            None,
        )
    })?;
    let interp = Interp { module };
    let closure = Closure {
        func: f.clone(),
        env: HashMap::new(),
        self_var: None,
    };
    with_stack(|| interp.call(&closure, args, None))
        .map_err(|e| e.with_source(module.source().cloned()))
}

/// Evaluates a closed expression (no free variables) in `module`.
///
/// # Errors
/// As [`eval_function`].
pub fn eval_expr(module: &Module, e: &Expr) -> Result<Value, IrError> {
    let interp = Interp { module };
    let mut frame = Frame {
        env: HashMap::new(),
        memo: HashMap::new(),
    };
    with_stack(|| interp.eval(e, &mut frame)).map_err(|e| e.with_source(module.source().cloned()))
}

struct Interp<'m> {
    module: &'m Module,
}

struct Frame {
    env: HashMap<u64, Value>,
    memo: HashMap<usize, Value>,
}

fn fail(msg: impl Into<String>, span: Option<Span>) -> IrError {
    IrError::new(ErrorKind::Eval, msg, span)
}

impl Interp<'_> {
    fn call(&self, c: &Closure, args: Vec<Value>, span: Option<Span>) -> Result<Value, IrError> {
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
            let me = Closure {
                func: f.clone(),
                env: c.env.clone(),
                self_var: Some(v.clone()),
            };
            env.insert(v.id(), Value::Closure(Arc::new(me)));
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
        Value::Closure(Arc::new(Closure {
            func: f.clone(),
            env,
            self_var,
        }))
    }

    fn eval(&self, e: &Expr, frame: &mut Frame) -> Result<Value, IrError> {
        if let Some(v) = frame.memo.get(&e.addr()) {
            return Ok(v.clone());
        }
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
                Ok(Value::Closure(Arc::new(Closure {
                    func: f.clone(),
                    env: HashMap::new(),
                    self_var: None,
                })))
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
                        Value::Closure(c) => self.call(&c, args, e.span),
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
