//! The operator registry: every operator's name, attribute schema, type relation and reference
//! kernel, registered through `inventory` (so another crate can add operators).

mod elemwise;
mod indexing;
mod like;
mod nn;
mod reduce;
mod slice;
mod transform;
mod util;

use std::fmt;
use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use super::{AttrValue, Attrs, Type, Value};
use irpass::suggest::{closest, did_you_mean};

pub use slice::{SliceRange, slice_range};
pub use transform::permutation_of;
pub use util::{axis, broadcast_concrete, broadcast_shapes, checked_size};

/// How an operator's output relates to its inputs, for fusion (TVM's `OpPatternKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OpPattern {
    /// Elementwise on same-shaped inputs.
    ElemWise = 0,
    /// Elementwise with broadcasting.
    Broadcast = 1,
    /// Each output element depends on one input element, at a computed index (reshape, ...).
    Injective = 2,
    /// A reduction.
    CommReduce = 3,
    /// Complex, but elementwise ops may be fused onto its output (conv2d, dense).
    OutEWiseFusable = 4,
    /// Not fusable.
    Opaque = 8,
}

/// The type of an attribute in a schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrKind {
    /// An integer.
    Int,
    /// A float.
    Float,
    /// A boolean.
    Bool,
    /// A string.
    Str,
    /// A list of integers (a single integer is accepted as a list of one).
    Ints,
    /// A list of integers, or `None`.
    OptInts,
    /// A list of numbers (integers convert).
    Floats,
    /// A list of strings.
    Strs,
    /// An integer or `None`.
    OptInt,
    /// A dtype name, or `""` for "same as input".
    DType,
    /// An integer or a list of integers, kept as given (`split`'s `indices_or_sections`).
    IntOrInts,
}

/// A default value in a schema (`Required`: the attribute must be given).
#[derive(Clone, Copy, Debug)]
pub enum AttrDefault {
    /// Must be given.
    Required,
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A string.
    Str(&'static str),
    /// A list of integers.
    Ints(&'static [i64]),
    /// A list of floats.
    Floats(&'static [f64]),
    /// A list of strings.
    Strs(&'static [&'static str]),
    /// `None`.
    Null,
}

impl AttrDefault {
    fn value(self) -> Option<AttrValue> {
        Some(match self {
            AttrDefault::Required => return None,
            AttrDefault::Int(v) => AttrValue::Int(v),
            AttrDefault::Float(v) => AttrValue::Float(v),
            AttrDefault::Bool(v) => AttrValue::Bool(v),
            AttrDefault::Str(s) => AttrValue::Str(s.to_string()),
            AttrDefault::Ints(v) => AttrValue::List(v.iter().map(|&i| AttrValue::Int(i)).collect()),
            AttrDefault::Floats(v) => {
                AttrValue::List(v.iter().map(|&f| AttrValue::Float(f)).collect())
            }
            AttrDefault::Strs(v) => {
                AttrValue::List(v.iter().map(|s| AttrValue::Str(s.to_string())).collect())
            }
            AttrDefault::Null => AttrValue::Null,
        })
    }
}

/// One attribute of an operator's schema.
#[derive(Clone, Copy, Debug)]
pub struct AttrSpec {
    /// Its name.
    pub name: &'static str,
    /// Its type.
    pub kind: AttrKind,
    /// Its default.
    pub default: AttrDefault,
}

/// How many arguments an operator takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    /// Exactly this many.
    Exact(usize),
    /// At least this many.
    AtLeast(usize),
}

impl std::fmt::Display for Arity {
    /// `2 args`, `1+ args`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Arity::Exact(1) => f.write_str("1 arg"),
            Arity::Exact(n) => write!(f, "{n} args"),
            Arity::AtLeast(n) => write!(f, "{n}+ args"),
        }
    }
}

