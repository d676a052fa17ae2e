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

use super::body::{BodyBuilder, ClosureData, ExprId, VarId};
use super::{Attrs, DType, Tensor, Type, Value};

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

/// What the generator builds programs with (an arena; the generator is written against this
/// small interface so that its logic reads as the grammar it follows).
trait Backend {
    type E: Clone;
    type V: Clone;
    fn var(&mut self, name: &str, ty: Option<Type>) -> Self::V;
    fn use_var(&mut self, v: &Self::V) -> Self::E;
    fn constant(&mut self, t: Tensor) -> Self::E;
    fn op(&mut self, name: &str, args: Vec<Self::E>, attrs: Attrs) -> Self::E;
    fn tuple(&mut self, fields: Vec<Self::E>) -> Self::E;
    fn get(&mut self, t: Self::E, i: u32) -> Self::E;
    fn if_(&mut self, c: Self::E, t: Self::E, o: Self::E) -> Self::E;
    fn closure(&mut self, params: Vec<Self::V>, ret: Option<Type>, body: Self::E) -> Self::E;
    fn call(&mut self, f: Self::E, args: Vec<Self::E>) -> Self::E;
    fn lets(&mut self, bindings: Vec<(Self::V, Self::E)>, body: Self::E) -> Self::E;
}

/// An arena.
struct ArenaBackend(BodyBuilder);

impl Backend for ArenaBackend {
    type E = ExprId;
    type V = VarId;
    fn var(&mut self, name: &str, ty: Option<Type>) -> VarId {
        self.0.var(name, ty, None)
    }
    fn use_var(&mut self, v: &VarId) -> ExprId {
        self.0.use_var(*v)
    }
    fn constant(&mut self, t: Tensor) -> ExprId {
        self.0.constant(std::sync::Arc::new(t))
    }
    fn op(&mut self, name: &str, args: Vec<ExprId>, attrs: Attrs) -> ExprId {
        self.0
            .op(name, &args, attrs)
            .unwrap_or_else(|e| panic!("random program: {e}"))
    }
    fn tuple(&mut self, fields: Vec<ExprId>) -> ExprId {
        self.0.tuple(&fields)
    }
    fn get(&mut self, t: ExprId, i: u32) -> ExprId {
        self.0.proj(t, i)
    }
    fn if_(&mut self, c: ExprId, t: ExprId, o: ExprId) -> ExprId {
        self.0.if_(c, t, o)
    }
    fn closure(&mut self, params: Vec<VarId>, ret: Option<Type>, body: ExprId) -> ExprId {
        self.0.closure(ClosureData {
            params,
            ret_type: ret,
            attrs: Attrs::new(),
            body,
        })
    }
    fn call(&mut self, f: ExprId, args: Vec<ExprId>) -> ExprId {
        self.0.call(f, &args)
    }
    fn lets(&mut self, bindings: Vec<(VarId, ExprId)>, body: ExprId) -> ExprId {
        self.0.lets(&bindings, body)
    }
}

struct Gen<'c, B: Backend> {
    b: &'c mut B,
    choices: &'c [u32],
    next: usize,
    /// Values available: (expression to use, kind).
    pool: Vec<(B::E, Kind)>,
    /// Bindings in order: `Some(var)` for a `let`, `None` for a graph node.
    bindings: Vec<(Option<B::V>, B::E)>,
    cond: B::V,
    counter: usize,
}

