//! Copying a region of one body into another (inlining a function, lifting a closure): one
//! scan over the region's ids, variables substituted or copied fresh.

use rustc_hash::FxHashMap;

use super::{Body, BodyBuilder, ClosureData, ExprId, Node, VarId};

/// What [`copy_region`] substitutes for variables: a variable of the source body to an
/// expression of the destination.
pub type VarSubst = FxHashMap<VarId, ExprId>;

/// Copies the nodes of `src` reachable from `root` into `dst` and returns the copy of `root`.
///
/// A use of a variable that `subst` maps becomes the expression (of `dst`) it maps to; every
/// other variable, bound in the region or not, becomes a fresh variable of `dst` with the same
/// data (one per source variable). Spans are kept. The region is copied in id order, which
/// keeps it operands first; no recursion, and time follows the region's size.
///
/// ```
/// use irpass_ir::body::{BodyBuilder, VarSubst, copy_region};
/// use irpass_ir::{Attrs, Op};
/// let mut src = BodyBuilder::new();
/// let a = src.var("a", None, None);
/// let ae = src.use_var(a);
/// let root = src.call_op(Op::get("exp").unwrap(), &[ae], Attrs::new());
/// let src = src.finish();
///
/// let mut dst = BodyBuilder::new();
/// let x = dst.var("x", None, None);
/// let xe = dst.use_var(x);
/// let mut subst = VarSubst::default();
/// subst.insert(a, xe); // the parameter `%a` becomes `%x`
/// let copy = copy_region(&src, root, &mut dst, &subst);
/// assert_eq!(dst.body().op_call(copy).unwrap().1, [xe]);
/// ```
pub fn copy_region(src: &Body, root: ExprId, dst: &mut BodyBuilder, subst: &VarSubst) -> ExprId {
    // The region in id order (operands first): found by a walk from `root`, so the cost
    // follows the region, not the whole body.
    let mut region = post_order(src, root);
    region.sort_unstable();
    let mut map: FxHashMap<ExprId, ExprId> = FxHashMap::default();
    let mut fresh: FxHashMap<VarId, VarId> = FxHashMap::default();
    let mut var = |dst: &mut BodyBuilder, v: VarId| {
        *fresh
            .entry(v)
            .or_insert_with(|| dst.add_var(src.var(v).clone()))
    };
    for id in region {
        let get = |map: &FxHashMap<ExprId, ExprId>, e: ExprId| map[&e];
        let new = match src.node(id) {
            Node::Var(v) => match subst.get(v) {
                Some(&e) => e,
                None => {
                    let nv = var(dst, *v);
                    dst.use_var(nv)
                }
            },
            Node::Global(g) => dst.global(src.global(*g)),
            Node::Constant(k) => {
                dst.constant_hashed(src.constant(*k).clone(), src.constant_hash(*k))
            }
            Node::CallOp { .. } => {
                let (op, args, attrs) = src.op_call(id).expect("an operator call");
                let args: Vec<ExprId> = args.iter().map(|&a| get(&map, a)).collect();
                dst.call_op(op, &args, attrs.clone())
            }
            Node::Call { callee, args } => {
                let args: Vec<ExprId> = src.list(*args).iter().map(|&a| get(&map, a)).collect();
                dst.call(get(&map, *callee), &args)
            }
            Node::Let { bindings, body } => {
                let bindings: Vec<(VarId, ExprId)> = src
                    .bindings(*bindings)
                    .iter()
                    .map(|&(v, value)| (var(dst, v), get(&map, value)))
                    .collect();
                dst.lets(&bindings, get(&map, *body))
            }
            Node::Tuple(fields) => {
                let fields: Vec<ExprId> = src.list(*fields).iter().map(|&a| get(&map, a)).collect();
                dst.tuple(&fields)
            }
            Node::Proj(t, i) => dst.proj(get(&map, *t), *i),
            Node::If(c, t, o) => dst.if_(get(&map, *c), get(&map, *t), get(&map, *o)),
            Node::Closure(c) => {
                let data = src.closure(*c);
                let params = data.params.iter().map(|&p| var(dst, p)).collect();
                dst.closure(ClosureData {
                    params,
                    ret_type: data.ret_type.clone(),
                    attrs: data.attrs.clone(),
                    body: get(&map, data.body),
                })
            }
        };
        if !matches!(src.node(id), Node::Var(_)) {
            dst.set_span(new, src.span(id));
        }
        map.insert(id, new);
    }
    map[&root]
}

/// The nodes of `body` reachable from `root` in post-order (operands left to right before
/// their user, each node once): the order in which an evaluation first meets them. An
/// explicit stack, no recursion; time and memory follow the region, not the whole body (so
/// walking each of many closures of one body stays linear).
pub fn post_order(body: &Body, root: ExprId) -> Vec<ExprId> {
    let mut out = Vec::new();
    let mut seen: rustc_hash::FxHashSet<ExprId> = rustc_hash::FxHashSet::default();
    let mut stack = vec![(root, false)];
    while let Some((e, expanded)) = stack.pop() {
        if expanded {
            out.push(e);
            continue;
        }
        if !seen.insert(e) {
            continue;
        }
        stack.push((e, true));
        let at = stack.len();
        body.for_each_operand(e, |o| stack.push((o, false)));
        stack[at..].reverse();
    }
    out
}
