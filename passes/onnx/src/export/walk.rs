//! The walk over `@main`: values in evaluation order with an explicit stack (no recursion that
//! follows the program), function literals inlined at their calls, each operator call emitted
//! into the [`GraphBuilder`].

use irpass_ir::{ExprId, Module, Node, Type, VarId};
use rustc_hash::FxHashMap;

use super::graph::{GraphBuilder, Shapes, Val};
use super::ops;
use super::subgraph::{self, unconditional, value_info};
use crate::error::{OnnxError, Result};
use crate::import::ModelInfo;
use crate::proto::{GraphProto, ValueInfoProto};

/// One inlining of a function body: its parameters' values and what it computed.
#[derive(Default)]
struct Frame {
    env: FxHashMap<VarId, Val>,
    memo: FxHashMap<ExprId, Val>,
    /// The fused group this inlining writes (a call of a `Primitive` function, or inside one).
    region: Option<usize>,
}

impl Frame {
    /// The function literal node `x` is in this frame, if it is one (visited), and the frame
    /// it was made in.
    fn closure(&self, x: ExprId) -> Option<(irpass_ir::body::ClosureId, usize)> {
        match self.memo.get(&x) {
            Some(Val::Closure(c, made_in)) => Some((*c, *made_in)),
            _ => None,
        }
    }
}

enum Task {
    Visit(usize, ExprId),
    Build(usize, ExprId),
    /// The call `ExprId` of frame `.0` returns what frame `.2` computed for its body `.3`.
    Return(usize, ExprId, usize, ExprId),
    /// Begin writing subgraph `.2` of node `.1` of frame `.0` ([`subgraph::region`]: an
    /// `if`'s branch, an opaque call's closure): a frame that sees what frame `.0` has
    /// computed so far, and an empty list of nodes.
    Enter(usize, ExprId, usize),
    /// End the subgraph begun last (of node `.1` of frame `.0`): its nodes and result become
    /// the graph.
    Leave(usize, ExprId),
}

/// A subgraph being written: its frame, its root and attribute name, its inputs, and the node
/// list of the graph around it.
struct Open {
    frame: usize,
    root: ExprId,
    name: String,
    inputs: Vec<ValueInfoProto>,
    outer_nodes: Vec<crate::proto::NodeProto>,
}

/// What the walk writes: the graph, the rank and last axis of each value it writes (for the
/// graph-level rewrites), and the opaque nodes it wrote back (their names, and the version of
/// each other domain they are in).
pub(crate) struct Written {
    pub(crate) graph: GraphProto,
    pub(crate) last_dims: Shapes,
    pub(crate) opaque: rustc_hash::FxHashSet<String>,
    pub(crate) domains: std::collections::BTreeMap<String, i64>,
    /// [`GraphBuilder::unchecked_broadcast`].
    pub(crate) unchecked_broadcast: Vec<(String, String)>,
}

/// The graph of `module`'s `@main`; with `mark_regions`, the nodes of each fused group marked
/// for [`super::functions`].
pub(crate) fn graph(
    module: &Module,
    info: Option<&ModelInfo>,
    opset: i64,
    mark_regions: bool,
) -> Result<Written> {
    let main = module
        .get("main")
        .ok_or_else(|| OnnxError::Export("the module has no @main".into()))?;
    module
        .infer_types()
        .map_err(|e| OnnxError::Export(format!("the module does not type-check: {e}")))?;
    let types = main.types().expect("inferred");
    let code = &main.code;
    let body = &code.body;
    let let_value: FxHashMap<VarId, ExprId> = body
        .ids()
        .filter_map(|e| match body.node(e) {
            Node::Let { bindings, .. } => Some(body.bindings(*bindings).to_vec()),
            _ => None,
        })
        .flatten()
        .collect();
    let mut walk = Walk {
        body,
        types: &types,
        let_value,
        g: GraphBuilder::new(opset, mark_regions),
        frames: vec![Frame::default()],
        tasks: vec![Task::Visit(0, code.root)],
        open: Vec::new(),
        written: FxHashMap::default(),
    };
    let inputs = walk.inputs(&code.params, info)?;
    // Where there are `if`s, the nodes evaluated whatever the conditions are visited first,
    // in order, so that a value a branch also reads is written outside it, once (and so in
    // each branch).
    if body.ids().any(|e| matches!(body.node(e), Node::If(..))) {
        let first = unconditional(body, code.root, &walk.let_value);
        walk.tasks
            .extend(first.into_iter().rev().map(|e| Task::Visit(0, e)));
    }
    while let Some(task) = walk.tasks.pop() {
        match task {
            Task::Visit(f, e) => walk.visit(f, e)?,
            Task::Build(f, e) => walk.build(f, e)?,
            Task::Return(f, e, nf, result) => {
                let val = walk.frames[nf].memo[&result].clone();
                walk.frames[f].memo.insert(e, val);
            }
            Task::Enter(f, e, k) => walk.enter(f, e, k)?,
            Task::Leave(f, e) => walk.leave(f, e)?,
        }
    }
    let result = walk.frames[0].memo[&code.root].clone();
    walk.finish(result, types.of(code.root), inputs, info)
}

