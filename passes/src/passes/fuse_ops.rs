//! `FuseOps`: the pass and its rewrite of a function's code. The grouping (post-dominator fusion, as TVM's
//! graph partitioner) and the rewrite that makes each group a `Primitive` function.

use crate::analyses::{PostDominatorTree, PostDominators, Types};
use irpass::{PassContext, PassOptions, function_pass, pass_config_option};
use irpass_ir::body::{ArenaFunction, Body, ClosureData, ExprId, Idx, Node};
use irpass_ir::infer::BodyTypes;
use irpass_ir::rewrite::{OldId, Rewrite, RewriteCx};
use irpass_ir::{AttrValue, Attrs, DType, Function, Module, OpPattern, Type};
use rustc_hash::FxHashMap;
use serde::Deserialize;

pass_config_option! {
    /// The fusion level of `FuseOps`: 0 puts every operator in a function of its own, 1 and
    /// above fuse (default: the context's opt level).
    pub FUSE_OPT_LEVEL: i64 = "relay.FuseOps.fuse_opt_level";
    /// The most operators one fused function may hold (default 256).
    pub FUSE_MAX_DEPTH: usize = "relay.FuseOps.max_depth";
    /// Keep the constants a fused function uses inside it instead of passing them as
    /// arguments (default false, as TVM).
    pub FUSE_LINK_PARAMS: bool = "relay.FuseOps.link_params";
}

/// `FuseOps` and its options (each overrides its config key for this pass).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, PassOptions)]
#[serde(default)]
pub struct FuseOps {
    /// 0 puts every operator in a function of its own; 1 and above fuse.
    #[option(
        config = FUSE_OPT_LEVEL,
        default = i64::from(ctx.opt_level()),
        default_text = "the context's opt level"
    )]
    pub fuse_opt_level: Option<i64>,
    /// The most operators one fused function may hold.
    #[option(config = FUSE_MAX_DEPTH, default = 256)]
    pub max_depth: Option<usize>,
    /// Keep the constants a fused function uses inside it.
    #[option(config = FUSE_LINK_PARAMS, default = false)]
    pub link_params: Option<bool>,
}

/// Groups operators into `Primitive=1` functions, each a unit a backend compiles as one
/// kernel, by TVM's post-dominator fusion. An operator joins the group of its immediate
/// post-dominator (the closest operation all its values flow through) when every operation on
/// the way allows it: elementwise and broadcast operators fuse into the output of a
/// convolution, dense layer or pooling (out-elementwise-fusable) and into injective
/// operators and reductions after them, diamonds included; injective operators (reshape,
/// transpose, concatenate, split and its projections) fuse with each other, into tuples that
/// feed a later injective operator, and into reductions. A group holds at most one anchor
/// (convolution, dense, pooling) and `relay.FuseOps.max_depth` operators (default 256).
/// Scalar constants fuse into their users; other constants and every other value become
/// arguments of the fused function (`relay.FuseOps.link_params` keeps constants inside).
/// Opaque operators stay alone; `annotation.stop_fusion` is a boundary and is removed; `let`
/// values, `if`s and closures are boundaries, and a function already marked `Primitive=1` is
/// left as it is (so the pass is idempotent). `relay.FuseOps.fuse_opt_level` 0 makes one
/// function per operator. The options (`FuseOps{fuse_opt_level=0,max_depth=8}`) override the
/// config keys for this pass.
#[function_pass(opt_level = 0, default, options)]
impl FuseOps {
    fn transform_function(
        &self,
        func: Function,
        module: &Module,
        ctx: &PassContext,
    ) -> irpass::Result<Function> {
        if func.has_attr("Primitive") {
            return Ok(func);
        }
        let options = FuseOptions {
            fuse: self.fuse_opt_level(ctx) > 0,
            max_depth: self.max_depth(ctx).max(1),
            link_params: self.link_params(ctx),
        };
        let types = Types::of(&func, module, ctx)?;
        let tree = ctx.function_analysis(&PostDominators, &func, module);
        Ok(func.with_code(fuse_ops(&func.code, &types, &tree, options)))
    }
}

/// How `FuseOps` is asked to fuse (its configuration).
#[derive(Clone, Copy, Debug)]
pub struct FuseOptions {
    /// Fuse at all (false: every operator call becomes a function of its own).
    pub fuse: bool,
    /// The most operators one group may hold.
    pub max_depth: usize,
    /// Keep constants inside the fused functions instead of passing them as arguments.
    pub link_params: bool,
}

