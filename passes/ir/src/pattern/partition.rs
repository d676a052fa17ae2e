//! Partitioning: each match of a pattern wrapped into a closure called where the match was
//! (TVM's `partition`), for handing subgraphs to a backend (`Composite="dense_bias_relu"`).

use rustc_hash::{FxHashMap, FxHashSet};

use super::{CompiledPattern, Match, Matcher, Pattern, PatternError};
use crate::body::{ArenaFunction, Body, ClosureData, ExprId, Idx, Node, VarSubst, copy_region};
use crate::infer::BodyTypes;
use crate::rewrite::{OldId, Rewrite, RewriteCx};
use crate::{AttrValue, Attrs};

/// A check of a match before it is wrapped (TVM's `check`): the body and the match.
pub type PartitionCheck<'a> = &'a dyn Fn(&Body, &Match) -> bool;

/// How [`partition`] wraps its matches.
#[derive(Default)]
pub struct PartitionOptions<'a> {
    /// The attributes each closure gets (besides `PartitionedFromPattern`, which names the
    /// operators of the match in evaluation order, as TVM does).
    pub attrs: Attrs,
    /// Which matches to wrap (TVM's `check`); all when `None`.
    pub check: Option<PartitionCheck<'a>>,
    /// The function's types: each closure parameter is annotated with its argument's type.
    pub types: Option<&'a BodyTypes>,
}

impl<'a> PartitionOptions<'a> {
    /// Options that give each closure `attrs`.
    pub fn with_attrs<I, S>(attrs: I) -> Self
    where
        I: IntoIterator<Item = (S, AttrValue)>,
        S: Into<String>,
    {
        PartitionOptions {
            attrs: Attrs::from_pairs(attrs),
            ..PartitionOptions::default()
        }
    }
}

/// One match to wrap.
struct Group {
    /// The nodes inside, in evaluation order (a closure matched whole counts as one).
    nodes: Vec<ExprId>,
    /// What the closure takes: the operands of the nodes inside that are not inside, in
    /// order of first use from the root (TVM's order).
    inputs: Vec<ExprId>,
    label: String,
}

/// Wraps each match of `pattern` in `f` into a closure with `options.attrs`, called with the
/// match's inputs (what its wildcards and variable patterns matched; constants that constant
/// patterns matched stay inside). Matches are taken from the result towards the inputs and
/// never overlap; a match one of whose inner values is used outside it is left alone (TVM's
/// rule), as is one that `options.check` refuses. `None` when nothing was wrapped.
///
/// ```
/// use irpass_ir::{AttrValue, Module};
/// use irpass_ir::pattern::{PartitionOptions, Pattern, partition};
///
/// let m = Module::parse("def @main(%x, %w, %b) { nn.relu(nn.bias_add(nn.conv2d(%x, %w), %b)) }").unwrap();
/// let main = m.get("main").unwrap();
/// let p = Pattern::parse("nn.relu(nn.bias_add(nn.conv2d(_, _), _))").unwrap();
/// let options = PartitionOptions::with_attrs([("Composite", AttrValue::Str("conv_bias_relu".into()))]);
/// let out = partition(&p, &main.code, &options).unwrap();
/// let text = Module::from_functions([("main", main.with_code(out))]).to_string();
/// assert!(text.contains(r#"Composite="conv_bias_relu", PartitionedFromPattern="nn.conv2d_nn.bias_add_nn.relu_""#), "{text}");
/// ```
///
/// # Errors
/// A pattern that does not compile (an unknown operator).
pub fn partition(
    pattern: &Pattern,
    f: &ArenaFunction,
    options: &PartitionOptions<'_>,
) -> Result<Option<ArenaFunction>, PatternError> {
    let compiled = CompiledPattern::new(pattern)?;
    let body = &f.body;
    let reachable = body.reachable(f.root);
    let mut users: Vec<Vec<ExprId>> = vec![Vec::new(); body.len()];
    for id in body.ids().filter(|e| reachable[e.index()]) {
        body.for_each_operand(id, |o| users[o.index()].push(id));
    }
    let mut claimed = vec![false; body.len()];
    // What an earlier partition wrapped is not matched again (TVM's rule).
    for id in body.ids().filter(|e| reachable[e.index()]) {
        if let Node::Closure(c) = body.node(id) {
            let data = body.closure(*c);
            if data.attrs.contains("PartitionedFromPattern") {
                for n in region_of(body, data.body) {
                    claimed[n.index()] = true;
                }
            }
        }
    }
    let mut groups: FxHashMap<ExprId, Group> = FxHashMap::default();
    let mut matcher = Matcher::new(body, None);
    for e in body.ids().rev().filter(|e| reachable[e.index()]) {
        if claimed[e.index()] {
            continue;
        }
        let Some(m) = matcher.find(&compiled, e) else {
            continue;
        };
        let inside: FxHashSet<ExprId> = m.region.iter().copied().collect();
        let closed = m.region.iter().all(|&n| {
            n == e
                || matches!(body.node(n), Node::Constant(_))
                || users[n.index()].iter().all(|u| inside.contains(u))
        });
        let free = m.region.iter().all(|&n| !claimed[n.index()]);
        let lets = m
            .region
            .iter()
            .any(|&n| matches!(body.node(n), Node::Let { .. }));
        if !closed || !free || lets || options.check.is_some_and(|c| !c(body, &m)) {
            continue;
        }
        for &n in &m.region {
            if !matches!(body.node(n), Node::Constant(_)) {
                claimed[n.index()] = true;
            }
        }
        groups.insert(e, group(body, e, &inside));
    }
    if groups.is_empty() {
        return Ok(None);
    }
    let mut r = Wrap {
        groups,
        options,
        count: 0,
    };
    Ok(f.rewrite(&mut r))
}