/// The walk's state: the program, the graph being written, the frames of the inlinings, the
/// work left and the subgraphs open.
struct Walk<'a> {
    body: &'a irpass_ir::Body,
    types: &'a irpass_ir::BodyTypes,
    /// The value bound to each `let` variable.
    let_value: FxHashMap<VarId, ExprId>,
    g: GraphBuilder,
    frames: Vec<Frame>,
    tasks: Vec<Task>,
    open: Vec<Open>,
    /// The subgraphs written of each node (by frame and node), until the node is.
    written: FxHashMap<(usize, ExprId), Vec<GraphProto>>,
}

impl Walk<'_> {
    /// The graph inputs for `@main`'s parameters (named as the model named them), bound in the
    /// outermost frame.
    fn inputs(
        &mut self,
        params: &[VarId],
        info: Option<&ModelInfo>,
    ) -> Result<Vec<ValueInfoProto>> {
        let mut inputs = Vec::new();
        for (i, &p) in params.iter().enumerate() {
            let name = match info.and_then(|info| info.inputs.get(i)) {
                Some(n) => n.clone(),
                None => self.body.var(p).name.to_string(),
            };
            self.note_last_dim(&name, self.types.var(p));
            inputs.push(value_info(&name, self.types.var(p))?);
            self.frames[0].env.insert(p, Val::Tensor(name));
        }
        Ok(inputs)
    }

    /// Records the rank and last axis of the value `name` of type `ty`, where known.
    fn note_last_dim(&mut self, name: &str, ty: &Type) {
        if let Some(t) = ty.as_tensor()
            && let Some(d) = t.shape.last().and_then(|d| d.value())
        {
            self.g.last_dims.insert(name.to_string(), (t.rank(), d));
        }
    }

    /// Visits node `e` in frame `f`: a leaf gets its value now, anything else schedules its
    /// operands (and subgraphs) before its build.
    fn visit(&mut self, f: usize, e: ExprId) -> Result<()> {
        if self.frames[f].memo.contains_key(&e) {
            return Ok(());
        }
        let body = self.body;
        let tasks = &mut self.tasks;
        match body.node(e) {
            Node::Var(v) => {
                if let Some(val) = self.frames[f].env.get(v).cloned() {
                    self.frames[f].memo.insert(e, val);
                } else if let Some(&x) = self.let_value.get(v) {
                    tasks.push(Task::Build(f, e));
                    tasks.push(Task::Visit(f, x));
                } else {
                    return Err(OnnxError::Export(format!(
                        "`%{}` is not bound",
                        body.var(*v).name
                    )));
                }
            }
            Node::Constant(k) => {
                let name = self
                    .g
                    .initializer_hashed(body.constant(*k), body.constant_hash(*k));
                self.frames[f].memo.insert(e, Val::Tensor(name));
            }
            Node::Closure(c) => {
                self.frames[f].memo.insert(e, Val::Closure(*c, f));
                // What a subgraph's body computes from the values around it alone is written
                // here, before the node that takes it. (A fused function is written inline at
                // its call, in a frame of its own.)
                if body.closure(*c).attrs.get("Primitive").is_none() {
                    let hoisted = subgraph::invariant(body, *c, &self.let_value);
                    tasks.extend(hoisted.into_iter().rev().map(|x| Task::Visit(f, x)));
                }
            }
            Node::Global(_) => {
                return Err(OnnxError::Export(
                    "a reference to another global function (inline it first)".into(),
                ));
            }
            Node::If(c, _, _) => {
                tasks.push(Task::Build(f, e));
                for k in [1, 0] {
                    tasks.push(Task::Leave(f, e));
                    tasks.push(Task::Enter(f, e, k));
                }
                tasks.push(Task::Visit(f, *c));
            }
            Node::Let { body: result, .. } => {
                tasks.push(Task::Build(f, e));
                tasks.push(Task::Visit(f, *result));
            }
            _ => {
                tasks.push(Task::Build(f, e));
                for k in (0..subgraph::count(body, e)).rev() {
                    tasks.push(Task::Leave(f, e));
                    tasks.push(Task::Enter(f, e, k));
                }
                let at = tasks.len();
                body.for_each_operand(e, |o| tasks.push(Task::Visit(f, o)));
                tasks[at..].reverse();
            }
        }
        Ok(())
    }

    /// The value node `x` has in frame `f` (visited).
    fn get(&self, f: usize, x: ExprId) -> Val {
        self.frames[f].memo[&x].clone()
    }

    /// Builds node `e` of frame `f`, its operands and subgraphs written.
    fn build(&mut self, f: usize, e: ExprId) -> Result<()> {
        let body = self.body;
        let val = match body.node(e) {
            Node::Var(v) => self.get(f, self.let_value[v]),
            Node::Let { body: result, .. } => self.get(f, *result),
            Node::Tuple(fields) => {
                Val::Tuple(body.list(*fields).iter().map(|&x| self.get(f, x)).collect())
            }
            Node::Proj(t, i) => match self.get(f, *t) {
                Val::Tuple(fields) => fields
                    .get(*i as usize)
                    .cloned()
                    .ok_or_else(|| OnnxError::Export("a projection past a tuple's end".into()))?,
                _ => {
                    return Err(OnnxError::Export(
                        "a projection of a value that is not a tuple".into(),
                    ));
                }
            },
            Node::Call { callee, args } => return self.inline_call(f, e, *callee, *args),
            Node::If(c, _, _) => {
                let cond = self.get(f, *c);
                let branches = self.written.remove(&(f, e)).unwrap_or_default();
                subgraph::if_node(&mut self.g, cond.tensor()?, branches, self.types.of(e))?
            }
            Node::CallOp { .. } => self.emit_op(f, e)?,
            _ => unreachable!("visited without a build"),
        };
        self.frames[f].memo.insert(e, val);
        Ok(())
    }

    /// Inlines the call `e` of frame `f`: a frame for the callee's body, its parameters bound
    /// to the arguments, whose result becomes the call's value.
    fn inline_call(
        &mut self,
        f: usize,
        e: ExprId,
        callee: ExprId,
        args: irpass_ir::body::List,
    ) -> Result<()> {
        let body = self.body;
        let Val::Closure(c, _) = self.get(f, callee) else {
            return Err(OnnxError::Export(
                "a call of a value that is not a function literal".into(),
            ));
        };
        let closure = body.closure(c);
        let mut frame = Frame {
            region: self.frames[f].region,
            ..Frame::default()
        };
        if frame.region.is_none() && closure.attrs.get("Primitive").is_some() {
            frame.region = self.g.new_region();
        }
        for (&p, &a) in closure.params.iter().zip(body.list(args)) {
            frame.env.insert(p, self.get(f, a));
        }
        self.frames.push(frame);
        let nf = self.frames.len() - 1;
        self.tasks.push(Task::Return(f, e, nf, closure.body));
        self.tasks.push(Task::Visit(nf, closure.body));
        Ok(())
    }

    /// Writes the operator call `e` of frame `f`: an opaque node, a native operator or a
    /// converted one.
    fn emit_op(&mut self, f: usize, e: ExprId) -> Result<Val> {
        let (op, args, attrs) = self.body.op_call(e).expect("an operator call");
        let vals: Vec<Val> = args.iter().map(|&x| self.get(f, x)).collect();
        let arg_types: Vec<&Type> = args.iter().map(|&x| self.types.of(x)).collect();
        // A function literal's body is typed with the function that holds it.
        let out = self.types.of(e);
        let g = &mut self.g;
        g.region = self.frames[f].region;
        let val = if op.name() == crate::opaque::OPAQUE_OP {
            let graphs = self.written.remove(&(f, e)).unwrap_or_default();
            super::opaque::emit(g, attrs, &vals, graphs)
        } else if let Some(entry) = crate::native::of_ir(op.name()) {
            let graphs = self.written.remove(&(f, e)).unwrap_or_default();
            super::native::emit(g, entry, attrs, &vals, graphs, out)
        } else {
            ops::emit(g, op.name(), attrs, &vals, &arg_types, out)
        };
        g.region = None;
        let val = val?;
        if let Val::Tensor(name) = &val {
            self.note_last_dim(name, out);
        }
        Ok(val)
    }

    /// Begins writing subgraph `k` of node `e` of frame `f`.
    fn enter(&mut self, f: usize, e: ExprId, k: usize) -> Result<()> {
        let body = self.body;
        let frames = &self.frames;
        let region = subgraph::region(body, e, k, |x| frames[f].closure(x))?;
        // A branch sees the values of its `if`'s frame, a closure those of the frame it was
        // made in (not those of a fused function it was passed through). (A subgraph's nodes
        // are not part of a fused group.)
        let around = region.made_in.unwrap_or(f);
        let mut frame = Frame {
            env: frames[around].env.clone(),
            memo: frames[around].memo.clone(),
            region: None,
        };
        let mut inputs = Vec::with_capacity(region.params.len());
        for &p in &region.params {
            let name = self.g.fresh(&body.var(p).name);
            inputs.push(value_info(&name, self.types.var(p))?);
            frame.env.insert(p, Val::Tensor(name));
        }
        self.frames.push(frame);
        let nf = self.frames.len() - 1;
        self.open.push(Open {
            frame: nf,
            root: region.root,
            name: region.name,
            inputs,
            outer_nodes: std::mem::take(&mut self.g.nodes),
        });
        self.tasks.push(Task::Visit(nf, region.root));
        let first = unconditional(body, region.root, &self.let_value);
        self.tasks
            .extend(first.into_iter().rev().map(|e| Task::Visit(nf, e)));
        Ok(())
    }

    /// Ends the subgraph begun last (of node `e` of frame `f`).
    fn leave(&mut self, f: usize, e: ExprId) -> Result<()> {
        let open = self.open.pop().expect("a subgraph begun");
        let result = std::mem::take(&mut self.frames[open.frame].memo)
            .remove(&open.root)
            .expect("the subgraph written");
        self.frames[open.frame].env.clear();
        let ty = self.types.of(open.root);
        let graph = subgraph::subgraph(&mut self.g, &open.name, open.inputs, result, ty);
        self.g.nodes = open.outer_nodes;
        self.written.entry((f, e)).or_default().push(graph?);
        Ok(())
    }

    /// The graph, its outputs `result` of type `result_type` named as the model named them.
    fn finish(
        mut self,
        result: Val,
        result_type: &Type,
        inputs: Vec<ValueInfoProto>,
        info: Option<&ModelInfo>,
    ) -> Result<Written> {
        let (vals, tys) = match (result, result_type.clone()) {
            (Val::Tuple(v), Type::Tuple(t)) => (v, t),
            (v, t) => (vec![v], vec![t]),
        };
        let g = &mut self.g;
        let mut outputs = Vec::new();
        for (i, (v, t)) in vals.iter().zip(&tys).enumerate() {
            let want = match info.and_then(|info| info.outputs.get(i)) {
                Some(n) if info.is_some_and(|info| info.outputs.len() == vals.len()) => n.clone(),
                _ => format!("output_{i}"),
            };
            let have = v.tensor()?.to_string();
            name_output(g, &have, &want, &inputs, &outputs);
            outputs.push(value_info(&want, t)?);
        }
        let graph = GraphProto {
            node: std::mem::take(&mut g.nodes),
            name: Some(info.map_or_else(|| "main".to_string(), |i| i.graph_name.clone())),
            initializer: std::mem::take(&mut g.initializers),
            input: inputs,
            output: outputs,
            ..GraphProto::default()
        };
        Ok(Written {
            unchecked_broadcast: std::mem::take(&mut g.unchecked_broadcast),
            graph,
            last_dims: std::mem::take(&mut g.last_dims),
            opaque: std::mem::take(&mut g.opaque),
            domains: std::mem::take(&mut g.domains),
        })
    }
}

