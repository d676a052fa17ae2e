//! Shape arithmetic on symbolic dimensions: the value of a small integer tensor whose elements
//! are sizes, each static or named (`Shape → Gather → Unsqueeze → Concat` of a tensor of shape
//! `(batch, seq, 128)` is `[batch, seq, 4, 32]`), so that a computed `Reshape`, `Expand` or
//! `Range` of a model with symbolic dimensions imports with its sizes kept by name.

use std::sync::Arc;

use irpass_ir::op::OpPattern;
use irpass_ir::{DType, Dim, ExprId, Node, Symbol, Tensor};

use super::Importer;

/// The most elements a shape value has (a shape's rank).
const MAX_ELEMENTS: usize = 64;

/// One element of a shape value as the importer knows it: a size (static, named, or `?`), or
/// the run-time size of a tensor's dimension (`Shape(x)[1]` where `x`'s type says `?` there).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Size {
    /// A size known statically or by name, or `?`.
    Dim(Dim),
    /// Dimension `.1` of the tensor `.0`, whatever it is at run time.
    Of(ExprId, usize),
    /// `.1` (2 or more) times the size named `.0` (`batch * 4`, a batch of patches).
    Scaled(Symbol, i64),
}

impl Size {
    /// The size as a dimension (`?` for a dimension known only by where it comes from or as
    /// a multiple of a name).
    pub(crate) fn dim(self) -> Dim {
        match self {
            Size::Dim(d) => d,
            Size::Of(..) | Size::Scaled(..) => Dim::Any,
        }
    }

    /// The size as a name times a factor (`batch` is `batch * 1`).
    fn scaled(self) -> Option<(Symbol, i64)> {
        match self {
            Size::Dim(Dim::Named(s)) => Some((s, 1)),
            Size::Scaled(s, k) => Some((s, k)),
            _ => None,
        }
    }
}

/// The element count of a tensor of shape `shape`: static sizes multiplied, and at most one
/// name (`(batch, 3, 8)` is `batch * 24`).
fn count(shape: &[Dim]) -> Option<Elements> {
    let mut out = Elements {
        name: None,
        times: 1,
    };
    for d in shape {
        match *d {
            Dim::Static(v) => out.times = out.times.checked_mul(v)?,
            Dim::Named(s) if out.name.is_none() => out.name = Some(s),
            _ => return None,
        }
    }
    Some(out)
}

/// An element count: `times`, times the size `name` where there is one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Elements {
    name: Option<Symbol>,
    times: i64,
}

/// How far [`Importer::elements`] follows a value back.
const MAX_DEPTH: usize = 64;

/// A reshape's `target` for an input of `input` elements (a name times a static count), with
/// sizes made static where the names cancel: when the target has one multiple of the name
/// (`batch * k`) and one size left to infer (-1 or `?`) among static ones, the size left is
/// the input's static count over the target's (`batch * 1024` elements to `(batch * 4, 16,
/// -1)` is `(?, 16, 64)`, the `?` then the reshape's -1). `None` where that does not apply.
pub(crate) fn cancel_names(input: Elements, target: &[Size]) -> Option<Vec<Dim>> {
    let (name, elements) = (input.name?, input.times);
    let (mut scaled_at, mut left_at, mut known) = (None, None, 1i64);
    for (i, size) in target.iter().enumerate() {
        match *size {
            Size::Dim(Dim::Static(v)) if v > 0 => known = known.checked_mul(v)?,
            Size::Dim(Dim::Static(-1) | Dim::Any) if left_at.is_none() => left_at = Some(i),
            s => match s.scaled() {
                Some((n, k)) if n == name && scaled_at.is_none() && k > 0 => {
                    scaled_at = Some(i);
                    known = known.checked_mul(k)?;
                }
                _ => return None,
            },
        }
    }
    let (scaled_at, left_at) = (scaled_at?, left_at?);
    if known == 0 || elements % known != 0 {
        return None;
    }
    let mut dims: Vec<Dim> = target.iter().map(|s| s.dim()).collect();
    dims[left_at] = Dim::Static(elements / known);
    // `batch` itself stays a name (a copy where the input has it at the same place).
    dims[scaled_at] = target[scaled_at].dim();
    Some(dims)
}