/// The group of the match rooted at `root` whose nodes are `inside`.
fn group(body: &Body, root: ExprId, inside: &FxHashSet<ExprId>) -> Group {
    // One walk from the root, operands left to right, depth first, not into closures: the
    // inputs in order of first use (TVM's order), and the nodes inside that are copied (a
    // closure whole, with its body).
    let mut inputs = Vec::new();
    let mut nodes = Vec::new();
    let mut seen = FxHashSet::default();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if !seen.insert(n) {
            continue;
        }
        if !inside.contains(&n) {
            inputs.push(n);
            continue;
        }
        nodes.push(n);
        if matches!(body.node(n), Node::Closure(_)) {
            continue;
        }
        let at = stack.len();
        body.for_each_operand(n, |o| stack.push(o));
        stack[at..].reverse();
    }
    // In evaluation order (operands have smaller ids).
    nodes.sort_unstable();
    // The label names the operators inside in evaluation order, those of a closure inside
    // included (TVM's `PartitionedFromPattern`).
    let mut named: FxHashSet<ExprId> = inside.clone();
    for &n in inside {
        if let Node::Closure(c) = body.node(n) {
            named.extend(region_of(body, body.closure(*c).body));
        }
    }
    let mut named: Vec<ExprId> = named.into_iter().collect();
    named.sort_unstable();
    let mut label = String::new();
    for n in named {
        match body.node(n) {
            Node::CallOp { sig, .. } => {
                label.push_str(body.sig(*sig).op.name());
                label.push('_');
            }
            Node::Call { .. } => label.push_str("FunctionCall_"),
            Node::Tuple(_) => label.push_str("Tuple_"),
            Node::Proj(..) => label.push_str("TupleGetItem_"),
            Node::If(..) => label.push_str("If_"),
            _ => {}
        }
    }
    Group {
        nodes,
        inputs,
        label,
    }
}

/// The nodes reachable from `root`.
fn region_of(body: &Body, root: ExprId) -> Vec<ExprId> {
    let mut out = Vec::new();
    let mut seen = FxHashSet::default();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if seen.insert(n) {
            out.push(n);
            body.for_each_operand(n, |o| stack.push(o));
        }
    }
    out
}

struct Wrap<'o, 'a> {
    groups: FxHashMap<ExprId, Group>,
    options: &'o PartitionOptions<'a>,
    count: usize,
}

impl Rewrite for Wrap<'_, '_> {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: OldId, _new: ExprId) -> Option<ExprId> {
        // The groups were found in the input body, by its own ids.
        let old = old.id();
        let g = self.groups.get(&old)?;
        let k = self.count;
        self.count += 1;
        let src = cx.old.body();
        // The parameters: one per input, named after it when it is a variable.
        let mut subst: FxHashMap<ExprId, ExprId> = FxHashMap::default();
        let mut params = Vec::with_capacity(g.inputs.len());
        for (i, &input) in g.inputs.iter().enumerate() {
            let name = match src.node(input) {
                Node::Var(v) => src.var(*v).name.to_string(),
                _ => format!("FunctionVar_{k}_{i}"),
            };
            let ty = self
                .options
                .types
                .map(|t| t.of(input).clone())
                .filter(|t| t.is_complete());
            let v = cx.new.var(&name, ty, None);
            params.push(v);
            let use_node = cx.new.use_var(v);
            subst.insert(input, use_node);
        }
        for &n in &g.nodes {
            let copy = copy_node(src, n, cx, &subst);
            subst.insert(n, copy);
        }
        let mut attrs = self.options.attrs.clone();
        attrs.set("PartitionedFromPattern", AttrValue::Str(g.label.clone()));
        let closure = cx.new.closure(ClosureData {
            params,
            ret_type: None,
            attrs,
            body: subst[&old],
        });
        let args: Vec<ExprId> = g
            .inputs
            .iter()
            .map(|&i| {
                cx.new_id(cx.old.at(i))
                    .expect("a match's inputs are rewritten before it")
            })
            .collect();
        Some(cx.new.call(closure, &args))
    }
}

/// Copies node `n` of the match into the new body, its operands through `subst`.
fn copy_node(
    src: &Body,
    n: ExprId,
    cx: &mut RewriteCx<'_>,
    subst: &FxHashMap<ExprId, ExprId>,
) -> ExprId {
    let get = |e: ExprId| subst[&e];
    let b = &mut cx.new;
    match src.node(n) {
        Node::Constant(k) => b.constant_hashed(src.constant(*k).clone(), src.constant_hash(*k)),
        Node::CallOp { sig, args } => {
            let s = src.sig(*sig);
            let args: Vec<ExprId> = src.list(*args).iter().map(|&a| get(a)).collect();
            b.call_op(s.op, &args, src.attrs(s.attrs).clone())
        }
        Node::Call { callee, args } => {
            let callee = get(*callee);
            let args: Vec<ExprId> = src.list(*args).iter().map(|&a| get(a)).collect();
            b.call(callee, &args)
        }
        Node::Tuple(fields) => {
            let fields: Vec<ExprId> = src.list(*fields).iter().map(|&a| get(a)).collect();
            b.tuple(&fields)
        }
        Node::Proj(t, i) => b.proj(get(*t), *i),
        Node::If(c, t, o) => b.if_(get(*c), get(*t), get(*o)),
        Node::Closure(_) => copy_region(src, n, b, &VarSubst::default()),
        Node::Var(_) | Node::Global(_) | Node::Let { .. } => {
            unreachable!("variables, globals and blocks are never inside a match")
        }
    }
}