/// Groups operators into `Primitive=1` functions, as the registered `FuseOps` (whose doc
/// comment gives the rules). `types` are the input's, `tree` its data-flow graph and
/// post-dominator tree. `None` when nothing changes. (The caller leaves a `Primitive`
/// function alone.)
pub fn fuse_ops(
    f: &ArenaFunction,
    types: &BodyTypes,
    tree: &PostDominatorTree,
    options: FuseOptions,
) -> Option<ArenaFunction> {
    let grouping = Partition::new(&f.body, types, tree, options).run();
    f.rewrite(&mut Fuser {
        root_of: grouping,
        types,
        link_params: options.link_params,
        built: FxHashMap::default(),
        param_of: FxHashMap::default(),
        scratch: (Vec::new(), Vec::new()),
    })
}

/// TVM's `OpPatternKind`, with the tuple kind operators do not have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    ElemWise = 0,
    Broadcast = 1,
    Injective = 2,
    CommReduce = 3,
    OutEWiseFusable = 4,
    Tuple = 7,
    Opaque = 8,
}

impl From<OpPattern> for Kind {
    fn from(p: OpPattern) -> Kind {
        match p {
            OpPattern::ElemWise => Kind::ElemWise,
            OpPattern::Broadcast => Kind::Broadcast,
            OpPattern::Injective => Kind::Injective,
            OpPattern::CommReduce => Kind::CommReduce,
            OpPattern::OutEWiseFusable => Kind::OutEWiseFusable,
            OpPattern::Opaque => Kind::Opaque,
        }
    }
}

/// Whether a constant is a scalar of a dtype the code generators inline.
fn simple_scalar(t: &irpass_ir::Tensor) -> bool {
    t.shape().is_empty()
        && matches!(
            t.dtype(),
            DType::Int32 | DType::Int64 | DType::Float32 | DType::Float64 | DType::Bool
        )
}

fn is_stop_fusion(body: &Body, e: ExprId) -> bool {
    body.op_call(e)
        .is_some_and(|(op, _, _)| op.name() == "annotation.stop_fusion")
}

fn is_tensor(t: &Type) -> bool {
    matches!(t, Type::Tensor(_))
}

/// Which nodes lie inside a closure marked `Primitive` (an earlier FuseOps made it): they are
/// fused already and left alone, so that the pass is idempotent. (TVM skips `Primitive=1`
/// only, and fuses the body of a `Primitive=0` function — a group of tuples and projections
/// without a call — again on a second run; this pass skips both.)
fn inside_primitive(body: &Body, tree: &PostDominatorTree) -> Vec<bool> {
    let mut inside = vec![false; body.len()];
    let mut stack = Vec::new();
    for &e in tree.order() {
        if let Node::Closure(c) = body.node(e) {
            let data = body.closure(*c);
            if data.attrs.get("Primitive").is_some() {
                stack.push(data.body);
            }
        }
    }
    while let Some(e) = stack.pop() {
        if !std::mem::replace(&mut inside[e.index()], true) {
            body.for_each_operand(e, |o| stack.push(o));
        }
    }
    inside
}

/// A group of the union-find: each node starts in a group of its own.
#[derive(Clone, Debug)]
struct Group {
    parent: Option<u32>,
    kind: Kind,
    /// The node whose value is the group's output (of the group the node started).
    root: ExprId,
    /// Whether it holds an out-elementwise-fusable operator (a convolution, dense, pooling).
    anchor: bool,
    /// How many nodes it holds (up to date on a group that is its own root).
    nodes: u32,
}

/// The state of TVM's graph partitioner over one function.
struct Partition<'a> {
    body: &'a Body,
    types: &'a BodyTypes,
    tree: &'a PostDominatorTree,
    options: FuseOptions,
    /// Each node's own group (by node index).
    groups: Vec<Group>,
    /// The combined pattern of every flow from a node to its post-dominator (by node index).
    dom_kind: Vec<Kind>,
    /// Walk marks, one stamp per walk, and the walk's stack (kept between walks).
    seen: Vec<u32>,
    stamp: u32,
    stack: Vec<ExprId>,
    fused: Vec<bool>,
}