impl Importer {
    /// The element count of `e`, from its type, or where that has sizes it does not know,
    /// from the value it is computed from without changing the count: through reshapes and
    /// transposes (the IR's, or ONNX nodes kept whole) and elementwise operators whose other
    /// operands broadcast into it without growing it (`(?, 16, ?) + (16, 1)`). A run of
    /// reshapes between run-time shapes (MobileViT's unfold) keeps its count.
    pub(crate) fn elements(&mut self, e: ExprId) -> Option<Elements> {
        let mut e = e;
        for _ in 0..MAX_DEPTH {
            let ty = self.tensor_type(e)?;
            if let Some(n) = count(&ty.shape) {
                return Some(n);
            }
            let (op, args, _) = self.b.body().op_call(e)?;
            let (name, pattern, args) = (op.name(), op.def().pattern, args.to_vec());
            e = match name {
                "reshape" | "transpose" | "expand_dims" | "squeeze" | "copy" | "onnx.Reshape"
                | "onnx.Transpose" => *args.first()?,
                _ if matches!(pattern, OpPattern::ElemWise | OpPattern::Broadcast) => {
                    self.keeps_count(&ty.shape, &args)?
                }
                _ => return None,
            };
        }
        None
    }

    /// The operand of an elementwise call with output shape `out` that has the output's count:
    /// one of `out`'s very shape that each other operand broadcasts into without growing it
    /// (each of their sizes 1, or the static size the output has there), so that where `out`
    /// says `?` the operand's size is the output's.
    fn keeps_count(&mut self, out: &[Dim], args: &[ExprId]) -> Option<ExprId> {
        let shapes: Vec<Vec<Dim>> = args
            .iter()
            .map(|&a| self.tensor_type(a).map(|t| t.shape.clone()))
            .collect::<Option<_>>()?;
        let fits =
            |inner: &[Dim]| {
                inner.len() <= out.len()
                    && inner.iter().rev().zip(out.iter().rev()).all(|(&d, &o)| {
                        d == Dim::Static(1) || (matches!(d, Dim::Static(_)) && d == o)
                    })
            };
        let at = shapes.iter().position(|s| s.as_slice() == out)?;
        shapes
            .iter()
            .enumerate()
            .all(|(i, s)| i == at || fits(s))
            .then_some(args[at])
    }

    /// The elements of `e`, an integer tensor of rank 0 or 1, as sizes (a constant's
    /// elements are static), if each is known statically or by name.
    pub(crate) fn dims_value(&mut self, e: ExprId) -> Option<Vec<Dim>> {
        Some(self.sizes_value(e)?.into_iter().map(Size::dim).collect())
    }

    /// The elements of `e` as [`Importer::dims_value`] knows them, each size the value does
    /// not know kept as the tensor dimension it was read from, when it was.
    pub(crate) fn sizes_value(&mut self, e: ExprId) -> Option<Vec<Size>> {
        if let Some(v) = self.symbolic.get(&e) {
            return v.clone();
        }
        let v = self.compute_sizes_value(e);
        self.symbolic.insert(e, v.clone());
        v
    }

    /// The elements of `e` when [`Importer::dims_value`] knows each of them statically.
    pub(crate) fn static_ints(&mut self, e: ExprId) -> Option<Vec<i64>> {
        self.dims_value(e)?.iter().map(|d| d.value()).collect()
    }

    /// The value of `e` as a tensor when [`Importer::dims_value`] knows each of its elements
    /// statically.
    pub(crate) fn static_dims_value(&mut self, e: ExprId) -> Option<Arc<Tensor>> {
        let values = self.static_ints(e)?.into_iter().map(|v| v as f64).collect();
        let ty = self.tensor_type(e)?;
        let shape: Vec<usize> = ty.static_shape()?;
        Tensor::from_vec(ty.dtype, &shape, values)
            .ok()
            .map(Arc::new)
    }

