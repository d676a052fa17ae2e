//! `FuseOps`, as a rewrite of a function's code.

use irpass_ir::arena::{
    ArenaFunction, Body, BodyTypes, ClosureData, ExprId, Idx, Node, Rewrite, RewriteCx, Rewritten,
    rewrite_body,
};
use irpass_ir::{AttrValue, Attrs, OpPattern};
use rustc_hash::FxHashMap;

/// Groups operators into `Primitive=1` functions, as the registered `FuseOps` (whose doc
/// comment gives the rules): with `fuse` false every operator gets a function of its own; a
/// group holds at most `max_depth` operators. `types` and `uses` (each node's use count,
/// [`Body::use_counts`]) are the input's. `None` when there is no operator. (The caller leaves
/// a `Primitive` function alone.)
pub fn fuse_ops(
    f: &ArenaFunction,
    types: &BodyTypes,
    uses: &[u32],
    fuse: bool,
    max_depth: usize,
) -> Option<Rewritten> {
    let grouping = Grouping::analyse(&f.body, f.root, uses, fuse, max_depth.max(1));
    rewrite_body(
        &f.body,
        &f.params,
        f.root,
        &mut Fuser {
            grouping,
            types,
            params: 0,
        },
    )
}

fn pattern(b: &Body, e: ExprId) -> Option<OpPattern> {
    b.op_call(e).map(|(op, _, _)| op.def().pattern)
}

struct Group {
    /// The strongest pattern in the group (what may still fuse after it).
    kind: OpPattern,
    /// The members.
    members: Vec<ExprId>,
}

/// Which group each operator call of the input belongs to, by the group's root (its output).
struct Grouping {
    root_of: Vec<Option<ExprId>>,
}