impl<'a> Partition<'a> {
    fn new(
        body: &'a Body,
        types: &'a BodyTypes,
        tree: &'a PostDominatorTree,
        options: FuseOptions,
    ) -> Self {
        let fused = inside_primitive(body, tree);
        let mut p = Partition {
            body,
            types,
            tree,
            options,
            groups: Vec::with_capacity(body.len()),
            dom_kind: vec![Kind::Opaque; body.len()],
            seen: vec![0; body.len()],
            stamp: 0,
            stack: Vec::new(),
            fused,
        };
        for e in body.ids() {
            let kind = p.node_kind(e);
            p.groups.push(Group {
                parent: None,
                kind,
                root: e,
                anchor: kind == Kind::OutEWiseFusable,
                nodes: 1,
            });
        }
        for &e in tree.order().iter().rev() {
            let mut kind = Kind::ElemWise;
            for &c in tree.consumers(e) {
                kind = kind.max(p.edge_kind(e, c));
            }
            tree.for_each_between(e, |u| kind = kind.max(p.dom_kind[u.index()]));
            p.dom_kind[e.index()] = kind;
        }
        p
    }

    /// A node's pattern, as TVM's forward graph gives it.
    fn node_kind(&self, e: ExprId) -> Kind {
        let b = self.body;
        if self.fused[e.index()] {
            return Kind::Opaque;
        }
        match b.node(e) {
            Node::CallOp { .. } => {
                let (op, _, _) = b.op_call(e).expect("an operator call");
                op.def().pattern.into()
            }
            Node::Tuple(_) => Kind::Tuple,
            Node::Proj(t, _) if self.all_tensors(*t) => Kind::Injective,
            // A scalar of a simple dtype fuses into its users (the code generators inline it);
            // other constants are arguments of the functions that use them.
            Node::Constant(k) if simple_scalar(b.constant(*k)) => Kind::ElemWise,
            _ => Kind::Opaque,
        }
    }

    /// Whether the tuple `t` holds tensors only (fusion goes through projections of those).
    fn all_tensors(&self, t: ExprId) -> bool {
        matches!(self.types.of(t), Type::Tuple(fields) if fields.iter().all(is_tensor))
    }

    /// The pattern of the flow of `o` into its consumer `c`.
    fn edge_kind(&self, o: ExprId, c: ExprId) -> Kind {
        if self.fused[c.index()] {
            return Kind::Opaque;
        }
        match self.body.node(c) {
            Node::CallOp { .. } => {
                // (The consumer's own group still holds its pattern: no merge has happened.)
                let kind = self.groups[c.index()].kind;
                // A broadcast that keeps its operand's shape is elementwise for that operand.
                let same_shape = match (self.types.of(o), self.types.of(c)) {
                    (Type::Tensor(a), Type::Tensor(r)) => a.shape == r.shape,
                    _ => false,
                };
                if kind == Kind::Broadcast && same_shape {
                    Kind::ElemWise
                } else {
                    kind
                }
            }
            Node::Tuple(_) if is_tensor(self.types.of(o)) => Kind::Injective,
            Node::Proj(t, _) if self.all_tensors(*t) => Kind::Injective,
            _ => Kind::Opaque,
        }
    }

    fn find(&mut self, g: u32) -> u32 {
        let mut root = g;
        while let Some(p) = self.groups[root as usize].parent {
            root = p;
        }
        let mut at = g;
        while let Some(p) = self.groups[at as usize].parent {
            if p == root {
                break;
            }
            self.groups[at as usize].parent = Some(root);
            at = p;
        }
        root
    }

    fn root_kind(&mut self, e: ExprId) -> Kind {
        let r = self.find(e.index() as u32);
        self.groups[r as usize].kind
    }

    fn merge(&mut self, child: u32, parent: u32) {
        let (child, parent) = (self.find(child), self.find(parent));
        if child == parent {
            return;
        }
        let c = self.groups[child as usize].clone();
        let p = &mut self.groups[parent as usize];
        p.nodes += c.nodes;
        if c.anchor {
            p.anchor = true;
            p.kind = p.kind.max(c.kind);
        }
        self.groups[child as usize].parent = Some(parent);
    }

    /// Starts a walk over the flows from `src` (not `src` itself) that stops at `sink`: the
    /// walk visits each node once.
    fn walk_from(
        &mut self,
        src: ExprId,
        sink: ExprId,
        mut visit: impl FnMut(&mut Self, ExprId) -> bool,
    ) -> bool {
        let tree = self.tree;
        self.stamp += 1;
        let mut stack = std::mem::take(&mut self.stack);
        stack.clear();
        stack.extend(tree.consumers(src).iter().rev().copied());
        let mut all = true;
        while let Some(e) = stack.pop() {
            if std::mem::replace(&mut self.seen[e.index()], self.stamp) == self.stamp {
                continue;
            }
            if !visit(self, e) {
                all = false;
                break;
            }
            if e != sink {
                stack.extend(tree.consumers(e).iter().rev().copied());
            }
        }
        self.stack = stack;
        all
    }

