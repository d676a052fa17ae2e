//! `SinkReshape`: the pass and its rewrite of a function's code.

use super::{reshape_like, reshape_to};
use crate::analyses::Types;
use irpass::{PassContext, function_pass};
use irpass_ir::body::{ArenaFunction, Body, ExprId, Idx};
use irpass_ir::infer::BodyTypes;
use irpass_ir::op::OpPattern;
use irpass_ir::rewrite::{OldId, Rewrite, RewriteCx};
use irpass_ir::{Function, Module, Type};
use rustc_hash::FxHashMap;

irpass::statistic! {
    /// Reshapes `SinkReshape` removed by computing elementwise work in the shape before them.
    pub static RESHAPES_REMOVED: "SinkReshape", "reshapes removed by sinking them past elementwise work";
}

/// Computes elementwise work that follows a reshape in the shape before it, so that the
/// reshape meets the one that undoes it and both go: a model that views a 2-D result as 3-D,
/// applies an activation and views it as 2-D again (GPT-2's GELU between two `Gemm`s) keeps
/// it 2-D throughout. From reshapes (`reshape`, `expand_dims`, `squeeze`) of one static shape
/// to another, the region of elementwise calls (`ElemWise` and `Broadcast` operators) whose
/// result has the reshaped shape and whose operands are in the region or single elements is
/// computed before the reshape; a value of the region read elsewhere is reshaped once for its
/// readers, and a reshape reading it reshapes the value before instead (nothing when that is
/// the shape it had). Done only where it leaves fewer nodes than it found. First, a split
/// along the last axis of such a reshape whose parts are all reshaped splits the value before
/// it (a transformer's joined query, key and value, each part viewed as heads).
#[function_pass(opt_level = 3, name = "SinkReshape")]
pub fn transform(func: Function, module: &Module, ctx: &PassContext) -> irpass::Result<Function> {
    let mut func = func;
    for step in [split_first, sink_reshape] {
        let Ok(types) = Types::of(&func, module, ctx) else {
            // An ill-typed function is left to the pass that reports it.
            return Ok(func);
        };
        let code = step(&func.code, &types);
        func = func.with_code(code);
    }
    Ok(func)
}

/// Splits the value before a reshape instead of the reshaped one, where the split is along
/// the last axis, the reshape keeps that size, and every part is read only by reshapes (which
/// then reshape the parts before): `split(reshape(y, (1, 16, 192)), axis=-1)` read by
/// reshapes to `(1, 16, 4, 16)` is `split(y, axis=-1)`, each part reshaped once. As the
/// registered `SinkReshape` does first; `None` when nothing changes.
pub fn split_first(f: &ArenaFunction, types: &BodyTypes) -> Option<ArenaFunction> {
    let body = &f.body;
    let users = body.users(f.root);
    let mut roles: FxHashMap<ExprId, SplitRole> = FxHashMap::default();
    // (The result is no split worth moving; any other node is reachable when it has users.)
    for id in body.ids().filter(|&id| !users[id.index()].is_empty()) {
        let Some((op, args, attrs)) = body.op_call(id) else {
            continue;
        };
        if op.name() != "split" {
            continue;
        }
        let r = args[0];
        let Some(y) = reshape_like(body, r) else {
            continue;
        };
        let (Some(from), Some(to)) = (static_shape(types, y), static_shape(types, r)) else {
            continue;
        };
        let axis = op.attr_value(attrs, "axis").and_then(|a| a.as_int());
        let last = to.len() as i64 - 1;
        if from.last() != to.last() || !matches!(axis, Some(a) if a == last || a == -1) {
            continue;
        }
        if users[r.index()].len() != 1 || r == f.root {
            continue;
        }
        // Every part read only by reshapes of static shape.
        let mut readers = Vec::new();
        let parts_ok = users[id.index()].iter().all(|&p| {
            matches!(body.node(p), irpass_ir::body::Node::Proj(..))
                && p != f.root
                && !users[p.index()].is_empty()
                && users[p.index()].iter().all(|&u| {
                    let shape = reshape_like(body, u).and_then(|_| static_shape(types, u));
                    shape.map(|s| readers.push((u, s))).is_some() && u != r
                })
        });
        if !parts_ok || readers.is_empty() {
            continue;
        }
        roles.insert(id, SplitRole::Split(y));
        for (u, shape) in readers {
            roles.insert(u, SplitRole::Reader(shape));
        }
        RESHAPES_REMOVED.inc();
    }
    if roles.is_empty() {
        return None;
    }
    f.rewrite(&mut SplitFirst { roles })
}