/// Makes the graph output named `want` hold the value named `have`: the node that computes it
/// is renamed when nothing else is called `want` and the value is not an input, an
/// initializer or an earlier output; otherwise an `Identity` copies it.
fn name_output(
    g: &mut GraphBuilder,
    have: &str,
    want: &str,
    inputs: &[ValueInfoProto],
    outputs: &[ValueInfoProto],
) {
    if have == want {
        return;
    }
    let produced = g
        .nodes
        .iter()
        .position(|n| n.output.iter().any(|o| o == have));
    let taken = |name: &str| {
        inputs.iter().chain(outputs).any(|v| v.name() == name)
            || g.initializers.iter().any(|t| t.name() == name)
    };
    match produced {
        Some(_) if !taken(have) && !taken(want) => {
            let renames = FxHashMap::from_iter([(have.to_string(), want.to_string())]);
            for n in &mut g.nodes {
                for s in n.input.iter_mut().chain(n.output.iter_mut()) {
                    if s == have {
                        *s = want.to_string();
                    }
                }
                // (A subgraph reading the value reads it by its new name.)
                crate::opaque::rename_captures(&mut n.attribute, &renames);
            }
        }
        _ => {
            let out = g.node("Identity", &[have], Vec::new());
            let last = g.nodes.last_mut().expect("just added");
            last.output = vec![want.to_string()];
            let _ = out;
        }
    }
}