    /// Whether every node on the flows from `src` to `sink` (its post-dominator) has a group
    /// whose pattern satisfies `ok` (told whether the node is the sink).
    fn check_path(&mut self, src: ExprId, sink: ExprId, ok: fn(Kind, bool) -> bool) -> bool {
        self.walk_from(src, sink, |p, e| {
            let kind = p.root_kind(e);
            ok(kind, e == sink)
        })
    }

    /// Puts `src` and every node on its flows to `sink` into `sink`'s group.
    fn commit_fuse(&mut self, src: ExprId, sink: ExprId) {
        let target = sink.index() as u32;
        self.merge(src.index() as u32, target);
        self.walk_from(src, sink, |p, e| {
            if e != sink {
                p.merge(e.index() as u32, target);
            }
            true
        });
    }

    /// The size of `sink`'s group if `src` and the nodes between them joined it.
    fn fused_size(&mut self, src: ExprId, sink: ExprId) -> usize {
        let target = self.find(sink.index() as u32);
        let mut total = self.groups[target as usize].nodes as usize;
        total += self.groups[src.index()].nodes as usize;
        self.walk_from(src, sink, |p, e| {
            if e != sink {
                total += p.groups[e.index()].nodes as usize;
            }
            true
        });
        total
    }

    /// Runs the three phases and says, for each node, which node's value its group outputs
    /// (`None` for nodes inside `Primitive` functions).
    fn run(mut self) -> Vec<Option<ExprId>> {
        if self.options.fuse {
            for phase in 0..3 {
                self.phase(phase);
            }
        }
        let mut root_of = vec![None; self.body.len()];
        for i in 0..self.tree.order().len() {
            let e = self.tree.order()[i];
            if !self.fused[e.index()] {
                let r = self.find(e.index() as u32);
                root_of[e.index()] = Some(self.groups[r as usize].root);
            }
        }
        root_of
    }

    /// Phase 0 fuses anchors and elementwise/broadcast operators into their post-dominators;
    /// phase 1 injective operators and tuples; phase 2 injective operators into tuples that
    /// joined a later injective group.
    fn phase(&mut self, phase: u32) {
        for i in 0..self.tree.order().len() {
            let e = self.tree.order()[i];
            let kind = self.groups[e.index()].kind;
            if kind == Kind::Opaque {
                continue;
            }
            let Some(sink) = self.tree.post_dominator(e) else {
                continue;
            };
            // (TVM checks the size first; it has no effect, so it is checked last here, only
            // for a fusion the patterns allow.)
            let dom_kind = self.dom_kind[e.index()];
            if phase == 2 {
                if kind > Kind::Injective {
                    continue;
                }
                let sink_root = self.find(sink.index() as u32);
                let sink_root_kind = self.groups[sink_root as usize].kind;
                if sink_root_kind == Kind::Tuple {
                    continue;
                }
                if self.groups[sink.index()].kind == Kind::Tuple
                    && sink_root_kind <= Kind::Injective
                    && self.check_path(e, sink, |k, _| k <= Kind::Injective)
                    && self.fused_size(e, sink) <= self.options.max_depth
                {
                    self.commit_fuse(e, sink);
                }
                continue;
            }
            if self.find(e.index() as u32) == self.find(sink.index() as u32) {
                continue;
            }
            if self.groups[sink.index()].kind == Kind::Tuple {
                continue;
            }
            let fuse = match kind {
                Kind::OutEWiseFusable => {
                    phase == 0
                        && dom_kind == Kind::ElemWise
                        && self.check_path(e, sink, |k, _| k <= Kind::Broadcast)
                }
                k if k <= Kind::Broadcast => {
                    (dom_kind <= Kind::Injective || dom_kind == Kind::CommReduce)
                        && self.check_path(e, sink, |k, is_sink| {
                            if is_sink {
                                k <= Kind::OutEWiseFusable
                            } else {
                                k <= Kind::Injective
                            }
                        })
                }
                Kind::Injective | Kind::Tuple => {
                    phase == 1 && self.check_path(e, sink, |k, _| k <= Kind::Injective)
                }
                _ => false,
            };
            if fuse && self.fused_size(e, sink) <= self.options.max_depth {
                self.commit_fuse(e, sink);
            }
        }
    }
}

struct Fuser<'t> {
    /// For each node, the node whose value its group outputs.
    root_of: Vec<Option<ExprId>>,
    types: &'t BodyTypes,
    link_params: bool,
    /// Per group being built (kept between groups, cleared): each member's node in the new
    /// function, each distinct argument's parameter, operand lists.
    built: FxHashMap<ExprId, ExprId>,
    param_of: FxHashMap<ExprId, ExprId>,
    scratch: (Vec<ExprId>, Vec<ExprId>),
}