/// What an old node is to [`split_first`].
enum SplitRole {
    /// A split of a reshape of `.0`: it splits `.0` instead.
    Split(ExprId),
    /// A reshape of a part: to this static shape, from the part before.
    Reader(Vec<usize>),
}

struct SplitFirst {
    roles: FxHashMap<ExprId, SplitRole>,
}

impl Rewrite for SplitFirst {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: OldId, new: ExprId) -> Option<ExprId> {
        match self.roles.get(&old.id())? {
            SplitRole::Split(y) => {
                let y = cx.new_id(cx.old.at(*y))?;
                let (op, _, attrs) = cx.new.body().op_call(new)?;
                let mut attrs = attrs.clone();
                attrs.set("axis", irpass_ir::AttrValue::Int(-1));
                Some(cx.new.call_op(op, &[y], attrs))
            }
            SplitRole::Reader(shape) => {
                let (_, args, _) = cx.new.body().op_call(new)?;
                let part = args[0];
                let shape = shape.clone();
                Some(reshape_to(&mut cx.new, part, &shape))
            }
        }
    }
}

fn static_shape(types: &BodyTypes, e: ExprId) -> Option<Vec<usize>> {
    match types.of(e) {
        Type::Tensor(t) => t.static_shape(),
        _ => None,
    }
}

/// What a node is to an applied region.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Role {
    /// A reshape the region starts from: its value before is the input's.
    Seed,
    /// An elementwise call computed in the shape before; `exit` when something outside the
    /// region reads it (it is reshaped once for them).
    Member { exit: bool },
    /// A reshape reading a value of the region: it reshapes the value before instead, to
    /// its shape (`Region::shapes[.0]`; nothing when that is the shape before).
    Reader(usize),
}

/// One region: the nodes it changes, the shape after the reshapes it starts from, and the
/// shapes of its readers.
struct Region {
    roles: Vec<(ExprId, Role)>,
    from: Vec<usize>,
    to: Vec<usize>,
    shapes: Vec<Vec<usize>>,
    /// How many nodes fewer it leaves.
    gain: u64,
}

/// Sinks the reshapes of `f` (typed by `types`) past the elementwise work after them, where
/// that removes nodes, as the registered `SinkReshape`. `None` when nothing changes.
pub fn sink_reshape(f: &ArenaFunction, types: &BodyTypes) -> Option<ArenaFunction> {
    let body = &f.body;
    let users = body.users(f.root);
    // Reachable: the result, and every node with a user.
    let live: Vec<bool> = body
        .ids()
        .map(|id| id == f.root || !users[id.index()].is_empty())
        .collect();
    // The classes of reshapes, by the shapes before and after, in the order met.
    let mut classes: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
    for id in body.ids().filter(|id| live[id.index()]) {
        let Some(x) = reshape_like(body, id) else {
            continue;
        };
        let (Some(from), Some(to)) = (static_shape(types, x), static_shape(types, id)) else {
            continue;
        };
        if from != to && !classes.iter().any(|(a, b)| *a == from && *b == to) {
            classes.push((from, to));
        }
    }
    let mut taken = vec![false; body.len()];
    let mut regions = Vec::new();
    for (from, to) in classes {
        let Some(region) = grow(body, types, f.root, &live, &users, from, to) else {
            continue;
        };
        if region.roles.iter().any(|(id, _)| taken[id.index()]) {
            continue;
        }
        for (id, _) in &region.roles {
            taken[id.index()] = true;
        }
        RESHAPES_REMOVED.add(region.gain);
        regions.push(region);
    }
    if regions.is_empty() {
        return None;
    }
    let mut role = FxHashMap::default();
    for (r, region) in regions.iter().enumerate() {
        for &(id, how) in &region.roles {
            role.insert(id, (r, how));
        }
    }
    f.rewrite(&mut Sink {
        regions,
        role,
        before: FxHashMap::default(),
    })
}