    /// `e` again, as the simplest computation of the sizes [`Importer::dims_value`] knows it
    /// holds: a constant when they are static; else the pieces concatenated, static runs as
    /// constants and each named size sliced from the shape of a graph input that has it.
    /// `Expand`'s computed target `(batch, 4, seq, seq)` becomes `Concat(Shape(ids)[0:1], [4],
    /// Shape(ids)[1:2], Shape(ids)[1:2])` instead of the exporter's `Where`/`Equal`/`Mul`/
    /// `ConstantOfShape` chain. `e` itself where that is not known.
    pub(crate) fn shape_value(&mut self, e: ExprId) -> ExprId {
        let Some(ty) = self.tensor_type(e) else {
            return e;
        };
        if ty.rank() != 1 || !ty.dtype.is_int() {
            return e;
        }
        let Some(dims) = self.dims_value(e) else {
            return e;
        };
        let dtype = ty.dtype;
        let mut pieces = Vec::new();
        let mut run: Vec<f64> = Vec::new();
        for d in &dims {
            match *d {
                Dim::Static(v) => run.push(v as f64),
                Dim::Named(s) => {
                    let Some(&(source, axis)) = self.sizes.get(&s) else {
                        return e;
                    };
                    if !run.is_empty() {
                        pieces.push(self.int_constant(dtype, std::mem::take(&mut run)));
                    }
                    let Ok(piece) = self.size_of(source, axis, dtype) else {
                        return e;
                    };
                    pieces.push(piece);
                }
                Dim::Any => return e,
            }
        }
        if !run.is_empty() {
            pieces.push(self.int_constant(dtype, run));
        }
        match pieces.as_slice() {
            [one] => *one,
            _ => {
                let t = self.b.tuple(&pieces);
                let attrs = irpass_ir::Attrs::from_pairs([("axis", irpass_ir::AttrValue::Int(0))]);
                self.b.op("concatenate", &[t], attrs).unwrap_or(e)
            }
        }
    }

    fn int_constant(&mut self, dtype: DType, values: Vec<f64>) -> ExprId {
        let n = values.len();
        let t = Tensor::from_vec(dtype, &[n], values).expect("one value per element");
        self.b.constant(Arc::new(t))
    }

    /// `Shape(source)[axis:axis+1]` as `dtype`.
    fn size_of(&mut self, source: ExprId, axis: usize, dtype: DType) -> Result<ExprId, String> {
        use irpass_ir::{AttrValue, Attrs};
        let shape = self.b.op(
            "shape_of",
            &[source],
            Attrs::from_pairs([("dtype", AttrValue::Str(dtype.name().into()))]),
        )?;
        let ints = |v: i64| AttrValue::List(vec![AttrValue::Int(v)]);
        self.b.op(
            "strided_slice",
            &[shape],
            Attrs::from_pairs([("begin", ints(axis as i64)), ("end", ints(axis as i64 + 1))]),
        )
    }

    fn compute_sizes_value(&mut self, e: ExprId) -> Option<Vec<Size>> {
        let ty = self.tensor_type(e)?;
        if !(ty.dtype.is_int() || ty.dtype == DType::Bool) || ty.rank() > 1 {
            return None;
        }
        if let Some(t) = self.constant(e) {
            return (t.len() <= MAX_ELEMENTS).then(|| {
                t.values()
                    .iter()
                    .map(|&v| Size::Dim(Dim::Static(v as i64)))
                    .collect()
            });
        }
        let (op, args, attrs) = self.b.body().op_call(e)?;
        let (op, args, attrs) = (op.name().to_string(), args.to_vec(), attrs.clone());
        match op.as_str() {
            "shape_of" => Some(
                self.tensor_type(args[0])?
                    .shape
                    .iter()
                    .enumerate()
                    .map(|(i, &d)| match d {
                        Dim::Any => Size::Of(args[0], i),
                        d => Size::Dim(d),
                    })
                    .collect(),
            ),
            "take" => {
                let data = self.sizes_value(args[0])?;
                if attrs.get("axis").and_then(|a| a.as_int()).unwrap_or(0) != 0 {
                    return None;
                }
                let indices = self.constant(args[1])?;
                let n = data.len() as i64;
                indices
                    .values()
                    .iter()
                    .map(|&i| {
                        let i = i as i64;
                        let i = if i < 0 { i + n } else { i };
                        data.get(usize::try_from(i).ok()?).copied()
                    })
                    .collect()
            }
            "strided_slice" => {
                let data = self.sizes_value(args[0])?;
                let ints = |k: &str| attrs.get(k).and_then(|a| a.as_int_list());
                let (begin, end) = (ints("begin")?, ints("end")?);
                if ints("axes").is_some_and(|a| a != [0] && a != [-1]) {
                    return None;
                }
                let step = ints("strides").map_or(Some(1), |s| s.first().copied())?;
                let r = irpass_ir::op::slice_range(
                    data.len() as i64,
                    *begin.first()?,
                    *end.first()?,
                    step,
                )?;
                Some(
                    (0..r.len)
                        .map(|i| data[(r.start + i * r.step) as usize])
                        .collect(),
                )
            }
            "concatenate" => {
                let Node::Tuple(fields) = self.b.body().node(args[0]) else {
                    return None;
                };
                let fields = self.b.body().list(*fields).to_vec();
                let mut out = Vec::new();
                for f in fields {
                    out.extend(self.sizes_value(f)?);
                }
                (out.len() <= MAX_ELEMENTS).then_some(out)
            }
            "equal" | "where" | "multiply" | "add" | "subtract" | "floor_divide" | "divide"
            | "maximum" | "minimum" => {
                let sizes = args
                    .iter()
                    .map(|&a| self.sizes_value(a))
                    .collect::<Option<Vec<_>>>()?;
                if op == "multiply"
                    && let [l, r] = sizes.as_slice()
                    && let Some(product) = scaled_product(l, r)
                {
                    return Some(product);
                }
                let values: Vec<Vec<Dim>> = sizes
                    .iter()
                    .map(|v| v.iter().map(|s| s.dim()).collect())
                    .collect();
                let n = values.iter().map(Vec::len).max()?;
                if values.iter().any(|v| v.len() != n && v.len() != 1) {
                    return None;
                }
                let at = |v: &Vec<Dim>, i: usize| if v.len() == 1 { v[0] } else { v[i] };
                // An element this cannot compute (`batch * 4`) is `?`: the others stay known,
                // and a reshape's target with one `?` among static sizes is still static
                // but for one -1.
                Some(
                    (0..n)
                        .map(|i| {
                            let row: Vec<Dim> = values.iter().map(|v| at(v, i)).collect();
                            Size::Dim(elementwise(&op, &row).unwrap_or(Dim::Any))
                        })
                        .collect(),
                )
            }
            // The same elements in the same order.
            "expand_dims" | "reshape" | "squeeze" | "cast" | "copy" => self.sizes_value(args[0]),
            _ => None,
        }
    }
}

