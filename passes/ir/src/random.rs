//! Random well-typed programs, for property tests (here and in pass libraries): a program is
//! built deterministically from a list of choices, so a property-testing tool can generate and
//! shrink the list.
//!
//! The programs use `let`s and shared graph nodes, closures (some with unannotated parameters),
//! `if`, tuples and projections, constants, broadcasting, reductions and layout changes, over
//! float32 tensors of a few related shapes.
//!
//! ```
//! use irpass_ir::random;
//! let m = random::program(&[7, 1, 99, 3, 42, 8, 5, 6, 2]);
//! m.infer_types().unwrap();
//! let out = irpass_ir::eval_function(&m, "main", random::inputs(&m, 1)).unwrap();
//! # let _ = out;
//! ```

use super::{Attrs, DType, Expr, Function, Module, Tensor, Type, Value, Var};

/// The shapes values take: `A` = (2, 3), `B` = (3), `C` = (3, 2), `S` = scalar.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    A,
    B,
    C,
    S,
}

impl Kind {
    fn shape(self) -> &'static [usize] {
        match self {
            Kind::A => &[2, 3],
            Kind::B => &[3],
            Kind::C => &[3, 2],
            Kind::S => &[],
        }
    }

    fn ty(self) -> Type {
        let s: Vec<i64> = self.shape().iter().map(|&d| d as i64).collect();
        Type::tensor(&s, DType::Float32)
    }
}

struct Gen<'c> {
    choices: &'c [u32],
    next: usize,
    /// Values available: (expression to use, kind).
    pool: Vec<(Expr, Kind)>,
    /// Bindings in order: `Some(var)` for a `let`, `None` for a graph node.
    bindings: Vec<(Option<Var>, Expr)>,
    cond: Var,
    counter: usize,
}