/// The region of the reshapes from shape `from` to `to`, if computing it before them removes
/// nodes.
fn grow(
    body: &Body,
    types: &BodyTypes,
    root: ExprId,
    live: &[bool],
    users: &[Vec<ExprId>],
    from: Vec<usize>,
    to: Vec<usize>,
) -> Option<Region> {
    let mut inside = vec![false; body.len()];
    let mut roles: Vec<(ExprId, Role)> = Vec::new();
    let single = |e: ExprId| {
        static_shape(types, e)
            .is_some_and(|s| s.iter().product::<usize>() == 1 && s.len() <= from.len())
    };
    // Operands come before their users: one scan in id order finds the region.
    for id in body.ids().filter(|id| live[id.index()]) {
        if let Some(x) = reshape_like(body, id) {
            if static_shape(types, x).as_ref() == Some(&from)
                && static_shape(types, id).as_ref() == Some(&to)
            {
                inside[id.index()] = true;
                roles.push((id, Role::Seed));
            }
            continue;
        }
        let Some((op, args, _)) = body.op_call(id) else {
            continue;
        };
        if op.def().pattern > OpPattern::Broadcast || op.is_stateful() || args.is_empty() {
            continue;
        }
        let fits = args.iter().all(|&a| inside[a.index()] || single(a))
            && args.iter().any(|&a| inside[a.index()]);
        if fits && static_shape(types, id).as_ref() == Some(&to) {
            inside[id.index()] = true;
            roles.push((id, Role::Member { exit: false }));
        }
    }
    // What reads the region from outside: reshapes (which read the value before instead),
    // and anything else (for which the value is reshaped once).
    let mut gain: i64 = 0;
    let mut readers = Vec::new();
    let mut shapes = Vec::new();
    for (id, how) in &mut roles {
        let outside: Vec<ExprId> = users[id.index()]
            .iter()
            .copied()
            .filter(|u| !inside[u.index()])
            .collect();
        let mut exit = *id == root;
        for u in outside {
            match reshape_like(body, u).and_then(|_| static_shape(types, u)) {
                Some(shape) => {
                    if readers.iter().any(|(r, _)| *r == u) {
                        continue;
                    }
                    gain += i64::from(shape == from);
                    readers.push((u, Role::Reader(shapes.len())));
                    shapes.push(shape);
                }
                None => exit = true,
            }
        }
        match how {
            // A seed nothing else reads goes; one still read stays (it is the exit).
            Role::Seed => gain += i64::from(!exit),
            Role::Member { exit: e } => {
                *e = exit;
                gain -= i64::from(exit);
            }
            Role::Reader(_) => {}
        }
    }
    let members = roles
        .iter()
        .any(|(_, how)| matches!(how, Role::Member { .. }));
    if gain <= 0 || !members {
        return None;
    }
    roles.extend(readers);
    Some(Region {
        roles,
        from,
        to,
        shapes,
        gain: gain as u64,
    })
}

struct Sink {
    regions: Vec<Region>,
    role: FxHashMap<ExprId, (usize, Role)>,
    /// The value before the reshapes of each node of a region (a new id).
    before: FxHashMap<ExprId, ExprId>,
}

impl Rewrite for Sink {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: OldId, _new: ExprId) -> Option<ExprId> {
        let (r, how) = *self.role.get(&old.id())?;
        let body = cx.old.body();
        match how {
            Role::Seed => {
                let x = reshape_like(body, old.id())?;
                let before = cx.new_id(cx.old.at(x))?;
                self.before.insert(old.id(), before);
                None
            }
            Role::Member { exit } => {
                let (op, args, attrs) = body.op_call(old.id())?;
                let args: Vec<ExprId> = args
                    .iter()
                    .map(|a| match self.before.get(a) {
                        Some(&b) => Some(b),
                        None => cx.new_id(cx.old.at(*a)),
                    })
                    .collect::<Option<_>>()?;
                let before = cx.new.call_op(op, &args, attrs.clone());
                self.before.insert(old.id(), before);
                if exit {
                    let to = self.regions[r].to.clone();
                    Some(reshape_to(&mut cx.new, before, &to))
                } else {
                    None
                }
            }
            Role::Reader(k) => {
                let x = reshape_like(body, old.id())?;
                let before = *self.before.get(&x)?;
                let region = &self.regions[r];
                if region.shapes[k] == region.from {
                    return Some(before);
                }
                let shape = region.shapes[k].clone();
                Some(reshape_to(&mut cx.new, before, &shape))
            }
        }
    }
}
