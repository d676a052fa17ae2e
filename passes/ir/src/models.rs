//! Generated models of any size, for benchmarks and for tests that compare sizes.
//!
//! ```
//! let m = irpass_ir::models::mlp_chain(3);
//! m.infer_types().unwrap();
//! assert_eq!(m.to_string().matches("let ").count(), 3 * 7);
//! ```

use std::sync::Arc;

use crate::body::{ArenaFunction, BodyBuilder, ExprId, VarId};
use crate::{Attrs, DType, Function, Module, Tensor, Type, constant_text};

/// An MLP of `layers` layers as one block of `let`s, with hidden size 8 and deterministic
/// constants in [-1, 1]. Per layer: `b = add(c1, c2)` (foldable), `h = matmul(x, W)`,
/// `t1 = add(h, b)`, `t2 = add(h, b)` (equal to `t1`), `s = add(t1, t2)`, `x' = nn.relu(s)`
/// and a dead `d = multiply(x', x')`. `@main` takes `%x: Tensor[(1, 8), float32]` and returns
/// the last `x'` (`%x` itself when `layers` is 0).
pub fn mlp_chain(layers: usize) -> Module {
    let mut seed = 42;
    let mut b = BodyBuilder::with_capacity(layers * 14 + 1);
    let x = b.var("x", Some(Type::tensor(&[1, 8], DType::Float32)), None);
    let mut bindings = Vec::with_capacity(layers * 7);
    let mut cur = b.use_var(x);
    for i in 0..layers {
        let c1 = constant(&mut b, &[8], &mut seed);
        let c2 = constant(&mut b, &[8], &mut seed);
        let sum = op(&mut b, "add", &[c1, c2]);
        let bias = bind(&mut b, &mut bindings, format!("b{i}"), sum);
        let w = constant(&mut b, &[8, 8], &mut seed);
        let mm = op(&mut b, "matmul", &[cur, w]);
        let h = bind(&mut b, &mut bindings, format!("h{i}"), mm);
        let t1 = op(&mut b, "add", &[h, bias]);
        let t1 = bind(&mut b, &mut bindings, format!("t{i}a"), t1);
        let t2 = op(&mut b, "add", &[h, bias]);
        let t2 = bind(&mut b, &mut bindings, format!("t{i}b"), t2);
        let s = op(&mut b, "add", &[t1, t2]);
        let s = bind(&mut b, &mut bindings, format!("s{i}"), s);
        let relu = op(&mut b, "nn.relu", &[s]);
        let xi = bind(&mut b, &mut bindings, format!("x{i}"), relu);
        let dead = op(&mut b, "multiply", &[xi, xi]);
        bind(&mut b, &mut bindings, format!("d{i}"), dead);
        cur = xi;
    }
    let root = b.lets(&bindings, cur);
    let code = ArenaFunction {
        body: b.finish(),
        params: vec![x],
        root,
    };
    Module::from_functions([("main", Function::new(code, None, Attrs::new(), None))])
}

/// Binds `value` to a new variable `name` and returns a use of it.
fn bind(
    b: &mut BodyBuilder,
    bindings: &mut Vec<(VarId, ExprId)>,
    name: String,
    value: ExprId,
) -> ExprId {
    let v = b.var(&name, None, None);
    bindings.push((v, value));
    b.use_var(v)
}

/// `functions` functions `@f0`, `@f1`, ... without parameters, each the `matmul` of two
/// deterministic constant `size`×`size` float32 matrices: work for `FoldConstant` that is all
/// arithmetic, spread evenly over functions (for measuring a function pass on several threads).
pub fn constant_matmuls(functions: usize, size: usize) -> Module {
    let mut seed = 7;
    Module::from_functions((0..functions).map(|i| {
        let mut b = BodyBuilder::new();
        let x = constant(&mut b, &[size, size], &mut seed);
        let y = constant(&mut b, &[size, size], &mut seed);
        let root = op(&mut b, "matmul", &[x, y]);
        let code = ArenaFunction {
            body: b.finish(),
            params: vec![],
            root,
        };
        (
            format!("f{i}"),
            Function::new(code, None, Attrs::new(), None),
        )
    }))
}

/// The next value in [-1, 1] (steps of 0.001) of a linear congruential sequence.
fn next_value(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*seed >> 33) % 2001) as f64 / 1000.0 - 1.0
}

/// A float32 tensor of `shape` with values from [`next_value`].
fn tensor(shape: &[usize], seed: &mut u64) -> Tensor {
    let n = shape.iter().product();
    let values = (0..n).map(|_| next_value(seed)).collect();
    Tensor::from_vec(DType::Float32, shape, values)
        .unwrap_or_else(|e| unreachable!("a shape and its element count agree: {e}"))
}

/// A float32 constant of `shape` with values from [`next_value`].
fn constant(b: &mut BodyBuilder, shape: &[usize], seed: &mut u64) -> ExprId {
    b.constant(Arc::new(tensor(shape, seed)))
}

/// A call of a registered operator with no attributes.
fn op(b: &mut BodyBuilder, name: &str, args: &[ExprId]) -> ExprId {
    b.op(name, args, Attrs::new())
        .unwrap_or_else(|e| unreachable!("`{name}` is a registered operator: {e}"))
}

