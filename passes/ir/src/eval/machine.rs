//! The machine: calls are frames on a vector and each frame's work is a stack of tasks, so
//! neither nesting nor recursion in the program grows the process's stack; the call depth and
//! the number of steps are bounded ([`EvalLimits`]).

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::EvalLimits;
use crate::body::{ClosureId, ExprId, Idx, Node, VarId};
use crate::error::{ErrorKind, IrError};
use crate::{Closure, Value};
use crate::{Function, Module, Span};

/// A function value of an arena: a global function (`closure` none) or a closure region of
/// one, with the values of the variables it uses from outside.
struct ArenaClosure {
    func: Function,
    closure: Option<ClosureId>,
    env: Vec<(VarId, Value)>,
    /// A `let`-bound closure's own variable (bound to the closure when called: recursion).
    self_var: Option<VarId>,
}

/// Evaluates the function `name` of `module` on `args`, within [`EvalLimits::default`].
///
/// # Errors
/// An unknown function, a wrong number of arguments, a kernel's error, or a limit reached,
/// with its position.
///
/// ```
/// use irpass_ir::Module;
/// use irpass_ir::eval::eval_function;
/// use irpass_ir::{DType, Tensor, Value};
/// let m = Module::parse("def @main(%x: Tensor[(2), float32]) { add(%x, 1f) }").unwrap();
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
    let mut m = Machine {
        module,
        limits,
        steps: 0,
        used: FxHashMap::default(),
    };
    let main = ArenaClosure {
        func: f.clone(),
        closure: None,
        env: Vec::new(),
        self_var: None,
    };
    let frame = m.frame(&main, None, args, None)?;
    m.run(frame)
        .map_err(|e| e.with_source(module.source().cloned()))
}

/// Calls the function value `f` (a closure the interpreter made: an operator's kernel gets
/// one as an argument, a loop's body) on `args`, within [`EvalLimits::default`] of its own.
/// The call runs outside any module: a body that names a global function is an error.
///
/// # Errors
/// A value that is not a function, a wrong number of arguments, or the call's own error.
///
/// ```
/// use irpass_ir::Module;
/// use irpass_ir::eval::{call_closure, eval_function};
/// use irpass_ir::{DType, Tensor, Value};
/// // @main returns a closure; the caller applies it.
/// let m = Module::parse("def @main() { fn (%x: Tensor[(1), float32]) { add(%x, 1f) } }").unwrap();
/// let f = eval_function(&m, "main", vec![]).unwrap();
/// let x = Value::tensor(Tensor::from_vec(DType::Float32, &[1], vec![2.0]).unwrap());
/// let y = call_closure(&f, vec![x]).unwrap();
/// assert_eq!(y.as_tensor().unwrap().values(), [3.0]);
/// ```
pub fn call_closure(f: &Value, args: Vec<Value>) -> Result<Value, IrError> {
    let Value::Closure(c) = f else {
        return Err(fail(
            format!("`{f}` is called, but it is not a function"),
            None,
        ));
    };
    let Some(ac) = c.inner::<ArenaClosure>() else {
        return Err(fail("a function value the interpreter did not make", None));
    };
    let module = Module::new();
    let mut m = Machine {
        module: &module,
        limits: EvalLimits::default(),
        steps: 0,
        used: FxHashMap::default(),
    };
    let frame = m.frame(ac, Some(c), args, None)?;
    m.run(frame)
}

fn fail(msg: impl Into<String>, span: Option<Span>) -> IrError {
    IrError::new(ErrorKind::Eval, msg, span)
}

enum Task {
    /// Evaluate a node (its value ends on the frame's value stack).
    Eval(ExprId),
    /// Combine the operand values on the stack into the node's value.
    Apply(ExprId),
    /// Remember the value on top of the stack as the node's.
    Memo(ExprId),
    /// Bind the value on top of the stack (popped) to a variable.
    Bind(VarId),
    /// Take the branch of `if` node the condition on top of the stack (popped) says.
    Branch(ExprId),
    /// Make a closure value of a closure node, bound to a variable (for recursion) or not.
    MakeClosure(ExprId, Option<VarId>),
}