/// A step of building a fused function's body: visit the pair (old, new), or build a member
/// once its operands are built.
enum Task {
    Visit(ExprId, ExprId),
    Build(ExprId, ExprId),
}

impl Fuser<'_> {
    fn in_group(&self, e: ExprId, root: ExprId) -> bool {
        self.root_of[e.index()] == Some(root)
    }
}

impl Rewrite for Fuser<'_> {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: OldId, new: ExprId) -> Option<ExprId> {
        // The groups and the side-by-side walk below use the input body's own ids.
        let o = cx.old.body();
        let old = old.id();
        // Nodes inside `Primitive` functions have no group and stay.
        self.root_of[old.index()]?;
        match o.node(old) {
            // The boundary marker goes: its operand is the value.
            Node::CallOp { .. } if is_stop_fusion(o, old) => {
                let Node::CallOp { args, .. } = cx.new.body().node(new) else {
                    unreachable!("kept as it was")
                };
                return Some(cx.new.body().list(*args)[0]);
            }
            Node::CallOp { .. } if self.in_group(old, old) => {}
            // A projection is a function when it outputs a group that holds its tuple.
            Node::Proj(t, _) if self.in_group(old, old) && self.in_group(*t, old) => {}
            _ => return None,
        }
        // The group's members as a closure: walk the old and the new nodes side by side
        // (members other than the output are not rewritten, so the new one has the old one's
        // operands, rewritten), members rebuilt inside, everything else a parameter (one per
        // distinct argument), constants inside too when linked.
        let mut built = std::mem::take(&mut self.built);
        let mut param_of = std::mem::take(&mut self.param_of);
        let (mut olds, mut news) = std::mem::take(&mut self.scratch);
        built.clear();
        param_of.clear();
        let mut params = Vec::new();
        let mut inputs = Vec::new();
        let mut has_call = false;
        let mut tasks = vec![Task::Visit(old, new)];
        while let Some(task) = tasks.pop() {
            match task {
                Task::Visit(ov, nv) => {
                    if built.contains_key(&ov) {
                        continue;
                    }
                    let member = self.in_group(ov, old);
                    match o.node(ov) {
                        Node::CallOp { .. } | Node::Tuple(_) | Node::Proj(..) if member => {
                            tasks.push(Task::Build(ov, nv));
                            olds.clear();
                            o.for_each_operand(ov, |a| olds.push(a));
                            news.clear();
                            cx.new.body().for_each_operand(nv, |a| news.push(a));
                            for (&oa, &na) in olds.iter().zip(&news).rev() {
                                tasks.push(Task::Visit(oa, na));
                            }
                        }
                        // A scalar constant is written inside every function that uses it (a
                        // constant shared by two groups is one node here where TVM has two).
                        Node::Constant(k)
                            if member || self.link_params || simple_scalar(o.constant(*k)) =>
                        {
                            built.insert(ov, nv);
                        }
                        _ => {
                            let use_p = *param_of.entry(nv).or_insert_with(|| {
                                let ty = Some(self.types.of(ov).clone()).filter(Type::is_complete);
                                let p = cx.new.var(&format!("p{}", params.len()), ty, None);
                                params.push(p);
                                inputs.push(nv);
                                cx.new.use_var(p)
                            });
                            built.insert(ov, use_p);
                        }
                    }
                }
                Task::Build(ov, nv) => {
                    if built.contains_key(&ov) {
                        continue;
                    }
                    olds.clear();
                    o.for_each_operand(ov, |a| olds.push(built[&a]));
                    let args = &olds;
                    let e = match cx.new.body().node(nv).clone() {
                        Node::CallOp { sig, .. } => {
                            has_call = true;
                            cx.new.call_sig(sig, args)
                        }
                        Node::Tuple(_) => cx.new.tuple(args),
                        Node::Proj(_, i) => cx.new.proj(args[0], i),
                        _ => unreachable!("members are operations"),
                    };
                    built.insert(ov, e);
                }
            }
        }
        let ret = Some(self.types.of(old).clone()).filter(Type::is_complete);
        let closure = cx.new.closure(ClosureData {
            params,
            ret_type: ret,
            attrs: Attrs::from_pairs([("Primitive", AttrValue::Int(i64::from(has_call)))]),
            body: built[&old],
        });
        self.built = built;
        self.param_of = param_of;
        self.scratch = (olds, news);
        Some(cx.new.call(closure, &inputs))
    }
}