/// A convolutional network of `layers` blocks that gives every pass of the pass library
/// something to do in each block, as one `@main` of `let`s and two global functions per block.
///
/// Per block `i`, on a `Tensor[(1, 4, 4, 4), float32]` (NCHW): `nn.conv2d` with constant
/// weights between a multiply of its input and one of its result by constant per-channel
/// scales (one expression, as `FoldScaleAxis` wants them), `nn.bias_add` of a constant sum,
/// `nn.batch_norm` and its projection, `nn.relu`, a multiply by a
/// constant per-channel scale, `nn.dropout`, a pair of transposes that cancel, `x * 1f + 0f`,
/// a closure that calls `@g{i}` (marked `Inline`), a tuple and its projections, two equal
/// `add`s, an `if` on `%flag`, `nn.layer_norm` then a layer norm's decomposition between two
/// reshapes, a dead `exp`, two dense layers with biases reading the value viewed
/// as `(1, 16, 4)`, a `nn.relu` on a 2-D view of their sum between two reshapes, and a dense layer with
/// a bias on a 3-D view of that.
/// `@unused{i}` is called by nobody. Constants are deterministic.
///
/// ```
/// use irpass::IrModule;
/// let m = irpass_ir::models::conv_chain(2);
/// m.infer_types().unwrap();
/// assert_eq!(m.function_count(), 5);
/// ```
pub fn conv_chain(layers: usize) -> Module {
    use std::fmt::Write;
    let mut seed = 11;
    let mut c = |shape: &[usize]| constant_text(&tensor(shape, &mut seed));
    let ty = "Tensor[(1, 4, 4, 4), float32]";
    let mut text = String::from("#[version = \"0.0.5\"]\n");
    for i in 0..layers {
        let _ = writeln!(
            text,
            "def @g{i}(%y: {ty}, Inline=1) -> {ty} {{ nn.relu(%y) }}"
        );
        let _ = writeln!(text, "def @unused{i}(%y: {ty}) -> {ty} {{ exp(%y) }}");
    }
    let _ = writeln!(text, "def @main(%x: {ty}, %flag: bool) {{");
    let mut input = "%x".to_string();
    for i in 0..layers {
        let (w, b1, b2, g, b, m, v) = (
            c(&[4, 4, 3, 3]),
            c(&[4]),
            c(&[4]),
            c(&[4]),
            c(&[4]),
            c(&[4]),
            c(&[4]),
        );
        let (w1, w2, bq, bo) = (c(&[4, 4]), c(&[4, 4]), c(&[4]), c(&[4]));
        let (w3, b3) = (c(&[4, 4]), c(&[4]));
        let (s_in, s_out, scale, lg, lb) = (
            c(&[4, 1, 1]),
            c(&[4, 1, 1]),
            c(&[4, 1, 1]),
            c(&[16]),
            c(&[16]),
        );
        let _ = write!(
            text,
            "  let %c{i} = multiply(nn.conv2d(multiply({input}, {s_in}), {w}, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]), {s_out});
  let %b{i} = nn.bias_add(%c{i}, add({b1}, {b2}));
  let %n{i} = nn.batch_norm(%b{i}, {g}, {b}, {m}, {v}, epsilon=1e-05f);
  let %r{i} = nn.relu(%n{i}.0);
  let %s{i} = multiply(%r{i}, {scale});
  let %d{i} = nn.dropout(%s{i});
  let %t{i} = transpose(transpose(%d{i}.0, axes=[0, 2, 3, 1]), axes=[0, 3, 1, 2]);
  let %e{i} = add(multiply(%t{i}, 1f), 0f);
  let %f{i} = fn (%y: {ty}) -> {ty} {{ @g{i}(%y) }};
  let %u{i} = %f{i}(%e{i});
  let %p{i} = (%u{i}, %e{i});
  let %v{i} = add(%p{i}.0, %p{i}.1);
  let %w{i} = add(%p{i}.0, %p{i}.1);
  let %k{i} = if (%flag) {{ %v{i} }} else {{ %w{i} }};
  let %z{i} = nn.layer_norm(reshape(%k{i}, newshape=[1, 4, 16]), {lg}, {lb});
  %{i} = subtract(%z{i}, mean(%z{i}, axis=[-1], keepdims=True));
  let %x{i} = reshape(divide(%{i}, sqrt(add(mean(multiply(%{i}, %{i}), axis=[-1], keepdims=True), 1e-5f))), newshape=[1, 4, 4, 4]);
  let %dead{i} = exp(%x{i});
  let %h{i} = reshape(%x{i}, newshape=[1, 16, 4]);
  let %q{i} = add(matmul(%h{i}, {w1}), {bq});
  let %o{i} = add(matmul(%h{i}, {w2}), {bo});
  let %y{i} = reshape(nn.relu(reshape(add(%q{i}, %o{i}), newshape=[16, 4])), newshape=[1, 4, 4, 4]);
  let %z{i} = reshape(add(matmul(reshape(%y{i}, newshape=[1, 16, 4]), {w3}), {b3}), newshape=[1, 4, 4, 4]);
"
        );
        input = format!("%z{i}");
    }
    let _ = writeln!(text, "  {input}\n}}");
    Module::parse(&text).unwrap_or_else(|e| unreachable!("the generated model parses: {e}"))
}

/// The text of `def @main(%x: float32) { ... }` with `open` and `close` around `%x`, `depth`
/// times: input nested as deep as wanted, for deep-input tests and benchmarks.
///
/// ```
/// let text = irpass_ir::models::nested_text(3, "exp(", ")");
/// assert_eq!(text, "def @main(%x: float32) { exp(exp(exp(%x))) }");
/// irpass_ir::Module::parse(&text).unwrap();
/// ```
pub fn nested_text(depth: usize, open: &str, close: &str) -> String {
    let mut text = String::with_capacity(depth * (open.len() + close.len()) + 64);
    text.push_str("def @main(%x: float32) { ");
    for _ in 0..depth {
        text.push_str(open);
    }
    text.push_str("%x");
    for _ in 0..depth {
        text.push_str(close);
    }
    text.push_str(" }");
    text
}
