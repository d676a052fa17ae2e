//! Types: tensors (shape and dtype), tuples, functions, and the unknown type `_`.

use std::fmt;
use std::sync::Arc;

use super::DType;

/// The name of a symbolic dimension (`batch`, `seq`): interned, so it is `Copy` and compares
/// cheaply. Names live for the rest of the process; a program has a handful of them.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Symbol(&'static str);

impl Symbol {
    /// The symbol named `name` (the same value each time for the same name).
    ///
    /// ```
    /// use irpass_ir::Symbol;
    /// assert_eq!(Symbol::new("batch"), Symbol::new("batch"));
    /// assert_eq!(Symbol::new("batch").as_str(), "batch");
    /// ```
    pub fn new(name: &str) -> Symbol {
        use std::collections::HashSet;
        use std::sync::{Mutex, OnceLock};
        static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
        let mut names = NAMES
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(&known) = names.get(name) {
            return Symbol(known);
        }
        let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
        names.insert(leaked);
        Symbol(leaked)
    }

    /// The name.
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl fmt::Debug for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

/// As the text format writes a dimension's name: bare when it is a word (`batch`,
/// `seq_len`), else as a string literal (`"2*seq"`).
impl fmt::Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0.as_bytes();
        let word = match b.first() {
            Some(c) if c.is_ascii_alphabetic() => true,
            Some(b'_') => b.len() > 1,
            _ => false,
        } && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_');
        if word {
            f.write_str(self.0)
        } else {
            f.write_str(&crate::literal::quote(self.0))
        }
    }
}

/// One dimension of a tensor shape: a static size, a size known by name only (`batch`: the
/// same size wherever the name appears in one program, fixed when it runs), or `?` (known
/// only at run time).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    /// A size known statically.
    Static(i64),
    /// A symbolic size: every dimension with this name has the same size at run time.
    Named(Symbol),
    /// `?`: any size.
    Any,
}

impl Dim {
    /// The static size, if known.
    pub fn value(self) -> Option<i64> {
        match self {
            Dim::Static(v) => Some(v),
            Dim::Named(_) | Dim::Any => None,
        }
    }

    /// A symbolic dimension named `name`.
    pub fn named(name: &str) -> Dim {
        Dim::Named(Symbol::new(name))
    }

    /// The name, if the dimension is symbolic.
    pub fn symbol(self) -> Option<Symbol> {
        match self {
            Dim::Named(s) => Some(s),
            _ => None,
        }
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Static(v) => write!(f, "{v}"),
            Dim::Named(s) => write!(f, "{s}"),
            Dim::Any => f.write_str("?"),
        }
    }
}

/// A tensor type: shape and dtype. A scalar has the empty shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorType {
    /// The dimensions.
    pub shape: Vec<Dim>,
    /// The element type.
    pub dtype: DType,
}

impl TensorType {
    /// A tensor type with static dimensions.
    pub fn new(shape: &[i64], dtype: DType) -> Self {
        TensorType {
            shape: shape.iter().map(|&d| Dim::Static(d)).collect(),
            dtype,
        }
    }

    /// A scalar (rank 0).
    pub fn scalar(dtype: DType) -> Self {
        TensorType {
            shape: Vec::new(),
            dtype,
        }
    }

    /// The rank.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The shape as sizes, if every dimension is static.
    pub fn static_shape(&self) -> Option<Vec<usize>> {
        self.shape
            .iter()
            .map(|d| d.value().and_then(|v| usize::try_from(v).ok()))
            .collect()
    }

    /// The number of elements, if static (and countable in a `usize`).
    pub fn num_elements(&self) -> Option<usize> {
        self.static_shape()?
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
    }
}

impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.shape.is_empty() {
            return write!(f, "{}", self.dtype);
        }
        f.write_str("Tensor[(")?;
        for (i, d) in self.shape.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{d}")?;
        }
        write!(f, "), {}]", self.dtype)
    }
}

/// A function type: parameter types and result type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FuncType {
    /// The parameters' types.
    pub params: Vec<Type>,
    /// The result type.
    pub ret: Type,
}

/// A type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// A tensor (a scalar is a rank-0 tensor). Shared: every node of a program records its
    /// type, and most nodes have the type of their operands, so cloning a type is a count
    /// increment. Build one with [`Type::tensor`], [`Type::scalar`] or `Type::from(tensor_type)`.
    Tensor(Arc<TensorType>),
    /// A tuple.
    Tuple(Vec<Type>),
    /// A function.
    Func(Box<FuncType>),
    /// `Opaque["seq(tensor(float))"]`: a value of a kind the IR does not model — an ONNX
    /// sequence, optional or map, a tensor of strings — named by its type in the format it
    /// came from. Only operators made for such values make or take one (at run time a
    /// [`crate::Value::Opaque`] or a tuple, as they define); two opaque types are the same
    /// type when their names are.
    Opaque(Symbol),
    /// `_`: not known yet (to be inferred).
    Unknown,
}

impl Type {
    /// A tensor type with static dimensions.
    pub fn tensor(shape: &[i64], dtype: DType) -> Type {
        Type::from(TensorType::new(shape, dtype))
    }

    /// A tensor type of the dimensions `shape` (static, named or `?`).
    ///
    /// ```
    /// use irpass_ir::{DType, Dim, Type};
    /// let t = Type::with_dims(vec![Dim::named("batch"), Dim::Static(3)], DType::Float32);
    /// assert_eq!(t.to_string(), "Tensor[(batch, 3), float32]");
    /// ```
    pub fn with_dims(shape: Vec<Dim>, dtype: DType) -> Type {
        Type::from(TensorType { shape, dtype })
    }

    /// A scalar type.
    pub fn scalar(dtype: DType) -> Type {
        Type::from(TensorType::scalar(dtype))
    }

    /// A function type.
    pub fn func(params: Vec<Type>, ret: Type) -> Type {
        Type::Func(Box::new(FuncType { params, ret }))
    }

    /// The tensor type, if this is one.
    pub fn as_tensor(&self) -> Option<&TensorType> {
        match self {
            Type::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// Whether the type contains no `_`.
    pub fn is_complete(&self) -> bool {
        match self {
            Type::Tensor(_) | Type::Opaque(_) => true,
            Type::Tuple(fields) => fields.iter().all(Type::is_complete),
            Type::Func(f) => f.params.iter().all(Type::is_complete) && f.ret.is_complete(),
            Type::Unknown => false,
        }
    }
}

impl From<TensorType> for Type {
    fn from(t: TensorType) -> Type {
        Type::Tensor(Arc::new(t))
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Tensor(t) => write!(f, "{t}"),
            Type::Tuple(fields) => {
                f.write_str("(")?;
                for (i, t) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                if fields.len() == 1 {
                    f.write_str(",")?;
                }
                f.write_str(")")
            }
            Type::Func(func) => {
                f.write_str("fn (")?;
                for (i, t) in func.params.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                write!(f, ") -> {}", func.ret)
            }
            Type::Opaque(name) => write!(f, "Opaque[{}]", crate::literal::quote(name.as_str())),
            Type::Unknown => f.write_str("_"),
        }
    }
}
