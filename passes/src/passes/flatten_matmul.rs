//! `FlattenMatMul`: the pass and its rewrite of a function's code.

use super::{reshape_like, reshape_to};
use crate::analyses::Types;
use irpass::{PassContext, function_pass};
use irpass_ir::body::{ArenaFunction, Body, ExprId, Idx, Node};
use irpass_ir::infer::BodyTypes;
use irpass_ir::op::OpPattern;
use irpass_ir::rewrite::{OldId, Rewrite, RewriteCx};
use irpass_ir::{Attrs, DType, Function, Module, Type};
use rustc_hash::FxHashMap;

irpass::statistic! {
    /// Products `FlattenMatMul` put on the rows of their input.
    pub static PRODUCTS_FLATTENED: "FlattenMatMul", "products by a matrix computed on a 2-D view";
}

/// Computes a product of a tensor of rank 3 or more by a constant matrix, followed by the
/// addition of a constant bias, on the rows of the tensor: `add(matmul(x, W), b)` with `x` of
/// static shape `(..., K)` becomes `reshape(add(matmul(reshape(x, (M, K)), W), b), (..., N))`.
/// A 2-D product and its bias are one `Gemm` in ONNX (which ONNX Runtime would otherwise make
/// of the 3-D product, adding the reshapes itself), and the reshapes meet and cancel those
/// around them (`SimplifyExpr` merges two in a row, `SinkReshape` moves them past
/// elementwise work and splits). Only products with a bias (the `Gemm` absorbs the addition,
/// which pays for one reshape that finds nothing to merge with) and where one of the two
/// reshapes can merge: the input is a reshape or elementwise work, or the sum is read only by
/// reshapes, elementwise work, a split or other projections.
#[function_pass(opt_level = 3, name = "FlattenMatMul")]
pub fn transform(func: Function, module: &Module, ctx: &PassContext) -> irpass::Result<Function> {
    let Ok(types) = Types::of(&func, module, ctx) else {
        // An ill-typed function is left to the pass that reports it.
        return Ok(func);
    };
    Ok(func.with_code(flatten_matmul(&func.code, &types)))
}

/// One product to flatten: its input's shape, the rows, and its bias addition.
struct Product {
    shape: Vec<usize>,
    rows: usize,
    n: usize,
    bias: ExprId,
}

/// What an old node is to the rewrite.
#[derive(Clone, Copy)]
enum Role {
    /// The product `.0`: its input is reshaped to rows.
    Product(usize),
    /// The bias addition of product `.0`: reshaped back after it.
    Bias(usize),
}

/// Computes the products by a constant matrix of `f` (typed by `types`) that a constant bias
/// follows on the rows of their input, as the registered `FlattenMatMul`. `None` when nothing
/// changes.
pub fn flatten_matmul(f: &ArenaFunction, types: &BodyTypes) -> Option<ArenaFunction> {
    let body = &f.body;
    let users = body.users(f.root);
    let mut products = Vec::new();
    let mut role = FxHashMap::default();
    // (A node that is not the result is reachable when it has users.)
    for id in body.ids().filter(|&id| !users[id.index()].is_empty()) {
        let Some(p) = product(body, types, id, f.root, &users) else {
            continue;
        };
        role.insert(id, Role::Product(products.len()));
        role.insert(p.bias, Role::Bias(products.len()));
        products.push(p);
    }
    if products.is_empty() {
        return None;
    }
    PRODUCTS_FLATTENED.add(products.len() as u64);
    f.rewrite(&mut Flatten { products, role })
}

/// `id` as a product to flatten: a float `matmul` of a tensor of static shape and rank 3 or
/// more by a constant matrix, read only by the addition of a constant vector of its width.
fn product(
    body: &Body,
    types: &BodyTypes,
    id: ExprId,
    root: ExprId,
    users: &[Vec<ExprId>],
) -> Option<Product> {
    let (op, args, _) = body.op_call(id)?;
    if op.name() != "matmul" {
        return None;
    }
    let Node::Constant(k) = body.node(args[1]) else {
        return None;
    };
    let w = body.constant(*k);
    let [kdim, n] = *w.shape() else {
        return None;
    };
    let Type::Tensor(t) = types.of(args[0]) else {
        return None;
    };
    if !matches!(t.dtype, DType::Float32 | DType::Float64) {
        return None;
    }
    let shape = t.static_shape()?;
    if shape.len() < 3 || shape.last() != Some(&kdim) {
        return None;
    }
    let rows = shape[..shape.len() - 1].iter().product();
    let [add] = users[id.index()][..] else {
        return None;
    };
    if id == root {
        return None;
    }
    let (aop, aargs, _) = body.op_call(add)?;
    let b = match aargs {
        [a, b] if *a == id => *b,
        [b, a] if *a == id => *b,
        _ => return None,
    };
    let Node::Constant(bk) = body.node(b) else {
        return None;
    };
    let bias = body.constant(*bk);
    // One of the two reshapes must have something to merge with: the input is a reshape
    // or elementwise work (where an earlier product's reshape back sinks to it), or the sum
    // is read only by reshapes, elementwise work, a split (which SinkReshape moves it past)
    // or other projections.
    let merges = |e: ExprId| {
        reshape_like(body, e).is_some()
            || body.op_call(e).is_some_and(|(op, args, _)| {
                op.name() == "split"
                    || op.def().pattern <= OpPattern::Broadcast
                    // Another projection: its own reshape to rows meets this one's back.
                    || (op.name() == "matmul" && matches!(body.node(args[1]), Node::Constant(_)))
            })
    };
    let joins = merges(args[0]) || (add != root && users[add.index()].iter().all(|&u| merges(u)));
    (joins && aop.name() == "add" && bias.shape() == [n] && bias.dtype() == w.dtype()).then_some(
        Product {
            shape,
            rows,
            n,
            bias: add,
        },
    )
}

struct Flatten {
    products: Vec<Product>,
    role: FxHashMap<ExprId, Role>,
}

impl Rewrite for Flatten {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: OldId, new: ExprId) -> Option<ExprId> {
        match *self.role.get(&old.id())? {
            Role::Product(p) => {
                let (_, args, _) = cx.new.body().op_call(new)?;
                let (x, w) = (args[0], args[1]);
                let k = *self.products[p].shape.last()?;
                let rows = reshape_to(&mut cx.new, x, &[self.products[p].rows, k]);
                cx.new.op("matmul", &[rows, w], Attrs::new()).ok()
            }
            Role::Bias(p) => {
                // The addition, rebuilt on the 2-D product, is reshaped back.
                let mut shape = self.products[p].shape.clone();
                *shape.last_mut()? = self.products[p].n;
                Some(reshape_to(&mut cx.new, new, &shape))
            }
        }
    }
}
