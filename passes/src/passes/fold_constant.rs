//! `FoldConstant`: the pass and its rewrite of a function's code.

use crate::util::elements;
use irpass::{PassContext, PassOptions, function_pass, pass_config_option};
use irpass_ir::body::{ArenaFunction, Body, ExprId, Node, Sig, VarId};
use irpass_ir::infer::{LocalTypes, local_types};
use irpass_ir::rewrite::{LetAction, OldId, Rewrite, RewriteCx};
use irpass_ir::{Function, Module, Tensor, Type, Value};
use serde::Deserialize;
use std::cell::OnceCell;
use std::sync::Arc;

pass_config_option! {
    /// `FoldConstant` leaves a call unfolded when its result would have more elements than
    /// this (default 1 048 576) and than its constant operands together, so that folding never
    /// bloats a module with a huge constant (a result that only replaces operands of its size,
    /// a weight times a scale or weights concatenated, is not growth).
    pub FOLD_MAX_ELEMENTS: u64 = "relay.FoldConstant.max_elements";
}

pass_config_option! {
    /// `FoldConstant` leaves a `full`, `zeros`, `ones` or `broadcast_to` (and their `_like`
    /// forms) unfolded when its result would have more elements than this (default 1024): a
    /// model that describes a large tensor by its shape (ONNX's ConstantOfShape, Expand)
    /// keeps the description instead of growing by the tensor's bytes.
    pub FOLD_MAX_GENERATED_ELEMENTS: u64 = "relay.FoldConstant.max_generated_elements";
}

irpass::statistic! {
    /// Operator calls `FoldConstant` evaluated into constants.
    pub static CALLS_FOLDED: "FoldConstant", "operator calls folded into constants";
}

/// The default of [`FOLD_MAX_ELEMENTS`].
pub const DEFAULT_FOLD_MAX_ELEMENTS: u64 = 1 << 20;

/// The default of [`FOLD_MAX_GENERATED_ELEMENTS`].
pub const DEFAULT_FOLD_MAX_GENERATED_ELEMENTS: u64 = 1024;

/// `FoldConstant` and its options (each overrides its config key for this pass).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, PassOptions)]
#[serde(default)]
pub struct FoldConstant {
    /// The most elements a folded result may have.
    #[option(config = FOLD_MAX_ELEMENTS, default = DEFAULT_FOLD_MAX_ELEMENTS)]
    pub max_elements: Option<u64>,
    /// The most elements a folded full, zeros, ones or broadcast_to may have.
    #[option(config = FOLD_MAX_GENERATED_ELEMENTS, default = DEFAULT_FOLD_MAX_GENERATED_ELEMENTS)]
    pub max_generated_elements: Option<u64>,
}

/// Evaluates operator calls whose arguments are all constants, with the interpreter's
/// reference kernels, and replaces them by the result (dtypes exact: the kernel computes in the
/// operator's output dtype). Also folds projections of literal tuples, `if` on a constant
/// condition, `let`s bound to constants, and `shape_of`/`ndarray_size` of any value whose
/// shape is static (TVM's shape folding). A call whose result would be larger than
/// `relay.FoldConstant.max_elements` elements (`relay.FoldConstant.max_generated_elements`
/// for `full`, `zeros`, `ones` and `broadcast_to`, which describe a large tensor in a few
/// bytes) and than its constant operands together (a result no larger than the operands it
/// replaces, a weight times a scale or weights concatenated, folds at any size), or whose evaluation fails (an integer division by zero), is left as it is, and so is a call of an operator marked
/// stateful (`irpass_ir::op::Stateful`: `nn.dropout`, ONNX's random operators; its value is a
/// draw at run time, not a constant).
///
/// Options (`FoldConstant{max_elements=4096}`) override the config keys for this pass.
#[function_pass(opt_level = 2, default, options)]
impl FoldConstant {
    fn transform_function(&self, func: Function, _module: &Module, ctx: &PassContext) -> Function {
        let limits = FoldLimits {
            limit: self.max_elements(ctx),
            generated: self.max_generated_elements(ctx),
        };
        func.with_code(fold_constant(&func.code, limits))
    }
}

/// Operators that make a large tensor from a small description (ONNX's ConstantOfShape,
/// Expand and Tile): folding them turns a few bytes of a model into megabytes of constants.
const GENERATORS: &[&str] = &[
    "full",
    "full_like",
    "zeros",
    "zeros_like",
    "ones",
    "ones_like",
    "broadcast_to",
    "broadcast_to_like",
];

/// How much a folding may produce: `limit` elements for any call, `generated` for calls of
/// the operators that make a large tensor from a small description (`full`, `zeros`, `ones`,
/// `broadcast_to` and their `_like` forms).
#[derive(Clone, Copy, Debug)]
pub struct FoldLimits {
    /// The most elements a folded call's result may have, unless it is no larger than its
    /// constant operands together.
    pub limit: u64,
    /// The most elements a folded `full`, `zeros`, `ones` or `broadcast_to` may have.
    pub generated: u64,
}

/// Evaluates operator calls whose arguments are all constants (or tuples of constants) and
/// replaces them by the result, unless it would have more elements than `limits` allow (and
/// than its operands together) or the kernel fails; folds projections of literal tuples, `if` on a constant condition, and
/// inlines `let`s bound to constants, and `shape_of`/`ndarray_size` of a value whose shape is
/// static. `None` when nothing folds.
pub fn fold_constant(f: &ArenaFunction, limits: FoldLimits) -> Option<ArenaFunction> {
    f.rewrite(&mut Folder {
        limits,
        types: OnceCell::new(),
    })
}

/// Operators whose result depends on their operand's type only (TVM folds them whenever the
/// shape is static).
const SHAPE_QUERIES: &[&str] = &["shape_of", "ndarray_size"];

