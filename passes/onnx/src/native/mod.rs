//! ONNX operators the IR holds as themselves: each is an IR operator named `onnx.<OpType>`
//! (`onnx.TopK`), defined here once — its attributes (ONNX's, same names and defaults), its
//! type relation, its reference kernel, its fusion pattern and the operator versions whose
//! definition it implements — by one [`native!`] entry. Import and export are the same for
//! all of them: a node of an implemented version becomes one call with the node's inputs and
//! attributes, and the call is written back as that node. Unlike a node kept opaque
//! (`onnx.node`), the passes see a known operator: `FoldConstant` folds it, the interpreter
//! runs it, CSE merges two alike, FuseOps fuses by its pattern.
//!
//! Every native operator also takes four attributes of irpass's own: `absent` (the positions
//! of optional inputs the node leaves out), `outputs` (how many outputs the node has; several
//! make the call's value a tuple), `types` (the output types the model declares or the
//! importer infers from input values, in `onnx.node`'s `types` form: where the type relation
//! cannot tell a size from the inputs' types alone — a `TopK`'s `k` given as a tensor — the
//! declared size stands) and `version` (for an operator that implements several versions, the
//! one whose definition the call follows: a kernel reads it where they differ, and the call is
//! written only at an opset of that version).
//!
//! An operator with graph attributes (`Loop`'s `body`) takes each as a closure, its last
//! arguments in the order its entry names them (`bodies`): the passes optimise inside the
//! body, the kernel calls it through [`irpass_ir::eval::call_closure`], and the writer writes
//! the closure back as the graph attribute.

mod args;
mod attention;
mod cast;
mod elementwise;
mod forest;
mod fourier;
mod index;
mod linalg;
mod loops;
mod loss;
mod ml;
mod normalize;
mod optional;
mod pool;
mod quant;
mod random;
mod recurrent;
mod reduce;
mod resize;
mod sampling;
mod select;
mod sequence;
mod shape;
mod signal;
mod sized;
mod string_ops;
mod text;
mod training;
mod window;

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader, AttrSpec};
use irpass_ir::{Dim, Tensor, TensorType, Type, Value};

pub(crate) use args::Args;

/// The IR operators' name prefix.
pub(crate) const PREFIX: &str = "onnx.";

/// What import and export know of a native operator.
pub(crate) struct Native {
    /// The ONNX operator.
    pub onnx: &'static str,
    /// Its domain (`""`: the default one).
    pub domain: &'static str,
    /// The versions (`since_version`) whose definition the operator implements; in the
    /// default domain, a later version that changes only the element types reads as the one
    /// before it ([`crate::versions`]); in another, the list names every version from the
    /// first it holds.
    pub versions: &'static [i64],
    /// Its ONNX attributes (those of the IR operator but `absent`, `outputs`, `types` and
    /// `version`).
    pub attrs: &'static [AttrSpec],
    /// Those of its attributes that are tensors in ONNX: the IR holds each as the base64 text
    /// of its `TensorProto` ([`tensor_attr`]).
    pub tensor_attrs: &'static [&'static str],
    /// Whether it takes or gives values the IR does not model (sequences), so that the
    /// importer gives it a node reading one.
    pub values: bool,
    /// Its graph attributes, taken as closures (the call's last arguments, in this order).
    pub bodies: &'static [&'static str],
}

inventory::collect!(Native);

/// The attributes every native operator takes besides ONNX's.
pub(crate) const OWN_ATTRS: [AttrSpec; 4] = [
    AttrSpec {
        name: "absent",
        kind: AttrKind::Ints,
        default: AttrDefault::Ints(&[]),
    },
    AttrSpec {
        name: "outputs",
        kind: AttrKind::Int,
        default: AttrDefault::Int(1),
    },
    AttrSpec {
        name: "types",
        kind: AttrKind::Str,
        default: AttrDefault::Str(""),
    },
    AttrSpec {
        name: "version",
        kind: AttrKind::Int,
        default: AttrDefault::Int(0),
    },
];

/// A per-operator type relation: every output's type (the wrapper keeps those the node has).
pub(crate) type Rel = fn(&Args<'_, TensorType>, &AttrReader<'_>) -> Result<Vec<TensorType>, String>;

/// A per-operator kernel: every output's value.
pub(crate) type Kernel = fn(&Args<'_, Tensor>, &AttrReader<'_>) -> Result<Vec<Tensor>, String>;