/// The type relation: argument types (complete) and attributes to the result type.
pub type TypeRelation = fn(&[Type], &AttrReader<'_>) -> Result<Type, String>;

/// The reference kernel: argument values and attributes to the result.
pub type Kernel = fn(&[Value], &AttrReader<'_>) -> Result<Value, String>;

/// A registered operator.
#[derive(Debug)]
pub struct OpDef {
    /// Its name (`nn.conv2d`).
    pub name: &'static str,
    /// What it computes.
    pub description: &'static str,
    /// How many arguments.
    pub arity: Arity,
    /// Its attributes, in printing order.
    pub attrs: &'static [AttrSpec],
    /// Its fusion pattern.
    pub pattern: OpPattern,
    /// Its type relation.
    pub type_rel: TypeRelation,
    /// Its reference kernel.
    pub kernel: Kernel,
}

inventory::collect!(OpDef);

/// Marks the operator it names stateful, as TVM's `TOpIsStateful` does: its value is not a
/// function of its operands (a random draw), so no pass evaluates a call of it ahead of run
/// time (`FoldConstant`) or merges two calls of it (`EliminateCommonSubexpr`). The crate that
/// defines the operator submits it beside the operator's [`OpDef`].
///
/// ```
/// use irpass_ir::Op;
/// // (The reference IR marks `nn.dropout`: `inventory::submit! { Stateful("nn.dropout") }`.)
/// assert!(Op::get("nn.dropout").unwrap().is_stateful());
/// assert!(!Op::get("add").unwrap().is_stateful());
/// ```
pub struct Stateful(pub &'static str);

inventory::collect!(Stateful);

inventory::submit! { Stateful("nn.dropout") }

/// A registered operator, as used in calls (a `Copy` handle).
#[derive(Clone, Copy)]
pub struct Op(&'static OpDef);

fn table() -> &'static FxHashMap<&'static str, &'static OpDef> {
    static TABLE: OnceLock<FxHashMap<&'static str, &'static OpDef>> = OnceLock::new();
    TABLE.get_or_init(|| {
        inventory::iter::<OpDef>
            .into_iter()
            .map(|def| (def.name, def))
            .collect()
    })
}

impl Op {
    /// The operator named `name`.
    ///
    /// # Errors
    /// When no operator has that name (with the closest names).
    pub fn get(name: &str) -> Result<Op, String> {
        table().get(name).map(|d| Op(d)).ok_or_else(|| {
            let names: Vec<&str> = table().keys().copied().collect();
            let near = closest(name, names.iter().copied());
            format!("unknown operator `{name}`{}", did_you_mean(&near))
        })
    }

    /// Every registered operator, sorted by name.
    pub fn all() -> Vec<Op> {
        let mut ops: Vec<Op> = table().values().map(|d| Op(d)).collect();
        ops.sort_by_key(|o| o.0.name);
        ops
    }

    /// Its definition.
    pub fn def(self) -> &'static OpDef {
        self.0
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// Whether it is marked [`Stateful`].
    pub fn is_stateful(self) -> bool {
        static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
        NAMES
            .get_or_init(|| {
                inventory::iter::<Stateful>
                    .into_iter()
                    .map(|s| s.0)
                    .collect()
            })
            .contains(&self.0.name)
    }

    /// Checks and normalises call attributes against the schema: converts values to their
    /// kinds, drops those equal to the default, orders them as the schema does.
    ///
    /// # Errors
    /// An unknown attribute, a value of the wrong kind, or a missing required attribute.
    pub fn normalize_attrs(self, given: Attrs) -> Result<Attrs, String> {
        let def = self.0;
        for (name, _) in given.iter() {
            if !def.attrs.iter().any(|s| s.name == name) {
                return Err(unknown_attr(def, name));
            }
        }
        let mut out = Attrs::new();
        for spec in def.attrs {
            match given.get(spec.name) {
                Some(v) => {
                    let v = convert(def.name, spec, v)?;
                    if spec.default.value().as_ref() != Some(&v) {
                        out.set(spec.name, v);
                    }
                }
                None if matches!(spec.default, AttrDefault::Required) => {
                    return Err(format!(
                        "`{}` needs the attribute `{}`",
                        def.name, spec.name
                    ));
                }
                None => {}
            }
        }
        Ok(out)
    }

    /// The value of attribute `name` in a call's (normalised) `attrs`: the one given, else the
    /// schema's default; `None` for an attribute the operator does not have or a required one
    /// not given.
    pub fn attr_value(self, attrs: &Attrs, name: &str) -> Option<AttrValue> {
        if let Some(v) = attrs.get(name) {
            return Some(v.clone());
        }
        let spec = self.0.attrs.iter().find(|s| s.name == name)?;
        spec.default.value()
    }

    /// `value` converted to the kind of attribute `name` (an integer where a float is
    /// expected, ...), as a call's attributes are.
    ///
    /// # Errors
    /// An attribute the operator does not have, or a value of the wrong kind.
    pub fn convert_attr(self, name: &str, value: &AttrValue) -> Result<AttrValue, String> {
        let def = self.0;
        let Some(spec) = def.attrs.iter().find(|s| s.name == name) else {
            return Err(unknown_attr(def, name));
        };
        convert(def.name, spec, value)
    }

    /// Checks the number of arguments.
    ///
    /// # Errors
    /// When it does not fit the operator's arity.
    pub fn check_arity(self, n: usize) -> Result<(), String> {
        match self.0.arity {
            Arity::Exact(k) if k != n => Err(format!(
                "`{}` takes {k} argument{}, {n} given",
                self.0.name,
                if k == 1 { "" } else { "s" }
            )),
            Arity::AtLeast(k) if n < k => Err(format!(
                "`{}` takes at least {k} arguments, {n} given",
                self.0.name
            )),
            _ => Ok(()),
        }
    }

    /// Infers the result type from complete argument types.
    ///
    /// # Errors
    /// The relation's message.
    pub fn infer(self, args: &[Type], attrs: &Attrs) -> Result<Type, String> {
        self.check_arity(args.len())?;
        (self.0.type_rel)(args, &AttrReader { op: self.0, attrs })
    }

    /// Runs the reference kernel.
    ///
    /// # Errors
    /// The kernel's message.
    pub fn eval(self, args: &[Value], attrs: &Attrs) -> Result<Value, String> {
        self.check_arity(args.len())?;
        (self.0.kernel)(args, &AttrReader { op: self.0, attrs })
    }
}

impl PartialEq for Op {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0) || self.0.name == other.0.name
    }
}

impl Eq for Op {}

impl fmt::Debug for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

/// The error for attribute `name`, which operator `def` does not have.
fn unknown_attr(def: &OpDef, name: &str) -> String {
    let names: Vec<&str> = def.attrs.iter().map(|s| s.name).collect();
    if names.is_empty() {
        format!("`{}` takes no attributes, `{name}` given", def.name)
    } else {
        format!(
            "`{}` has no attribute `{name}`; its attributes are {}",
            def.name,
            names.join(", ")
        )
    }
}

fn convert(op: &str, spec: &AttrSpec, v: &AttrValue) -> Result<AttrValue, String> {
    let bad = |what: &str| {
        Err(format!(
            "attribute `{}` of `{op}` takes {what}, `{v}` given",
            spec.name
        ))
    };
    match spec.kind {
        AttrKind::Int => match v {
            AttrValue::Int(_) => Ok(v.clone()),
            _ => bad("an integer"),
        },
        AttrKind::OptInt => match v {
            AttrValue::Int(_) | AttrValue::Null => Ok(v.clone()),
            _ => bad("an integer or None"),
        },
        AttrKind::Float => match v.as_float() {
            Some(f) => Ok(AttrValue::Float(f)),
            None => bad("a number"),
        },
        AttrKind::Bool => match v.as_bool() {
            Some(b) => Ok(AttrValue::Bool(b)),
            None => bad("True or False"),
        },
        AttrKind::Str => match v {
            AttrValue::Str(_) => Ok(v.clone()),
            _ => bad("a string"),
        },
        AttrKind::DType => match v {
            AttrValue::Str(s) if s.is_empty() || s.parse::<super::DType>().is_ok() => Ok(v.clone()),
            AttrValue::Str(s) => Err(format!(
                "attribute `{}` of `{op}`: {}",
                spec.name,
                s.parse::<super::DType>().err().unwrap_or_default()
            )),
            _ => bad("a dtype name as a string"),
        },
        AttrKind::Ints => match v.as_int_list() {
            Some(list) => Ok(AttrValue::List(
                list.into_iter().map(AttrValue::Int).collect(),
            )),
            None => bad("a list of integers"),
        },
        AttrKind::IntOrInts => match v {
            AttrValue::Int(_) => Ok(v.clone()),
            _ => match v.as_int_list() {
                Some(list) => Ok(AttrValue::List(
                    list.into_iter().map(AttrValue::Int).collect(),
                )),
                None => bad("an integer or a list of integers"),
            },
        },
        AttrKind::Floats => match v.as_float_list() {
            Some(list) => Ok(AttrValue::List(
                list.into_iter().map(AttrValue::Float).collect(),
            )),
            None => bad("a list of numbers"),
        },
        AttrKind::Strs => match v {
            AttrValue::List(items) if items.iter().all(|i| i.as_str().is_some()) => Ok(v.clone()),
            _ => bad("a list of strings"),
        },
        AttrKind::OptInts => match v {
            AttrValue::Null => Ok(AttrValue::Null),
            _ => match v.as_int_list() {
                Some(list) => Ok(AttrValue::List(
                    list.into_iter().map(AttrValue::Int).collect(),
                )),
                None => bad("a list of integers or None"),
            },
        },
    }
}

/// Reads a call's attributes, falling back to the schema's defaults.
pub struct AttrReader<'a> {
    op: &'static OpDef,
    attrs: &'a Attrs,
}