struct Folder {
    limits: FoldLimits,
    /// The input's types where operands and annotations give them: found at the first shape
    /// query, if the body has one.
    types: OnceCell<LocalTypes>,
}

impl Folder {
    /// `shape_of(x)` or `ndarray_size(x)` as a constant, when `x`'s shape is static.
    fn shape_query(&self, cx: &mut RewriteCx<'_>, old: OldId) -> Option<ExprId> {
        let (op, args, attrs) = cx.old.op_call(old)?;
        if !SHAPE_QUERIES.contains(&op.name()) {
            return None;
        }
        let types = self.types.get_or_init(|| local_types(cx.old.body()));
        let [x] = args.array()?;
        let Type::Tensor(t) = types.of(x.id())? else {
            return None;
        };
        let shape = t.static_shape()?;
        let dims: Vec<Type> = vec![Type::Tensor(t.clone())];
        // The operator's own relation gives the result's dtype and shape.
        let Type::Tensor(out) = op.infer(&dims, attrs).ok()? else {
            return None;
        };
        let values: Vec<f64> = match op.name() {
            "shape_of" => shape.iter().map(|&d| d as f64).collect(),
            _ => vec![shape.iter().product::<usize>() as f64],
        };
        let out_shape: Vec<usize> = out.static_shape()?;
        let tensor = Tensor::from_vec(out.dtype, &out_shape, values).ok()?;
        Some(cx.new.constant(Arc::new(tensor)))
    }
}

/// The value of a constant or a tuple of constants (nested tuples included).
fn value_of(cx: &RewriteCx<'_>, e: ExprId) -> Option<Value> {
    let body = cx.new.body();
    match body.node(e) {
        Node::Constant(k) => Some(Value::Tensor(body.constant(*k).clone())),
        Node::Tuple(fields) => body
            .list(*fields)
            .iter()
            .map(|&f| value_of(cx, f))
            .collect::<Option<Vec<_>>>()
            .map(Value::Tuple),
        _ => None,
    }
}

/// Whether `e` is a constant or a tuple of them (without building its value).
fn is_constant(body: &Body, e: ExprId) -> bool {
    match body.node(e) {
        Node::Constant(_) => return true,
        Node::Tuple(_) => {}
        _ => return false,
    }
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match body.node(e) {
            Node::Constant(_) => {}
            Node::Tuple(fields) => stack.extend_from_slice(body.list(*fields)),
            _ => return false,
        }
    }
    true
}

fn type_of(v: &Value) -> Option<Type> {
    match v {
        Value::Tensor(t) => Some(Type::from(t.tensor_type())),
        Value::Tuple(fields) => fields
            .iter()
            .map(type_of)
            .collect::<Option<_>>()
            .map(Type::Tuple),
        Value::Closure(_) | Value::Opaque(_) => None,
    }
}

/// The node of `v` in the new body.
fn expr_of(cx: &mut RewriteCx<'_>, v: Value) -> Option<ExprId> {
    match v {
        Value::Tensor(t) => Some(cx.new.constant(t)),
        Value::Tuple(fields) => {
            let ids = fields
                .into_iter()
                .map(|f| expr_of(cx, f))
                .collect::<Option<Vec<_>>>()?;
            Some(cx.new.tuple(&ids))
        }
        Value::Closure(_) | Value::Opaque(_) => None,
    }
}

impl Rewrite for Folder {
    fn visit_let(&mut self, cx: &mut RewriteCx<'_>, _var: VarId, value: ExprId) -> LetAction {
        match cx.new.body().node(value) {
            Node::Constant(_) => LetAction::Inline,
            _ => LetAction::Keep,
        }
    }

    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: OldId, id: ExprId) -> Option<ExprId> {
        if let Some(folded) = self.shape_query(cx, old) {
            CALLS_FOLDED.inc();
            return Some(folded);
        }
        let body = cx.new.body();
        match body.node(id) {
            Node::Proj(t, i) => match body.node(*t) {
                Node::Tuple(fields) => body.list(*fields).get(*i as usize).copied(),
                _ => None,
            },
            Node::If(c, t, o) => match body.node(*c) {
                Node::Constant(k) => {
                    let b = body.constant(*k).scalar_value()?;
                    Some(if b != 0.0 { *t } else { *o })
                }
                _ => None,
            },
            Node::CallOp { sig, args } => {
                let (Sig { op, attrs }, args) = (body.sig(*sig), *args);
                // (A stateful operator's value is a draw at run time, not a constant.)
                if op.is_stateful() || !body.list(args).iter().all(|&a| is_constant(body, a)) {
                    return None;
                }
                let values = (0..args.len())
                    .map(|i| value_of(cx, cx.new.body().list(args)[i]))
                    .collect::<Option<Vec<_>>>()?;
                let body = cx.new.body();
                let types = values.iter().map(type_of).collect::<Option<Vec<_>>>()?;
                let out = op.infer(&types, body.attrs(attrs)).ok()?;
                let limit = if GENERATORS.contains(&op.name()) {
                    self.limits.generated
                } else {
                    self.limits.limit
                };
                // Judged by growth: a result no larger than its constant operands together (a
                // weight times a per-channel scale, weights concatenated) replaces at least as
                // many elements as it adds, and folds whatever its size. (The operands are
                // counted only for a result past the limit.)
                let operands = || {
                    (types.iter())
                        .filter_map(elements)
                        .fold(0u64, u64::saturating_add)
                };
                if elements(&out).is_none_or(|n| n > limit && n > operands()) {
                    return None;
                }
                let result = op.eval(&values, body.attrs(attrs)).ok()?;
                let folded = expr_of(cx, result)?;
                CALLS_FOLDED.inc();
                Some(folded)
            }
            _ => None,
        }
    }
}