/// Which nodes lie inside a closure marked `Primitive=1` (an earlier FuseOps made it): they are
/// fused already and left alone, as TVM does, so that the pass is idempotent.
fn inside_primitive(body: &Body, live: &[bool]) -> Vec<bool> {
    let mut inside = vec![false; body.len()];
    let mut stack = Vec::new();
    for e in body.ids().filter(|e| live[e.index()]) {
        if let Node::Closure(c) = body.node(e) {
            let data = body.closure(*c);
            if data.attrs.is_true("Primitive") {
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

/// Whether a group of this kind holds an anchor: the operator the fused kernel is built around.
fn is_anchor(kind: OpPattern) -> bool {
    matches!(kind, OpPattern::CommReduce | OpPattern::OutEWiseFusable)
}

/// Whether a group of `producer` kind may fuse into a consumer of pattern `consumer`.
fn can_fuse(producer: OpPattern, consumer: OpPattern) -> bool {
    use OpPattern::*;
    match (producer, consumer) {
        (Opaque, _) | (_, Opaque) | (_, OutEWiseFusable) => false,
        (OutEWiseFusable | CommReduce, c) => c <= Broadcast,
        (_, c) => c <= CommReduce,
    }
}

impl Grouping {
    /// One scan over the ids (operands first): each operator call starts a group and absorbs
    /// the groups of the arguments it alone uses, where the patterns allow.
    fn analyse(body: &Body, root: ExprId, uses: &[u32], fuse: bool, max_depth: usize) -> Grouping {
        let live = body.reachable(root);
        let fused = inside_primitive(body, &live);
        let mut root_of: Vec<Option<ExprId>> = vec![None; body.len()];
        let mut groups: FxHashMap<ExprId, Group> = FxHashMap::default();
        for e in body.ids().filter(|e| live[e.index()] && !fused[e.index()]) {
            let Some(p) = pattern(body, e) else { continue };
            let mut group = Group {
                kind: p,
                members: vec![e],
            };
            let mut absorbed = Vec::new();
            if fuse {
                let (_, args, _) = body.op_call(e).expect("an operator call");
                for &a in args {
                    if uses[a.index()] != 1 || root_of[a.index()] != Some(a) {
                        continue;
                    }
                    let Some(ag) = groups.get(&a) else { continue };
                    // At most one anchor (a reduction, a conv2d or dense) per group, as TVM:
                    // `add(conv2d(..), conv2d(..))` fuses the add with one of them only.
                    let two_anchors = is_anchor(ag.kind) && is_anchor(group.kind);
                    if can_fuse(ag.kind, p)
                        && !two_anchors
                        && group.members.len() + ag.members.len() <= max_depth
                    {
                        group.kind = group.kind.max(ag.kind);
                        absorbed.push(a);
                    }
                }
            }
            for a in absorbed {
                if let Some(ag) = groups.remove(&a) {
                    for m in &ag.members {
                        root_of[m.index()] = Some(e);
                    }
                    group.members.extend(ag.members);
                }
            }
            root_of[e.index()] = Some(e);
            groups.insert(e, group);
        }
        Grouping { root_of }
    }
}

struct Fuser<'t> {
    grouping: Grouping,
    types: &'t BodyTypes,
    /// Parameters made so far in the current group (for their names).
    params: usize,
}

/// A step of building a fused function's body: visit the pair (old, new), or build a member
/// once its operands are built.
enum Task {
    Visit(ExprId, ExprId),
    Build(ExprId, ExprId),
}

impl Rewrite for Fuser<'_> {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: ExprId, new: ExprId) -> Option<ExprId> {
        if self.grouping.root_of[old.index()] != Some(old) || pattern(cx.old, old).is_none() {
            return None;
        }
        // The group's members as a closure: walk the old and the new nodes side by side
        // (members are not rewritten, so the new one has the old one's operands, rewritten),
        // members rebuilt inside, constants shared, everything else a parameter.
        let o = cx.old;
        let mut built: FxHashMap<ExprId, ExprId> = FxHashMap::default();
        let mut params = Vec::new();
        let mut inputs = Vec::new();
        self.params = 0;
        let mut tasks = vec![Task::Visit(old, new)];
        while let Some(task) = tasks.pop() {
            match task {
                Task::Visit(ov, nv) => {
                    if built.contains_key(&ov) {
                        continue;
                    }
                    let member =
                        self.grouping.root_of[ov.index()] == Some(old) && pattern(o, ov).is_some();
                    if member {
                        tasks.push(Task::Build(ov, nv));
                        let (_, oargs, _) = o.op_call(ov).expect("a member is a call");
                        let (_, nargs, _) = cx.new.body().op_call(nv).expect("kept as it was");
                        for (&oa, &na) in oargs.iter().zip(nargs).rev() {
                            tasks.push(Task::Visit(oa, na));
                        }
                    } else if matches!(o.node(ov), Node::Constant(_)) {
                        built.insert(ov, nv);
                    } else {
                        let ty = Some(self.types.of(ov).clone()).filter(|t| t.is_complete());
                        let p = cx.new.var(&format!("p{}", self.params), ty, None);
                        self.params += 1;
                        params.push(p);
                        inputs.push(nv);
                        let use_p = cx.new.use_var(p);
                        built.insert(ov, use_p);
                    }
                }
                Task::Build(ov, nv) => {
                    if built.contains_key(&ov) {
                        continue;
                    }
                    let (_, oargs, _) = o.op_call(ov).expect("a member is a call");
                    let args: Vec<ExprId> = oargs.iter().map(|a| built[a]).collect();
                    let Node::CallOp { sig, .. } = cx.new.body().node(nv).clone() else {
                        unreachable!("kept as it was")
                    };
                    let e = cx.new.call_sig(sig, &args);
                    built.insert(ov, e);
                }
            }
        }
        let ret = Some(self.types.of(old).clone()).filter(|t| t.is_complete());
        let closure = cx.new.closure(ClosureData {
            params,
            ret_type: ret,
            attrs: Attrs::from_pairs([("Primitive", AttrValue::Int(1))]),
            body: built[&old],
        });
        Some(cx.new.call(closure, &inputs))
    }
}