impl AttrReader<'_> {
    fn value(&self, name: &str) -> AttrValue {
        if let Some(v) = self.attrs.get(name) {
            return v.clone();
        }
        self.op
            .attrs
            .iter()
            .find(|s| s.name == name)
            .and_then(|s| s.default.value())
            .unwrap_or(AttrValue::Null)
    }

    /// The operator's name.
    pub fn op_name(&self) -> &'static str {
        self.op.name
    }

    /// An integer attribute.
    pub fn int(&self, name: &str) -> i64 {
        self.value(name).as_int().unwrap_or(0)
    }

    /// An integer-or-None attribute.
    pub fn opt_int(&self, name: &str) -> Option<i64> {
        self.value(name).as_int()
    }

    /// A float attribute.
    pub fn float(&self, name: &str) -> f64 {
        self.value(name).as_float().unwrap_or(0.0)
    }

    /// A boolean attribute.
    pub fn bool(&self, name: &str) -> bool {
        self.value(name).as_bool().unwrap_or(false)
    }

    /// A string attribute.
    pub fn str(&self, name: &str) -> String {
        self.value(name).as_str().unwrap_or_default().to_string()
    }

    /// A list-of-integers attribute.
    pub fn ints(&self, name: &str) -> Vec<i64> {
        self.value(name).as_int_list().unwrap_or_default()
    }

    /// A list-of-floats attribute.
    pub fn floats(&self, name: &str) -> Vec<f64> {
        self.value(name).as_float_list().unwrap_or_default()
    }

    /// A list-of-strings attribute.
    pub fn strs(&self, name: &str) -> Vec<String> {
        match self.value(name) {
            AttrValue::List(items) => items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// A shape attribute: a list of sizes, each at least 0 (a negative size is an error that
    /// names the operator, the attribute and the size, for the type relation and the kernel
    /// alike).
    pub fn shape(&self, name: &str) -> Result<Vec<usize>, String> {
        self.ints(name)
            .into_iter()
            .map(|d| {
                usize::try_from(d).map_err(|_| {
                    format!(
                        "`{}`: negative dimension {d} in `{name}` (sizes are 0 or more)",
                        self.op_name()
                    )
                })
            })
            .collect()
    }

    /// A list-of-integers-or-None attribute.
    pub fn opt_ints(&self, name: &str) -> Option<Vec<i64>> {
        match self.value(name) {
            AttrValue::Null => None,
            v => v.as_int_list(),
        }
    }

    /// The raw value of an attribute (after defaults).
    pub fn raw(&self, name: &str) -> AttrValue {
        self.value(name)
    }

    /// A dtype attribute (`None` for `""`: same as input).
    pub fn dtype(&self, name: &str) -> Option<super::DType> {
        self.value(name).as_str().and_then(|s| s.parse().ok())
    }
}
