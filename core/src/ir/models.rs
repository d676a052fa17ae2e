//! Generated models of any size, for benchmarks and for tests that compare sizes.
//!
//! ```
//! let m = irpass::ir::models::mlp_chain(3);
//! m.infer_types().unwrap();
//! assert_eq!(m.to_string().matches("let ").count(), 3 * 7);
//! ```

use super::{Attrs, DType, Expr, Function, Module, Tensor, Type, Var};

/// An MLP of `layers` layers as one block of `let`s, with hidden size 8 and deterministic
/// constants in [-1, 1]. Per layer: `b = add(c1, c2)` (foldable), `h = matmul(x, W)`,
/// `t1 = add(h, b)`, `t2 = add(h, b)` (equal to `t1`), `s = add(t1, t2)`, `x' = nn.relu(s)`
/// and a dead `d = multiply(x', x')`. `@main` takes `%x: Tensor[(1, 8), float32]` and returns
/// the last `x'` (`%x` itself when `layers` is 0).
pub fn mlp_chain(layers: usize) -> Module {
    let mut seed = 42;
    let x = Var::new("x", Some(Type::tensor(&[1, 8], DType::Float32)));
    let mut bindings: Vec<(Var, Expr)> = Vec::with_capacity(layers * 7);
    let mut cur = Expr::var(&x);
    let mut bind = |name: String, value: Expr| {
        let v = Var::new(name, None);
        bindings.push((v.clone(), value));
        v
    };
    for i in 0..layers {
        let c1 = constant(&[8], &mut seed);
        let c2 = constant(&[8], &mut seed);
        let b = bind(format!("b{i}"), op("add", vec![c1, c2]));
        let w = constant(&[8, 8], &mut seed);
        let h = bind(format!("h{i}"), op("matmul", vec![cur, w]));
        let hb = || vec![Expr::var(&h), Expr::var(&b)];
        let t1 = bind(format!("t{i}a"), op("add", hb()));
        let t2 = bind(format!("t{i}b"), op("add", hb()));
        let s = bind(
            format!("s{i}"),
            op("add", vec![Expr::var(&t1), Expr::var(&t2)]),
        );
        let xi = bind(format!("x{i}"), op("nn.relu", vec![Expr::var(&s)]));
        bind(
            format!("d{i}"),
            op("multiply", vec![Expr::var(&xi), Expr::var(&xi)]),
        );
        cur = Expr::var(&xi);
    }
    let body = Expr::lets(bindings, cur);
    Module::from_functions([("main", Function::new(vec![x], None, body, Attrs::new()))])
}

/// `functions` functions `@f0`, `@f1`, ... without parameters, each the `matmul` of two
/// deterministic constant `size`×`size` float32 matrices: work for `FoldConstant` that is all
/// arithmetic, spread evenly over functions (for measuring a function pass on several threads).
pub fn constant_matmuls(functions: usize, size: usize) -> Module {
    let mut seed = 7;
    Module::from_functions((0..functions).map(|i| {
        let a = constant(&[size, size], &mut seed);
        let b = constant(&[size, size], &mut seed);
        let body = op("matmul", vec![a, b]);
        (
            format!("f{i}"),
            Function::new(vec![], None, body, Attrs::new()),
        )
    }))
}

/// A float32 constant of `shape` with values from a linear congruential sequence.
fn constant(shape: &[usize], seed: &mut u64) -> Expr {
    let n = shape.iter().product();
    let values = (0..n)
        .map(|_| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((*seed >> 33) % 2001) as f64 / 1000.0 - 1.0
        })
        .collect();
    let tensor = Tensor::from_vec(DType::Float32, shape, values)
        .unwrap_or_else(|e| unreachable!("a shape and its element count agree: {e}"));
    Expr::constant(tensor)
}

/// A call of a registered operator with no attributes.
fn op(name: &str, args: Vec<Expr>) -> Expr {
    Expr::op(name, args, Attrs::new())
        .unwrap_or_else(|e| unreachable!("`{name}` is a registered operator: {e}"))
}
