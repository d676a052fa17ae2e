//! Element types of tensors.

use std::fmt;
use std::str::FromStr;

/// The element type of a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// 16-bit float (values kept rounded to half precision).
    Float16,
    /// bfloat16: a float32's exponent with 8 bits of precision (values kept rounded to it).
    BFloat16,
    /// 32-bit float.
    Float32,
    /// 64-bit float.
    Float64,
    /// 8-bit signed integer.
    Int8,
    /// 16-bit signed integer.
    Int16,
    /// 32-bit signed integer.
    Int32,
    /// 64-bit signed integer.
    Int64,
    /// 8-bit unsigned integer.
    UInt8,
    /// 16-bit unsigned integer.
    UInt16,
    /// 32-bit unsigned integer.
    UInt32,
    /// 64-bit unsigned integer: values below 2^63 (held as a 64-bit signed integer, whose
    /// wrapping addition, subtraction and multiplication are the unsigned ones bit for bit).
    UInt64,
    /// Boolean.
    Bool,
}

impl DType {
    /// Every dtype, in the order of the text format's documentation.
    pub const ALL: [DType; 13] = [
        DType::Float16,
        DType::BFloat16,
        DType::Float32,
        DType::Float64,
        DType::Int8,
        DType::Int16,
        DType::Int32,
        DType::Int64,
        DType::UInt8,
        DType::UInt16,
        DType::UInt32,
        DType::UInt64,
        DType::Bool,
    ];

    /// The name in the text format (`float32`).
    pub fn name(self) -> &'static str {
        match self {
            DType::Float16 => "float16",
            DType::BFloat16 => "bfloat16",
            DType::Float32 => "float32",
            DType::Float64 => "float64",
            DType::Int8 => "int8",
            DType::Int16 => "int16",
            DType::Int32 => "int32",
            DType::Int64 => "int64",
            DType::UInt8 => "uint8",
            DType::UInt16 => "uint16",
            DType::UInt32 => "uint32",
            DType::UInt64 => "uint64",
            DType::Bool => "bool",
        }
    }

    /// Whether it is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            DType::Float16 | DType::BFloat16 | DType::Float32 | DType::Float64
        )
    }

    /// Whether it is an integer type (not bool).
    pub fn is_int(self) -> bool {
        matches!(
            self,
            DType::Int8
                | DType::Int16
                | DType::Int32
                | DType::Int64
                | DType::UInt8
                | DType::UInt16
                | DType::UInt32
                | DType::UInt64
        )
    }

    /// The smallest and largest value of an integer type (`None` for the others; 64-bit
    /// bounds as the nearest floats).
    pub fn int_range(self) -> Option<(f64, f64)> {
        Some(match self {
            DType::Int8 => (-128.0, 127.0),
            DType::UInt8 => (0.0, 255.0),
            DType::UInt16 => (0.0, 65535.0),
            DType::UInt32 => (0.0, 4_294_967_295.0),
            DType::UInt64 => (0.0, 9.223_372_036_854_776e18),
            DType::Int16 => (-32768.0, 32767.0),
            DType::Int32 => (-2_147_483_648.0, 2_147_483_647.0),
            DType::Int64 => (-9.223_372_036_854_776e18, 9.223_372_036_854_776e18),
            _ => return None,
        })
    }

    /// Whether a cast to `to` keeps every value: a type of the same kind at least as wide
    /// (TVM's `IsWidenCast`).
    pub fn widens_to(self, to: DType) -> bool {
        let kind = |d: DType| match d {
            DType::Float16 | DType::Float32 | DType::Float64 => 0,
            // bfloat16 has float16's width and more range: neither widens to the other.
            DType::BFloat16 => 4,
            DType::Int8 | DType::Int16 | DType::Int32 | DType::Int64 => 1,
            DType::UInt8 | DType::UInt16 | DType::UInt32 | DType::UInt64 => 2,
            DType::Bool => 3,
        };
        kind(self) == kind(to) && self.bytes() <= to.bytes()
    }

    /// Bytes per element.
    pub fn bytes(self) -> usize {
        match self {
            DType::Bool | DType::Int8 | DType::UInt8 => 1,
            DType::Float16 | DType::BFloat16 | DType::Int16 | DType::UInt16 => 2,
            DType::Float32 | DType::Int32 | DType::UInt32 => 4,
            DType::Float64 | DType::Int64 | DType::UInt64 => 8,
        }
    }

    /// Rounds a float to this (float) dtype's precision.
    pub fn round_float(self, v: f64) -> f64 {
        match self {
            DType::Float16 => f64::from(half::f16::from_f64(v)),
            DType::BFloat16 => f64::from(half::bf16::from_f64(v)),
            DType::Float32 => f64::from(v as f32),
            _ => v,
        }
    }

    /// Wraps an integer to this (integer) dtype's width.
    pub fn wrap_int(self, v: i64) -> i64 {
        match self {
            DType::Int8 => i64::from(v as i8),
            DType::Int16 => i64::from(v as i16),
            DType::Int32 => i64::from(v as i32),
            DType::UInt8 => i64::from(v as u8),
            DType::UInt16 => i64::from(v as u16),
            DType::UInt32 => i64::from(v as u32),
            DType::Bool => i64::from(v != 0),
            _ => v,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl DType {
    /// The dtype named `name` (`float32`, `int64`, ...), if any: [`str::parse`] without an
    /// error message, for asking whether a word is a dtype at all.
    ///
    /// ```
    /// use irpass_ir::DType;
    /// assert_eq!(DType::from_name("float32"), Some(DType::Float32));
    /// assert_eq!(DType::from_name("add"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }
}

impl FromStr for DType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        DType::from_name(s).ok_or_else(|| {
            let names: Vec<&str> = DType::ALL.iter().map(|d| d.name()).collect();
            format!("unknown dtype `{s}` (the dtypes are {})", names.join(", "))
        })
    }
}