/// The type relation of an operator on values the IR does not model: every output's type.
pub(crate) type ValueRel = fn(&Args<'_, Type>, &AttrReader<'_>) -> Result<Vec<Type>, String>;

/// The kernel of an operator on values the IR does not model (a sequence is a tuple of its
/// tensors): every output's value.
pub(crate) type ValueKernel = fn(&Args<'_, Value>, &AttrReader<'_>) -> Result<Vec<Value>, String>;

/// Defines a native operator: its IR operator (`onnx.<Name>`, or `onnx.<domain>.<Name>`
/// outside the default domain; described by the doc comment) and its entry for import and
/// export.
macro_rules! native {
    (
        $(#[doc = $doc:literal])*
        $name:literal {
            $(domain: $domain:literal,)?
            versions: $versions:expr,
            attrs: [$($attr:expr),* $(,)?],
            $(tensor_attrs: [$($tensor:literal),* $(,)?],)?
            pattern: $pattern:ident,
            rel: $rel:expr,
            kernel: $kernel:expr $(,)?
        }
    ) => {
        $crate::native::native!(@entry [$($doc),*] $name [$($domain)?], $versions, [$($attr),*],
            [$($($tensor),*)?], $pattern,
            |a, r| $crate::native::type_of(a, r, $rel),
            |a, r| $crate::native::run(a, r, $kernel),
            false, []);
    };
    (
        $(#[doc = $doc:literal])*
        $name:literal {
            $(domain: $domain:literal,)?
            versions: $versions:expr,
            attrs: [$($attr:expr),* $(,)?],
            $(tensor_attrs: [$($tensor:literal),* $(,)?],)?
            $(bodies: [$($body:literal),* $(,)?],)?
            value_rel: $rel:expr,
            value_kernel: $kernel:expr $(,)?
        }
    ) => {
        $crate::native::native!(@entry [$($doc),*] $name [$($domain)?], $versions, [$($attr),*],
            [$($($tensor),*)?], Opaque,
            |a, r| $crate::native::type_of_values(a, r, $rel),
            |a, r| $crate::native::run_values(a, r, $kernel),
            true, [$($($body),*)?]);
    };
    // The IR operator's name.
    (@ir_name $name:literal []) => { concat!("onnx.", $name) };
    (@ir_name $name:literal [$domain:literal]) => { concat!("onnx.", $domain, ".", $name) };
    // The IR operator and the import/export entry of either form.
    (@entry [$($doc:literal),*] $name:literal [$($domain:literal)?], $versions:expr,
        [$($attr:expr),*], [$($tensor:literal),*], $pattern:ident,
        $type_rel:expr, $kernel:expr, $values:literal, [$($body:literal),*]) => {
        inventory::submit! {
            irpass_ir::op::OpDef {
                name: $crate::native::native!(@ir_name $name [$($domain)?]),
                description: concat!($($doc),*),
                arity: irpass_ir::op::Arity::AtLeast(0),
                attrs: &[$($attr,)* $crate::native::OWN_ATTRS[0], $crate::native::OWN_ATTRS[1], $crate::native::OWN_ATTRS[2], $crate::native::OWN_ATTRS[3]],
                pattern: irpass_ir::op::OpPattern::$pattern,
                type_rel: $type_rel,
                kernel: $kernel,
            }
        }
        inventory::submit! {
            $crate::native::Native {
                onnx: $name,
                domain: concat!("" $(, $domain)?),
                versions: $versions,
                attrs: &[$($attr),*],
                tensor_attrs: &[$($tensor),*],
                values: $values,
                bodies: &[$($body),*],
            }
        }
    };
}
pub(crate) use native;

/// An attribute of a schema (for [`native!`] entries).
pub(crate) const fn attr(name: &'static str, kind: AttrKind, default: AttrDefault) -> AttrSpec {
    AttrSpec {
        name,
        kind,
        default,
    }
}

/// The native operator `onnx` of `domain` (`""` or `ai.onnx`: the default one), if there is
/// one.
pub(crate) fn get(domain: &str, onnx: &str) -> Option<&'static Native> {
    let domain = if domain == "ai.onnx" { "" } else { domain };
    inventory::iter::<Native>
        .into_iter()
        .find(|n| n.onnx == onnx && n.domain == domain)
}

/// The native operator whose IR operator is `ir_name`, if it is one.
pub(crate) fn of_ir(ir_name: &str) -> Option<&'static Native> {
    let rest = ir_name.strip_prefix(PREFIX)?;
    inventory::iter::<Native>
        .into_iter()
        .find(|n| match n.domain {
            "" => rest == n.onnx,
            d => rest
                .strip_prefix(d)
                .and_then(|r| r.strip_prefix('.'))
                .is_some_and(|op| op == n.onnx),
        })
}