/// One call in progress.
struct Frame {
    func: Function,
    /// The value of each node evaluated in this call (a node shared by several users is
    /// evaluated once).
    memo: FxHashMap<ExprId, Value>,
    env: FxHashMap<VarId, Value>,
    tasks: Vec<Task>,
    values: Vec<Value>,
}

struct Machine<'m> {
    module: &'m Module,
    limits: EvalLimits,
    steps: u64,
    /// The variables each closure region uses, by function address and closure.
    used: FxHashMap<(usize, ClosureId), Arc<[VarId]>>,
}

impl Machine<'_> {
    /// The frame of a call of `c` on `args`, made at `span` by a caller `depth` frames deep.
    fn frame(
        &mut self,
        c: &ArenaClosure,
        me: Option<&Arc<Closure>>,
        args: Vec<Value>,
        span: Option<Span>,
    ) -> Result<Frame, IrError> {
        let code = &c.func.code;
        let (params, root) = match c.closure {
            Some(id) => {
                let data = code.body.closure(id);
                (&data.params[..], data.body)
            }
            None => (&code.params[..], code.root),
        };
        if args.len() != params.len() {
            return Err(fail(
                format!(
                    "the function takes {} arguments, {} given",
                    params.len(),
                    args.len()
                ),
                span,
            ));
        }
        let mut env: FxHashMap<VarId, Value> = c.env.iter().cloned().collect();
        if let (Some(v), Some(me)) = (c.self_var, me) {
            env.insert(v, Value::Closure(me.clone()));
        }
        env.extend(params.iter().copied().zip(args));
        Ok(Frame {
            func: c.func.clone(),
            memo: FxHashMap::default(),
            env,
            tasks: vec![Task::Eval(root)],
            values: Vec::new(),
        })
    }

    /// The variables closure `c` of `f` uses (its free ones among them).
    fn used_vars(&mut self, f: &Function, c: ClosureId) -> Arc<[VarId]> {
        let key = (f.address(), c);
        if let Some(u) = self.used.get(&key) {
            return u.clone();
        }
        for (id, vars) in used_vars_of_closures(f).into_iter().enumerate() {
            self.used.insert((f.address(), ClosureId::new(id)), vars);
        }
        self.used[&key].clone()
    }

    fn run(&mut self, first: Frame) -> Result<Value, IrError> {
        let mut frames = vec![first];
        loop {
            let depth = frames.len();
            let frame = frames.last_mut().expect("a frame");
            let Some(task) = frame.tasks.pop() else {
                let v = frame.values.pop().expect("a call's result");
                frames.pop();
                match frames.last_mut() {
                    Some(caller) => {
                        caller.values.push(v);
                        continue;
                    }
                    None => return Ok(v),
                }
            };
            let func = frame.func.clone();
            match task {
                Task::Eval(e) => self.eval(frame, &func, e)?,
                Task::Apply(e) => {
                    if let Some(callee) = self.apply(frame, &func, e, depth)? {
                        frames.push(callee);
                    }
                }
                Task::Memo(e) => {
                    let v = frame.values.last().expect("a value").clone();
                    frame.memo.insert(e, v);
                }
                Task::Bind(v) => {
                    let value = frame.values.pop().expect("a bound value");
                    frame.env.insert(v, value);
                }
                Task::Branch(e) => branch(frame, &func, e)?,
                Task::MakeClosure(e, self_var) => self.make_closure(frame, &func, e, self_var),
            }
        }
    }

    /// Evaluates node `e`: a leaf's value is pushed; anything else schedules its operands and
    /// what then applies to them.
    fn eval(&mut self, frame: &mut Frame, func: &Function, e: ExprId) -> Result<(), IrError> {
        let body = &func.code.body;
        if let Some(v) = frame.memo.get(&e) {
            frame.values.push(v.clone());
            return Ok(());
        }
        self.steps += 1;
        if self.steps > self.limits.max_steps {
            return Err(fail(
                format!(
                    "more than {} expressions evaluated: the step limit (a loop that does not \
                     end?)",
                    self.limits.max_steps
                ),
                body.span(e),
            ));
        }
        match body.node(e) {
            Node::Var(v) => {
                let value = frame.env.get(v).cloned().ok_or_else(|| {
                    fail(
                        format!("`%{}` has no value here (unbound)", body.var(*v).name),
                        body.var(*v).span,
                    )
                })?;
                frame.values.push(value);
            }
            Node::Global(g) => {
                let name = body.global(*g);
                let f = self.module.get(name).ok_or_else(|| {
                    fail(
                        format!("`@{name}` is not defined in the module"),
                        body.span(e),
                    )
                })?;
                frame.values.push(closure_value(ArenaClosure {
                    func: f.clone(),
                    closure: None,
                    env: Vec::new(),
                    self_var: None,
                }));
            }
            Node::Constant(k) => {
                frame.values.push(Value::Tensor(body.constant(*k).clone()));
            }
            Node::CallOp { args, .. } | Node::Tuple(args) => {
                frame.tasks.push(Task::Apply(e));
                let args = body.list(*args);
                frame
                    .tasks
                    .extend(args.iter().rev().map(|&a| Task::Eval(a)));
            }
            Node::Call { callee, args } => {
                // The arguments, then the function.
                frame.tasks.push(Task::Apply(e));
                frame.tasks.push(Task::Eval(*callee));
                let args = body.list(*args);
                frame
                    .tasks
                    .extend(args.iter().rev().map(|&a| Task::Eval(a)));
            }
            Node::Proj(t, _) => {
                frame.tasks.push(Task::Apply(e));
                frame.tasks.push(Task::Eval(*t));
            }
            Node::Let {
                bindings,
                body: result,
            } => {
                frame.tasks.push(Task::Memo(e));
                frame.tasks.push(Task::Eval(*result));
                for &(v, value) in body.bindings(*bindings).iter().rev() {
                    frame.tasks.push(Task::Bind(v));
                    frame.tasks.push(match body.node(value) {
                        Node::Closure(_) => Task::MakeClosure(value, Some(v)),
                        _ => Task::Eval(value),
                    });
                }
            }
            Node::If(c, _, _) => {
                frame.tasks.push(Task::Branch(e));
                frame.tasks.push(Task::Eval(*c));
            }
            Node::Closure(_) => frame.tasks.push(Task::MakeClosure(e, None)),
        }
        Ok(())
    }

    /// Applies call, tuple or projection `e` to its evaluated operands; a call of a function
    /// returns the callee's frame (`depth` frames are open).
    fn apply(
        &mut self,
        frame: &mut Frame,
        func: &Function,
        e: ExprId,
        depth: usize,
    ) -> Result<Option<Frame>, IrError> {
        let body = &func.code.body;
        let v = match body.node(e) {
            Node::CallOp { args, .. } => {
                let (op, _, attrs) = body.op_call(e).expect("an operator call");
                let args = frame.values.split_off(frame.values.len() - args.len());
                op.eval(&args, attrs).map_err(|m| fail(m, body.span(e)))?
            }
            Node::Tuple(fields) => {
                Value::Tuple(frame.values.split_off(frame.values.len() - fields.len()))
            }
            Node::Proj(_, i) => {
                let t = frame.values.pop().expect("the tuple");
                match &t {
                    Value::Tuple(fields) => fields.get(*i as usize).cloned().ok_or_else(|| {
                        fail(
                            format!("field {i} of a tuple of {} fields", fields.len()),
                            body.span(e),
                        )
                    })?,
                    other => {
                        return Err(fail(
                            format!("`.{i}` of `{other}`, which is not a tuple"),
                            body.span(e),
                        ));
                    }
                }
            }
            Node::Call { args, .. } => {
                let callee = frame.values.pop().expect("the function");
                let args = frame.values.split_off(frame.values.len() - args.len());
                let c = match &callee {
                    Value::Closure(c) => c.clone(),
                    other => {
                        return Err(fail(
                            format!("`{other}` is called, but it is not a function"),
                            body.span(e),
                        ));
                    }
                };
                let ac = c
                    .inner::<ArenaClosure>()
                    .expect("closures are the machine's");
                if depth >= self.limits.max_call_depth {
                    return Err(fail(
                        format!(
                            "calls nested deeper than the call depth limit of {} (a recursion \
                             that does not end?)",
                            self.limits.max_call_depth
                        ),
                        body.span(e),
                    ));
                }
                let callee_frame = self.frame(ac, Some(&c), args, body.span(e))?;
                frame.tasks.push(Task::Memo(e));
                return Ok(Some(callee_frame));
            }
            _ => unreachable!("only calls, tuples and projections are applied"),
        };
        frame.memo.insert(e, v.clone());
        frame.values.push(v);
        Ok(None)
    }

    /// The value of closure node `e` (bound to `self_var` when a `let` names it), capturing
    /// the variables its body uses.
    fn make_closure(
        &mut self,
        frame: &mut Frame,
        func: &Function,
        e: ExprId,
        self_var: Option<VarId>,
    ) {
        let Node::Closure(c) = *func.code.body.node(e) else {
            unreachable!("a closure node")
        };
        let used = self.used_vars(func, c);
        let env = used
            .iter()
            .filter_map(|v| frame.env.get(v).map(|val| (*v, val.clone())))
            .collect();
        let v = closure_value(ArenaClosure {
            func: func.clone(),
            closure: Some(c),
            env,
            self_var,
        });
        frame.memo.insert(e, v.clone());
        frame.values.push(v);
    }
}