/// `l * r`, one size each, when one is a name or a multiple of one and the other a static
/// factor (`batch * 4`).
fn scaled_product(l: &[Size], r: &[Size]) -> Option<Vec<Size>> {
    let ([a], [b]) = (l, r) else {
        return None;
    };
    let ((name, k), m) = match (a.scaled(), b.scaled(), a.dim(), b.dim()) {
        (Some(s), None, _, Dim::Static(m)) | (None, Some(s), Dim::Static(m), _) => (s, m),
        _ => return None,
    };
    let k = k.checked_mul(m)?;
    Some(vec![match k {
        1 => Size::Dim(Dim::Named(name)),
        k if k >= 2 => Size::Scaled(name, k),
        _ => return None,
    }])
}

/// One element of an elementwise operator on sizes: computed when the operands are static,
/// and where a name's meaning decides it (`batch * 1` is `batch`; a size is never negative, so
/// `batch == -1` is false).
fn elementwise(op: &str, x: &[Dim]) -> Option<Dim> {
    use Dim::{Named, Static};
    let bool_dim = |b: bool| Some(Static(i64::from(b)));
    match (op, x) {
        ("where", [Static(c), a, b]) => Some(if *c != 0 { *a } else { *b }),
        ("equal", [Static(a), Static(b)]) => bool_dim(a == b),
        ("equal", [Named(a), Named(b)]) if a == b => bool_dim(true),
        ("equal", [Named(_), Static(v)] | [Static(v), Named(_)]) if *v < 0 => bool_dim(false),
        ("multiply", [Static(a), Static(b)]) => a.checked_mul(*b).map(Static),
        ("multiply", [d @ Named(_), Static(1)] | [Static(1), d @ Named(_)]) => Some(*d),
        ("add", [Static(a), Static(b)]) => a.checked_add(*b).map(Static),
        ("add" | "subtract", [d @ Named(_), Static(0)]) => Some(*d),
        ("add", [Static(0), d @ Named(_)]) => Some(*d),
        ("subtract", [Static(a), Static(b)]) => a.checked_sub(*b).map(Static),
        // Integer division truncates (ONNX's `Div`); `floor_divide` rounds down.
        ("divide", [Static(a), Static(b)]) => a.checked_div(*b).map(Static),
        ("floor_divide", [Static(a), Static(b)]) => {
            let q = a.checked_div(*b)?;
            Some(Static(if a % b != 0 && ((*a < 0) != (*b < 0)) {
                q - 1
            } else {
                q
            }))
        }
        ("floor_divide" | "divide", [d @ Named(_), Static(1)]) => Some(*d),
        ("maximum", [Static(a), Static(b)]) => Some(Static(*a.max(b))),
        ("minimum", [Static(a), Static(b)]) => Some(Static(*a.min(b))),
        _ => None,
    }
}