/// A tensor attribute's text as the IR holds it (see [`Native::tensor_attrs`]): the base64 of
/// its `TensorProto`.
pub(crate) fn tensor_text(t: &crate::proto::TensorProto) -> String {
    use base64::Engine as _;
    use prost::Message as _;
    base64::engine::general_purpose::STANDARD.encode(t.encode_to_vec())
}

/// The `TensorProto` of a tensor attribute's text ([`tensor_text`]).
pub(crate) fn tensor_of_text(text: &str) -> Result<crate::proto::TensorProto, String> {
    use base64::Engine as _;
    use prost::Message as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.as_bytes())
        .map_err(|e| e.to_string())?;
    crate::proto::TensorProto::decode(bytes.as_slice()).map_err(|e| e.to_string())
}

/// Tensor attribute `name` of a call (see [`Native::tensor_attrs`]): its value, a tensor of
/// numbers or of strings, if it is set.
pub(crate) fn tensor_attr(r: &AttrReader<'_>, name: &str) -> Result<Option<Value>, String> {
    let text = r.str(name);
    if text.is_empty() {
        return Ok(None);
    }
    let bad = |e: String| format!("`{}`: attribute `{name}`: {e}", r.op_name());
    let proto = tensor_of_text(&text).map_err(bad)?;
    if proto.data_type == Some(crate::proto::tensor_proto::DataType::String as i32) {
        let s = crate::strings::Strings::of_proto(&proto).map_err(|e| bad(e.to_string()))?;
        return Ok(Some(Value::opaque(s)));
    }
    let t = crate::tensor::tensor_of(&proto, crate::tensor::DataDir(None))
        .map_err(|e| bad(e.to_string()))?;
    Ok(Some(Value::tensor(t)))
}

impl Native {
    /// The IR operator's name.
    pub(crate) fn ir_name(&self) -> String {
        match self.domain {
            "" => format!("{PREFIX}{}", self.onnx),
            d => format!("{PREFIX}{d}.{}", self.onnx),
        }
    }

    /// The version a call of the operator records (its `version` attribute) at `opset` (of
    /// its domain): the implemented version read there, where the entry implements several
    /// or is of another domain than the default one (whose opset the writer takes from its
    /// calls); 0 otherwise.
    pub(crate) fn recorded_version(&self, opset: i64) -> i64 {
        match (self.domain, self.versions) {
            ("", [_]) => 0,
            _ => self.version_read(opset).unwrap_or(0),
        }
    }

    /// Whether the version of the operator that `opset` (of its domain) uses is one this
    /// implements.
    pub(crate) fn implements(&self, opset: i64) -> bool {
        self.version_read(opset).is_some()
    }

    /// The implemented version that `opset`'s version of the operator reads as.
    pub(crate) fn version_read(&self, opset: i64) -> Option<i64> {
        if !self.domain.is_empty() {
            return self.versions.iter().rev().find(|&&v| v <= opset).copied();
        }
        let v = crate::opset::version_at(self.onnx, opset)?;
        let all = crate::versions::VERSIONS
            .iter()
            .find(|(n, _)| *n == self.onnx)?
            .1;
        // Step back over the versions that changed only types.
        let mut at = v;
        loop {
            if self.versions.contains(&at) {
                return Some(at);
            }
            let i = all.iter().position(|(w, _)| *w == at)?;
            if !all[i].1 || i == 0 {
                return None;
            }
            at = all[i - 1].0;
        }
    }
}