impl Gen<'_> {
    fn pick(&mut self, n: u32) -> u32 {
        let c = self
            .choices
            .get(self.next)
            .copied()
            .unwrap_or((self.next as u32).wrapping_mul(2_654_435_761));
        self.next += 1;
        c % n.max(1)
    }

    fn value_of(&mut self, kind: Option<Kind>) -> (Expr, Kind) {
        let candidates: Vec<usize> = self
            .pool
            .iter()
            .enumerate()
            .filter(|(_, (_, k))| kind.is_none_or(|want| *k == want))
            .map(|(i, _)| i)
            .collect();
        if candidates.is_empty() {
            let k = kind.unwrap_or(Kind::A);
            return (self.constant(k), k);
        }
        let i = candidates[self.pick(candidates.len() as u32) as usize];
        self.pool[i].clone()
    }

    fn constant(&mut self, kind: Kind) -> Expr {
        let n: usize = kind.shape().iter().product();
        let values = (0..n)
            .map(|_| (self.pick(41) as f64 - 20.0) / 8.0)
            .collect();
        Expr::constant(
            Tensor::from_vec(DType::Float32, kind.shape(), values)
                .unwrap_or_else(|_| Tensor::scalar(DType::Float32, 0.0)),
        )
    }

    fn op(&self, name: &str, args: Vec<Expr>, attrs: Attrs) -> Expr {
        Expr::op(name, args, attrs).unwrap_or_else(|e| panic!("random program: {e}"))
    }

    fn unary(&mut self, x: Expr) -> Expr {
        let name = ["tanh", "negative", "nn.relu", "sigmoid", "abs", "exp"][self.pick(6) as usize];
        self.op(name, vec![x], Attrs::new())
    }

    fn binary(&mut self, a: Expr, b: Expr) -> Expr {
        let name = ["add", "subtract", "multiply", "maximum", "minimum"][self.pick(5) as usize];
        self.op(name, vec![a, b], Attrs::new())
    }

    /// Adds a new value to the pool, as a `let` or a graph node.
    fn bind(&mut self, e: Expr, kind: Kind) {
        if self.pick(3) == 0 {
            self.counter += 1;
            let annotated = self.pick(2) == 0;
            let v = Var::new(format!("v{}", self.counter), annotated.then(|| kind.ty()));
            self.bindings.push((Some(v.clone()), e));
            self.pool.push((Expr::var(&v), kind));
        } else {
            self.bindings.push((None, e.clone()));
            self.pool.push((e, kind));
        }
    }

    fn step(&mut self) {
        match self.pick(10) {
            0 | 1 => {
                let (a, k) = self.value_of(None);
                let b = match (k, self.pick(3)) {
                    (Kind::A, 0) => self.value_of(Some(Kind::B)).0,
                    (_, 1) => self.value_of(Some(Kind::S)).0,
                    _ => self.value_of(Some(k)).0,
                };
                let e = self.binary(a, b);
                self.bind(e, k);
            }
            2 => {
                let (x, k) = self.value_of(None);
                let e = self.unary(x);
                self.bind(e, k);
            }
            3 => {
                let k = [Kind::A, Kind::B, Kind::S][self.pick(3) as usize];
                let c = self.constant(k);
                self.bind(c, k);
            }
            4 => {
                let want = [Kind::A, Kind::C][self.pick(2) as usize];
                let (x, k) = self.value_of(Some(want));
                let (e, out) = if self.pick(2) == 0 {
                    (
                        self.op("transpose", vec![x], Attrs::new()),
                        if k == Kind::A { Kind::C } else { Kind::A },
                    )
                } else {
                    let shape = if k == Kind::A { "[3, 2]" } else { "[2, 3]" };
                    let attrs = Attrs::from_pairs([("newshape", parse_list(shape))]);
                    (
                        self.op("reshape", vec![x], attrs),
                        if k == Kind::A { Kind::C } else { Kind::A },
                    )
                };
                self.bind(e, out);
            }
            5 => {
                let (x, _) = self.value_of(Some(Kind::A));
                let (e, k) = match self.pick(3) {
                    0 => (
                        self.op(
                            "sum",
                            vec![x],
                            Attrs::from_pairs([("axis", parse_list("[0]"))]),
                        ),
                        Kind::B,
                    ),
                    1 => (self.op("mean", vec![x], Attrs::new()), Kind::S),
                    _ => {
                        let axis = if self.pick(2) == 0 { 0 } else { -1 };
                        let attrs = Attrs::from_pairs([("axis", super::AttrValue::Int(axis))]);
                        (self.op("nn.softmax", vec![x], attrs), Kind::A)
                    }
                };
                self.bind(e, k);
            }
            6 => {
                let (a, k) = self.value_of(None);
                let (b, kb) = self.value_of(None);
                let t = Expr::tuple(vec![a, b]);
                let (e, out) = if self.pick(2) == 0 {
                    (Expr::get(t, 0), k)
                } else {
                    (Expr::get(t, 1), kb)
                };
                self.bind(e, out);
            }
            7 => {
                let (x, k) = self.value_of(None);
                let (y, _) = self.value_of(Some(k));
                let then = self.unary(x);
                let e = Expr::if_(Expr::var(&self.cond), then, y);
                self.bind(e, k);
            }
            8 => {
                // let %f = fn (%y) { unary(binary(%y, captured)) }; %f(x)
                let (x, k) = self.value_of(None);
                let (captured, _) = self.value_of(Some(k));
                self.counter += 1;
                let annotated = self.pick(2) == 0;
                let y = Var::new(format!("y{}", self.counter), annotated.then(|| k.ty()));
                let inner = self.binary(Expr::var(&y), captured);
                let body = self.unary(inner);
                let f = Function::new(vec![y], annotated.then(|| k.ty()), body, Attrs::new());
                let fv = Var::new(format!("f{}", self.counter), None);
                self.bindings.push((Some(fv.clone()), Expr::function(f)));
                // The call is a `let` so that it stays in the program even when unused: an
                // unannotated closure that is never called has no type to infer.
                let call = Expr::call(Expr::var(&fv), vec![x]);
                let cv = Var::new(format!("r{}", self.counter), None);
                self.bindings.push((Some(cv.clone()), call));
                self.pool.push((Expr::var(&cv), k));
            }
            _ => {
                let (x, k) = self.value_of(None);
                let e = self.unary(x);
                let e2 = self.binary(e.clone(), e);
                self.bind(e2, k);
            }
        }
    }
}

fn parse_list(text: &str) -> super::AttrValue {
    super::AttrValue::List(
        text.trim_matches(['[', ']'])
            .split(',')
            .filter_map(|s| s.trim().parse::<i64>().ok())
            .map(super::AttrValue::Int)
            .collect(),
    )
}

