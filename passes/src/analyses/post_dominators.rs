//! [`PostDominators`]: the data-flow graph of a function and its post-dominator tree.

use irpass::PassContext;
use irpass::analysis::{Analysis, FunctionAnalysis};
use irpass_ir::body::{Body, ExprId, Idx, Node};
use irpass_ir::{Function, Module};

/// The data-flow graph of a function's code and its post-dominator tree, as operator fusion
/// needs them (TVM builds the same two for `FuseOps`).
///
/// The graph's nodes are the nodes the result reaches. A value *flows* into the operator
/// calls, tuples and projections that take it as an operand, and into the arguments of
/// function calls; every other use makes it *escape*: being the function's result, a `let`'s
/// value or result, an `if`'s condition or branch, a closure's result or a callee. A node's
/// *post-dominator* is the closest node every flow from it passes through before it leaves
/// the graph; a node that escapes, or whose flows escape on different paths, has none.
///
/// The tree is built in one scan from the result backwards, each node's parent being the
/// least common ancestor of its consumers' (the graph is acyclic), so it costs the graph's
/// size times the depth the ancestor searches climb.
///
/// ```
/// use irpass::PassContext;
/// use irpass_passes::analyses::PostDominators;
/// use irpass_passes::ir::Module;
///
/// // A diamond: %x flows through exp and negative, which meet at add.
/// let module = Module::parse(
///     "def @main(%x: float32) { %0 = exp(%x); %1 = negative(%0); %2 = tanh(%0); add(%1, %2) }",
/// ).unwrap();
/// let main = module.get("main").unwrap();
/// let tree = PostDominators::of(main);
/// let body = &main.code.body;
/// let exp = tree.order().iter().copied().find(|&e| body.op_call(e).is_some()).unwrap();
/// // The add post-dominates the exp (both paths meet there); the add itself escapes.
/// assert_eq!(tree.post_dominator(exp), Some(main.code.root));
/// assert!(tree.escapes(main.code.root));
/// assert_eq!(tree.post_dominator(main.code.root), None);
/// # let ctx = PassContext::default();
/// # let cached = ctx.function_analysis(&PostDominators, main, &module);
/// # assert_eq!(cached.post_dominator(exp), Some(main.code.root));
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct PostDominators;

impl Analysis for PostDominators {
    const NAME: &'static str = "PostDominators";
}

impl FunctionAnalysis<Module> for PostDominators {
    type Output = PostDominatorTree;
    fn compute(&self, func: &Function, _module: &Module, _ctx: &PassContext) -> PostDominatorTree {
        PostDominatorTree::of(&func.code.body, func.code.root)
    }
}

impl PostDominators {
    /// The tree of `func` (what the analysis computes, without a context).
    pub fn of(func: &Function) -> PostDominatorTree {
        PostDominatorTree::of(&func.code.body, func.code.root)
    }
}

/// What [`PostDominators`] computes. Indexed by node id; a node the result does not reach is
/// in no list and has no consumers.
#[derive(Clone, Debug)]
pub struct PostDominatorTree {
    order: Vec<ExprId>,
    /// Consumers of node `i`: `consumers[start[i]..start[i + 1]]`.
    start: Vec<u32>,
    consumers: Vec<ExprId>,
    escapes: Vec<bool>,
    parent: Vec<Option<ExprId>>,
    depth: Vec<u32>,
}

/// The operands a node's value flows through (the rest escape).
fn flows(body: &Body, e: ExprId, mut f: impl FnMut(ExprId, bool)) {
    match body.node(e) {
        Node::CallOp { .. } | Node::Tuple(_) | Node::Proj(..) => {
            body.for_each_operand(e, |o| f(o, true));
        }
        Node::Call { callee, args } => {
            f(*callee, false);
            body.list(*args).iter().for_each(|&a| f(a, true));
        }
        _ => body.for_each_operand(e, |o| f(o, false)),
    }
}

impl PostDominatorTree {
    /// The graph and tree of the code of `body` whose result is `root`.
    pub fn of(body: &Body, root: ExprId) -> PostDominatorTree {
        let n = body.len();
        let order = post_order(body, root);
        let mut escapes = vec![false; n];
        escapes[root.index()] = true;
        let mut count = vec![0u32; n + 1];
        for &e in &order {
            flows(body, e, |o, flow| {
                if flow {
                    count[o.index()] += 1;
                } else {
                    escapes[o.index()] = true;
                }
            });
        }
        // Prefix sums, then fill each node's slice (consumers in the order they are reached).
        let mut start = vec![0u32; n + 1];
        for i in 0..n {
            start[i + 1] = start[i] + count[i];
        }
        let mut next = start.clone();
        let mut consumers = vec![ExprId::new(0); start[n] as usize];
        for &e in &order {
            flows(body, e, |o, flow| {
                if flow {
                    consumers[next[o.index()] as usize] = e;
                    next[o.index()] += 1;
                }
            });
        }
        let mut tree = PostDominatorTree {
            order,
            start,
            consumers,
            escapes,
            parent: vec![None; n],
            depth: vec![0; n],
        };
        for i in (0..tree.order.len()).rev() {
            let e = tree.order[i];
            let parent = if tree.escapes[e.index()] {
                None
            } else {
                tree.lca_of_consumers(e, |_| {})
            };
            tree.depth[e.index()] = parent.map_or(1, |p| tree.depth[p.index()] + 1);
            tree.parent[e.index()] = parent;
        }
        tree
    }