/// The wrapper of every native type relation: the arguments' tensor types in their input
/// positions, the relation's output types merged with the declared ones (`types`), and the
/// outputs the node has (a tuple for several).
pub(crate) fn type_of(args: &[Type], r: &AttrReader<'_>, rel: Rel) -> Result<Type, String> {
    let op = r.op_name();
    let tensors = args
        .iter()
        .map(|t| match t {
            Type::Tensor(t) => Ok(&**t),
            other => Err(format!("`{op}` takes tensors, got {other}")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let declared = declared(r)?;
    let a = Args::new(op, &tensors, r, &declared);
    let mut outs = rel(&a, r)?;
    for (k, t) in outs.iter_mut().enumerate() {
        if let Some(Some(Type::Tensor(d))) = declared.get(k) {
            *t = meet(op, k, t, d)?;
        }
    }
    let outs = outs.into_iter().map(Type::from).collect();
    Ok(one_or_tuple(op, outs, outputs(r))?.unwrap_or_else(Type::Tuple))
}

/// The wrapper of every native kernel.
pub(crate) fn run(args: &[Value], r: &AttrReader<'_>, kernel: Kernel) -> Result<Value, String> {
    let op = r.op_name();
    let tensors = args
        .iter()
        .map(|v| match v {
            Value::Tensor(t) => Ok(&**t),
            _ => Err(format!("`{op}` takes tensors")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let a = Args::new(op, &tensors, r, &[]);
    let outs = kernel(&a, r)?.into_iter().map(Value::tensor).collect();
    Ok(one_or_tuple(op, outs, outputs(r))?.unwrap_or_else(Value::Tuple))
}

/// The wrapper of every type relation on values the IR does not model: a tensor output's type
/// merged with the declared one as [`type_of`] does, an opaque one's the declared one where
/// there is one.
pub(crate) fn type_of_values(
    args: &[Type],
    r: &AttrReader<'_>,
    rel: ValueRel,
) -> Result<Type, String> {
    let op = r.op_name();
    let declared = declared(r)?;
    let given: Vec<&Type> = args.iter().collect();
    let a = Args::new(op, &given, r, &declared);
    let mut outs = rel(&a, r)?;
    for (k, t) in outs.iter_mut().enumerate() {
        match (&*t, declared.get(k)) {
            (Type::Tensor(c), Some(Some(Type::Tensor(d)))) => *t = meet(op, k, c, d)?.into(),
            (Type::Opaque(_), Some(Some(d @ Type::Opaque(_)))) => *t = d.clone(),
            _ => {}
        }
    }
    Ok(one_or_tuple(op, outs, outputs(r))?.unwrap_or_else(Type::Tuple))
}

/// The wrapper of every kernel on values the IR does not model.
pub(crate) fn run_values(
    args: &[Value],
    r: &AttrReader<'_>,
    kernel: ValueKernel,
) -> Result<Value, String> {
    let op = r.op_name();
    let given: Vec<&Value> = args.iter().collect();
    let a = Args::new(op, &given, r, &[]);
    let outs = kernel(&a, r)?;
    Ok(one_or_tuple(op, outs, outputs(r))?.unwrap_or_else(Value::Tuple))
}

/// The first `n` of `outs` (the outputs the node has): the one, or several.
fn one_or_tuple<T>(op: &str, mut outs: Vec<T>, n: usize) -> Result<Result<T, Vec<T>>, String> {
    if outs.len() < n {
        return Err(format!("`{op}` has {} outputs, the node {n}", outs.len()));
    }
    outs.truncate(n);
    Ok(match <[T; 1]>::try_from(outs) {
        Ok([one]) => Ok(one),
        Err(many) => Err(many),
    })
}

/// How many outputs a call's node has (its `outputs` attribute, at least 1).
pub(super) fn outputs(r: &AttrReader<'_>) -> usize {
    usize::try_from(r.int("outputs")).unwrap_or(1).max(1)
}

fn declared(r: &AttrReader<'_>) -> Result<Vec<Option<Type>>, String> {
    let text = r.str("types");
    if text.is_empty() {
        return Ok(Vec::new());
    }
    crate::opaque::decode_types(&text).map_err(|e| format!("`{}`: types: {e}", r.op_name()))
}

/// `computed` with the sizes it leaves unknown taken from `declared`; an error where the two
/// disagree.
fn meet(
    op: &str,
    k: usize,
    computed: &TensorType,
    declared: &TensorType,
) -> Result<TensorType, String> {
    let disagree =
        || format!("`{op}`: output {k} is {computed} by its inputs, the model declares {declared}");
    if computed.dtype != declared.dtype || computed.rank() != declared.rank() {
        return Err(disagree());
    }
    let shape = computed
        .shape
        .iter()
        .zip(&declared.shape)
        .map(|(&c, &d)| match (c, d) {
            (Dim::Static(a), Dim::Static(b)) if a != b => Err(disagree()),
            (Dim::Static(_), _) => Ok(c),
            (_, Dim::Static(_)) => Ok(d),
            (Dim::Any, _) => Ok(d),
            _ => Ok(c),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(TensorType {
        shape,
        dtype: computed.dtype,
    })
}