impl<B: Backend> Gen<'_, B> {
    fn pick(&mut self, n: u32) -> u32 {
        let c = self
            .choices
            .get(self.next)
            .copied()
            .unwrap_or((self.next as u32).wrapping_mul(2_654_435_761));
        self.next += 1;
        c % n.max(1)
    }

    fn value_of(&mut self, kind: Option<Kind>) -> (B::E, Kind) {
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

    fn constant(&mut self, kind: Kind) -> B::E {
        let n: usize = kind.shape().iter().product();
        let values = (0..n)
            .map(|_| (self.pick(41) as f64 - 20.0) / 8.0)
            .collect();
        self.b.constant(
            Tensor::from_vec(DType::Float32, kind.shape(), values)
                .unwrap_or_else(|_| Tensor::scalar(DType::Float32, 0.0)),
        )
    }

    fn op(&mut self, name: &str, args: Vec<B::E>, attrs: Attrs) -> B::E {
        self.b.op(name, args, attrs)
    }

    fn unary(&mut self, x: B::E) -> B::E {
        let name = ["tanh", "negative", "nn.relu", "sigmoid", "abs", "exp"][self.pick(6) as usize];
        self.op(name, vec![x], Attrs::new())
    }

    fn binary(&mut self, a: B::E, b: B::E) -> B::E {
        let name = ["add", "subtract", "multiply", "maximum", "minimum"][self.pick(5) as usize];
        self.op(name, vec![a, b], Attrs::new())
    }

    /// Adds a new value to the pool, as a `let` or a graph node.
    fn bind(&mut self, e: B::E, kind: Kind) {
        if self.pick(3) == 0 {
            self.counter += 1;
            let annotated = self.pick(2) == 0;
            let v = self
                .b
                .var(&format!("v{}", self.counter), annotated.then(|| kind.ty()));
            self.bindings.push((Some(v.clone()), e));
            let use_v = self.b.use_var(&v);
            self.pool.push((use_v, kind));
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
                let t = self.b.tuple(vec![a, b]);
                let (e, out) = if self.pick(2) == 0 {
                    (self.b.get(t, 0), k)
                } else {
                    (self.b.get(t, 1), kb)
                };
                self.bind(e, out);
            }
            7 => {
                let (x, k) = self.value_of(None);
                let (y, _) = self.value_of(Some(k));
                let then = self.unary(x);
                let cond = self.cond.clone();
                let c = self.b.use_var(&cond);
                let e = self.b.if_(c, then, y);
                self.bind(e, k);
            }
            8 => {
                // let %f = fn (%y) { unary(binary(%y, captured)) }; %f(x)
                let (x, k) = self.value_of(None);
                let (captured, _) = self.value_of(Some(k));
                self.counter += 1;
                let annotated = self.pick(2) == 0;
                let y = self
                    .b
                    .var(&format!("y{}", self.counter), annotated.then(|| k.ty()));
                let y_use = self.b.use_var(&y);
                let inner = self.binary(y_use, captured);
                let body = self.unary(inner);
                let f = self.b.closure(vec![y], annotated.then(|| k.ty()), body);
                let fv = self.b.var(&format!("f{}", self.counter), None);
                self.bindings.push((Some(fv.clone()), f));
                // The call is a `let` so that it stays in the program even when unused: an
                // unannotated closure that is never called has no type to infer.
                let f_use = self.b.use_var(&fv);
                let call = self.b.call(f_use, vec![x]);
                let cv = self.b.var(&format!("r{}", self.counter), None);
                self.bindings.push((Some(cv.clone()), call));
                let cv_use = self.b.use_var(&cv);
                self.pool.push((cv_use, k));
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
pub fn program(choices: &[u32]) -> crate::Module {
    let mut b = ArenaBackend(BodyBuilder::new());
    let (params, root) = generate(&mut b, choices);
    let code = crate::body::ArenaFunction {
        body: b.0.finish(),
        params,
        root,
    };
    crate::Module::from_functions([("main", crate::Function::new(code, None, Attrs::new(), None))])
}

/// The parameters and body of a program from `choices`.
fn generate<B: Backend>(b: &mut B, choices: &[u32]) -> (Vec<B::V>, B::E) {
    let p0 = b.var("p0", Some(Kind::A.ty()));
    let p1 = b.var("p1", Some(Kind::B.ty()));
    let cond = b.var("c", Some(Type::scalar(DType::Bool)));
    let (u0, u1) = (b.use_var(&p0), b.use_var(&p1));
    let mut g = Gen {
        b,
        choices,
        next: 0,
        pool: vec![(u0.clone(), Kind::A), (u1, Kind::B)],
        bindings: Vec::new(),
        cond: cond.clone(),
        counter: 0,
    };
    let steps = 1 + choices.len() / 3;
    for _ in 0..steps {
        g.step();
    }
    let (last, _) = g.pool.last().cloned().unwrap_or((u0, Kind::A));
    let (other, _) = g.value_of(None);
    let body = if g.pick(2) == 0 {
        last
    } else {
        g.b.tuple(vec![last, other])
    };
    let bindings: Vec<(B::V, B::E)> = std::mem::take(&mut g.bindings)
        .into_iter()
        .filter_map(|(v, x)| Some((v?, x)))
        .collect();
    let body = g.b.lets(bindings, body);
    (vec![p0, p1, cond], body)
}

/// Deterministic inputs for the `@main` of a [`program`] (values from `seed`).
pub fn inputs(module: &crate::Module, seed: u64) -> Vec<Value> {
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
    let body = &main.code.body;
    main.code
        .params
        .iter()
        .map(
            |&p| match body.var(p).annotation.as_ref().and_then(Type::as_tensor) {
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
            },
        )
        .collect()
}

/// Inputs for `@main` of a program of [`extreme_call`]s: parameter `i` (a tensor of a static
/// shape) filled with `1 + i` in its declared type.
///
/// ```
/// use irpass_ir::{Module, random};
/// let m = Module::parse("def @main(%a: Tensor[(2), int64], %b: float32) { %a }").unwrap();
/// let inputs = random::filled_inputs(&m);
/// assert_eq!(inputs[0].as_tensor().unwrap().values(), [1.0, 1.0]);
/// assert_eq!(inputs[1].as_tensor().unwrap().values(), [2.0]);
/// ```
pub fn filled_inputs(module: &crate::Module) -> Vec<Value> {
    let Some(main) = module.get("main") else {
        return Vec::new();
    };
    main.params()
        .enumerate()
        .map(|(i, p)| {
            let ty = p.annotation.as_ref().and_then(Type::as_tensor);
            let (dtype, dims) = ty
                .map(|t| (t.dtype, t.static_shape().unwrap_or_default()))
                .unwrap_or((DType::Float32, Vec::new()));
            Value::tensor(Tensor::full(dtype, &dims, 1.0 + i as f64))
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
            (AttrKind::Floats, _) => "[1.0]".into(),
            (AttrKind::Strs, _) => "[\"a\"]".into(),
            (AttrKind::Bool, _) => "True".into(),
            (AttrKind::DType, _) => "\"float32\"".into(),
            (AttrKind::Str, _) => "\"NCHW\"".into(),
        };
        Some(format!("{}={value}", a.name))
    });
    let all: Vec<String> = args.iter().cloned().chain(attrs).collect();
    format!("{}({})", op.name(), all.join(", "))
}