/// Takes the branch of `if` node `e` its evaluated condition selects.
fn branch(frame: &mut Frame, func: &Function, e: ExprId) -> Result<(), IrError> {
    let body = &func.code.body;
    let Node::If(c, then, otherwise) = *body.node(e) else {
        unreachable!("a branch of an `if`")
    };
    let cond = frame.values.pop().expect("the condition");
    let b = cond
        .as_tensor()
        .and_then(|t| (t.len() == 1).then(|| t.to_bool().iter().next().copied().unwrap_or(false)))
        .ok_or_else(|| {
            fail(
                format!("the condition of `if` must be a bool scalar, got `{cond}`"),
                body.span(c),
            )
        })?;
    frame.tasks.push(Task::Memo(e));
    frame
        .tasks
        .push(Task::Eval(if b { then } else { otherwise }));
    Ok(())
}

/// The variables each closure of `f` uses, by closure id, found in one sweep: a closure's
/// body is walked up to the closures nested in it, whose sets (computed first: an inner
/// closure's id is smaller than its user's) are added whole. Walking every closure's whole
/// region instead would cost the square of the nesting depth.
fn used_vars_of_closures(f: &Function) -> Vec<Arc<[VarId]>> {
    let body = &f.code.body;
    let count = body.closure_count();
    let mut sets: Vec<Arc<[VarId]>> = Vec::with_capacity(count);
    // `seen[e] == stamp` marks a node visited while walking the current closure.
    let mut seen = vec![usize::MAX; body.len()];
    let mut var_seen = vec![usize::MAX; body.var_count()];
    let mut stack = Vec::new();
    for c in 0..count {
        let mut vars = Vec::new();
        stack.push(body.closure(ClosureId::new(c)).body);
        while let Some(e) = stack.pop() {
            if std::mem::replace(&mut seen[e.index()], c) == c {
                continue;
            }
            let mut add = |v: VarId| {
                if std::mem::replace(&mut var_seen[v.index()], c) != c {
                    vars.push(v);
                }
            };
            match body.node(e) {
                Node::Var(v) => add(*v),
                Node::Closure(inner) => sets[inner.index()].iter().copied().for_each(add),
                _ => body.for_each_operand(e, |o| stack.push(o)),
            }
        }
        sets.push(vars.into());
    }
    sets
}

fn closure_value(c: ArenaClosure) -> Value {
    Value::Closure(Arc::new(Closure::new(c)))
}