    /// The nodes of the graph, operands before the nodes that use them: the post-order of a
    /// depth-first walk from the result that takes operands left to right.
    pub fn order(&self) -> &[ExprId] {
        &self.order
    }

    /// The nodes `e`'s value flows into, in the order of [`order`](Self::order)'s walk (a
    /// consumer that takes `e` twice is listed twice).
    pub fn consumers(&self, e: ExprId) -> &[ExprId] {
        let i = e.index();
        &self.consumers[self.start[i] as usize..self.start[i + 1] as usize]
    }

    /// Whether `e` is used other than by flowing into an operation (see [`PostDominators`]).
    pub fn escapes(&self, e: ExprId) -> bool {
        self.escapes[e.index()]
    }

    /// The immediate post-dominator of `e`: its parent in the tree.
    pub fn post_dominator(&self, e: ExprId) -> Option<ExprId> {
        self.parent[e.index()]
    }

    /// The depth of `e` in the tree (a root has depth 1; an unreached node 0).
    pub fn depth(&self, e: ExprId) -> u32 {
        self.depth[e.index()]
    }

    /// Whether `a` post-dominates `b` (every flow from `b` passes through `a`); a node
    /// post-dominates itself.
    pub fn post_dominates(&self, a: ExprId, b: ExprId) -> bool {
        let mut at = Some(b);
        while let Some(x) = at {
            if x == a {
                return true;
            }
            if self.depth(x) <= self.depth(a) {
                return false;
            }
            at = self.post_dominator(x);
        }
        false
    }

    /// Calls `f` on every node the search for `e`'s post-dominator climbed past: the tree
    /// nodes on the ways from `e`'s consumers up to (not including) its post-dominator. A
    /// property of every path from `e` to its post-dominator is a property of `e`'s flows
    /// into its consumers and of these nodes' own ways to their parents (`FuseOps` combines
    /// operator patterns so). A node may be reported more than once.
    pub fn for_each_between(&self, e: ExprId, f: impl FnMut(ExprId)) {
        if !self.escapes(e) {
            self.lca_of_consumers(e, f);
        }
    }

    /// The least common ancestor of `e`'s consumers in the tree (their parents known), calling
    /// `f` on each node climbed past.
    fn lca_of_consumers(&self, e: ExprId, mut f: impl FnMut(ExprId)) -> Option<ExprId> {
        let (&first, rest) = self.consumers(e).split_first()?;
        let mut acc = Some(first);
        for &c in rest {
            acc = self.lca(acc, Some(c), &mut f);
        }
        acc
    }

    fn lca(
        &self,
        mut a: Option<ExprId>,
        mut b: Option<ExprId>,
        f: &mut impl FnMut(ExprId),
    ) -> Option<ExprId> {
        loop {
            let (x, y) = (a?, b?);
            if x == y {
                return Some(x);
            }
            let (dx, dy) = (self.depth(x), self.depth(y));
            if dx >= dy {
                f(x);
                a = self.post_dominator(x);
            }
            if dy >= dx {
                f(y);
                b = self.post_dominator(y);
            }
        }
    }
}

/// The post-order of a depth-first walk from `root`, operands left to right (with an explicit
/// stack: the input's depth is not bounded).
fn post_order(body: &Body, root: ExprId) -> Vec<ExprId> {
    let mut seen = vec![false; body.len()];
    let mut order = Vec::new();
    let mut stack = vec![(root, false)];
    let mut operands = Vec::new();
    while let Some((e, done)) = stack.pop() {
        if done {
            order.push(e);
            continue;
        }
        if std::mem::replace(&mut seen[e.index()], true) {
            continue;
        }
        stack.push((e, true));
        operands.clear();
        body.for_each_operand(e, |o| operands.push(o));
        stack.extend(
            operands
                .iter()
                .rev()
                .filter(|o| !seen[o.index()])
                .map(|&o| (o, false)),
        );
    }
    order
}