/// A well-typed module with one function `@main(%p0: Tensor[(2, 3), float32],
/// %p1: Tensor[(3), float32], %c: bool)`, built from `choices` (any list; longer lists make
/// bigger programs).
pub fn program(choices: &[u32]) -> Module {
    let p0 = Var::new("p0", Some(Kind::A.ty()));
    let p1 = Var::new("p1", Some(Kind::B.ty()));
    let cond = Var::new("c", Some(Type::scalar(DType::Bool)));
    let mut g = Gen {
        choices,
        next: 0,
        pool: vec![(Expr::var(&p0), Kind::A), (Expr::var(&p1), Kind::B)],
        bindings: Vec::new(),
        cond: cond.clone(),
        counter: 0,
    };
    let steps = 1 + choices.len() / 3;
    for _ in 0..steps {
        g.step();
    }
    let (last, _) = g.pool.last().cloned().unwrap_or((Expr::var(&p0), Kind::A));
    let (other, _) = g.value_of(None);
    let body = if g.pick(2) == 0 {
        last
    } else {
        Expr::tuple(vec![last, other])
    };
    let bindings = g.bindings.into_iter();
    let body = Expr::lets(bindings.filter_map(|(v, x)| Some((v?, x))).collect(), body);
    Module::from_functions([(
        "main",
        Function::new(vec![p0, p1, cond], None, body, Attrs::new()),
    )])
}

/// Deterministic inputs for the `@main` of a [`program`] (values from `seed`).
pub fn inputs(module: &Module, seed: u64) -> Vec<Value> {
    let Some(main) = module.get("main") else {
        return Vec::new();
    };
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) % 4001) as f64 / 1000.0 - 2.0
    };
    main.params
        .iter()
        .map(|p| match p.annotation.as_ref().and_then(Type::as_tensor) {
            Some(t) => {
                let shape = t.static_shape().unwrap_or_default();
                let n: usize = shape.iter().product();
                let values = (0..n).map(|_| next()).collect();
                Value::tensor(
                    Tensor::from_vec(t.dtype, &shape, values)
                        .unwrap_or_else(|_| Tensor::scalar(t.dtype, 0.0)),
                )
            }
            None => Value::tensor(Tensor::scalar(DType::Float32, 0.0)),
        })
        .collect()
}

/// Integer attribute values at the edges of their range, for [`extreme_call`]: -1, 2, the
/// ends of the `i64` range and 2^62.
pub const EXTREME_INTS: [&str; 5] = [
    "-1",
    "2",
    "9223372036854775807",
    "-9223372036854775808",
    "4611686018427387904",
];

/// The argument counts to try for `op`: its count, or its minimum and one more.
pub fn arg_counts(op: super::Op) -> Vec<usize> {
    match op.def().arity {
        super::op::Arity::Exact(n) => vec![n],
        super::op::Arity::AtLeast(n) => vec![n, n + 1],
    }
}

/// The text of a call of `op` on `args`, for robustness tests: every attribute the schema
/// requires gets a plausible value, and with `int` given every integer (or integer list)
/// attribute is set to it (e.g. one of [`EXTREME_INTS`]).
///
/// ```
/// use irpass_ir::{Op, random};
/// let call = random::extreme_call(Op::get("nn.max_pool2d").unwrap(), &["%x".into()], Some("-1"));
/// assert!(call.starts_with("nn.max_pool2d(%x, pool_size=[-1, -1]"), "{call}");
/// ```
pub fn extreme_call(op: super::Op, args: &[String], int: Option<&str>) -> String {
    use super::op::{AttrDefault, AttrKind};
    let attrs = op.def().attrs.iter().filter_map(|a| {
        let required = matches!(a.default, AttrDefault::Required);
        let value = match (a.kind, int) {
            (AttrKind::Int | AttrKind::OptInt, Some(v)) => v.to_string(),
            (AttrKind::Ints | AttrKind::OptInts | AttrKind::IntOrInts, Some(v)) => {
                format!("[{v}, {v}]")
            }
            _ if !required => return None,
            (AttrKind::Int | AttrKind::OptInt, None) => "1".into(),
            (AttrKind::Ints | AttrKind::OptInts | AttrKind::IntOrInts, None) => "[1]".into(),
            (AttrKind::Float, _) => "1.0".into(),
            (AttrKind::Bool, _) => "True".into(),
            (AttrKind::DType, _) => "\"float32\"".into(),
            (AttrKind::Str, _) => "\"NCHW\"".into(),
        };
        Some(format!("{}={value}", a.name))
    });
    let all: Vec<String> = args.iter().cloned().chain(attrs).collect();
    format!("{}({})", op.name(), all.join(", "))
}
