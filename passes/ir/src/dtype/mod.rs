//! Element types of tensors.

use std::fmt;
use std::str::FromStr;

mod minifloat;

use minifloat::{E2M1, E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, MiniFloat, e8m0};

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
    /// 8-bit float, 4 exponent bits, 3 mantissa bits, no infinity (OCP's E4M3).
    Float8E4M3FN,
    /// 8-bit float, 4 exponent bits, 3 mantissa bits, no infinity and no negative zero.
    Float8E4M3FNUZ,
    /// 8-bit float, 5 exponent bits, 2 mantissa bits (OCP's E5M2, with infinities).
    Float8E5M2,
    /// 8-bit float, 5 exponent bits, 2 mantissa bits, no infinity and no negative zero.
    Float8E5M2FNUZ,
    /// 8-bit scale: a power of two from 2^-127 to 2^127 (OCP's E8M0; no sign, no zero).
    Float8E8M0,
    /// 4-bit float, 2 exponent bits, 1 mantissa bit: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their
    /// negatives (OCP's E2M1).
    Float4E2M1,
    /// 8-bit signed integer.
    Int8,
    /// 16-bit signed integer.
    Int16,
    /// 32-bit signed integer.
    Int32,
    /// 64-bit signed integer.
    Int64,
    /// 4-bit signed integer (-8 to 7).
    Int4,
    /// 2-bit signed integer (-2 to 1).
    Int2,
    /// 8-bit unsigned integer.
    UInt8,
    /// 16-bit unsigned integer.
    UInt16,
    /// 32-bit unsigned integer.
    UInt32,
    /// 64-bit unsigned integer: values below 2^63 (held as a 64-bit signed integer, whose
    /// wrapping addition, subtraction and multiplication are the unsigned ones bit for bit).
    UInt64,
    /// 4-bit unsigned integer (0 to 15).
    UInt4,
    /// 2-bit unsigned integer (0 to 3).
    UInt2,
    /// Boolean.
    Bool,
}

impl DType {
    /// Every dtype, in the order of the text format's documentation.
    pub const ALL: [DType; 23] = [
        DType::Float16,
        DType::BFloat16,
        DType::Float32,
        DType::Float64,
        DType::Float8E4M3FN,
        DType::Float8E4M3FNUZ,
        DType::Float8E5M2,
        DType::Float8E5M2FNUZ,
        DType::Float8E8M0,
        DType::Float4E2M1,
        DType::Int8,
        DType::Int16,
        DType::Int32,
        DType::Int64,
        DType::Int4,
        DType::Int2,
        DType::UInt8,
        DType::UInt16,
        DType::UInt32,
        DType::UInt64,
        DType::UInt4,
        DType::UInt2,
        DType::Bool,
    ];

    /// The name in the text format (`float32`).
    pub fn name(self) -> &'static str {
        match self {
            DType::Float16 => "float16",
            DType::BFloat16 => "bfloat16",
            DType::Float32 => "float32",
            DType::Float64 => "float64",
            DType::Float8E4M3FN => "float8e4m3fn",
            DType::Float8E4M3FNUZ => "float8e4m3fnuz",
            DType::Float8E5M2 => "float8e5m2",
            DType::Float8E5M2FNUZ => "float8e5m2fnuz",
            DType::Float8E8M0 => "float8e8m0",
            DType::Float4E2M1 => "float4e2m1",
            DType::Int8 => "int8",
            DType::Int16 => "int16",
            DType::Int32 => "int32",
            DType::Int64 => "int64",
            DType::Int4 => "int4",
            DType::Int2 => "int2",
            DType::UInt8 => "uint8",
            DType::UInt16 => "uint16",
            DType::UInt32 => "uint32",
            DType::UInt64 => "uint64",
            DType::UInt4 => "uint4",
            DType::UInt2 => "uint2",
            DType::Bool => "bool",
        }
    }

    /// The suffix of a scalar literal of this dtype in the text format (`2.5f16`, `3i64`;
    /// `f` for float32, none for int32, `None` for bool, whose literals are words). The parser
    /// also reads `f32`, `i` and `i32`.
    pub fn suffix(self) -> Option<&'static str> {
        Some(match self {
            DType::Float16 => "f16",
            DType::BFloat16 => "bf16",
            DType::Float32 => "f",
            DType::Float64 => "f64",
            DType::Float8E4M3FN => "f8e4m3fn",
            DType::Float8E4M3FNUZ => "f8e4m3fnuz",
            DType::Float8E5M2 => "f8e5m2",
            DType::Float8E5M2FNUZ => "f8e5m2fnuz",
            DType::Float8E8M0 => "f8e8m0",
            DType::Float4E2M1 => "f4e2m1",
            DType::Int8 => "i8",
            DType::Int16 => "i16",
            DType::Int32 => "",
            DType::Int64 => "i64",
            DType::Int4 => "i4",
            DType::Int2 => "i2",
            DType::UInt8 => "u8",
            DType::UInt16 => "u16",
            DType::UInt32 => "u32",
            DType::UInt64 => "u64",
            DType::UInt4 => "u4",
            DType::UInt2 => "u2",
            DType::Bool => return None,
        })
    }

    /// The dtype of a scalar literal's suffix ([`DType::suffix`], and the aliases `f32`, `i`,
    /// `i32`).
    ///
    /// ```
    /// use irpass_ir::DType;
    /// assert_eq!(DType::of_suffix("i64"), Some(DType::Int64));
    /// assert_eq!(DType::of_suffix("f32"), Some(DType::Float32));
    /// assert_eq!(DType::of_suffix("q"), None);
    /// ```
    pub fn of_suffix(suffix: &str) -> Option<DType> {
        match suffix {
            "f32" => Some(DType::Float32),
            "i" | "i32" => Some(DType::Int32),
            "" => None,
            _ => DType::ALL.into_iter().find(|d| d.suffix() == Some(suffix)),
        }
    }

    /// The small float format of the float8 and float4 kinds but float8e8m0.
    fn minifloat(self) -> Option<&'static MiniFloat> {
        match self {
            DType::Float8E4M3FN => Some(&E4M3FN),
            DType::Float8E4M3FNUZ => Some(&E4M3FNUZ),
            DType::Float8E5M2 => Some(&E5M2),
            DType::Float8E5M2FNUZ => Some(&E5M2FNUZ),
            DType::Float4E2M1 => Some(&E2M1),
            _ => None,
        }
    }

    /// Whether it is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            DType::Float16
                | DType::BFloat16
                | DType::Float32
                | DType::Float64
                | DType::Float8E4M3FN
                | DType::Float8E4M3FNUZ
                | DType::Float8E5M2
                | DType::Float8E5M2FNUZ
                | DType::Float8E8M0
                | DType::Float4E2M1
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
                | DType::Int4
                | DType::Int2
                | DType::UInt8
                | DType::UInt16
                | DType::UInt32
                | DType::UInt64
                | DType::UInt4
                | DType::UInt2
        )
    }

    /// The smallest and largest value of an integer type (`None` for the others; 64-bit
    /// bounds as the nearest floats).
    pub fn int_range(self) -> Option<(f64, f64)> {
        Some(match self {
            DType::Int2 => (-2.0, 1.0),
            DType::Int4 => (-8.0, 7.0),
            DType::UInt2 => (0.0, 3.0),
            DType::UInt4 => (0.0, 15.0),
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

    /// The largest finite value (1 for bool; 64-bit integer bounds as the nearest float).
    ///
    /// ```
    /// use irpass_ir::DType;
    /// assert_eq!(DType::Float16.max_finite(), 65504.0);
    /// assert_eq!(DType::Float8E4M3FN.max_finite(), 448.0);
    /// assert_eq!(DType::UInt4.max_finite(), 15.0);
    /// ```
    pub fn max_finite(self) -> f64 {
        match self {
            DType::Float16 => f64::from(half::f16::MAX),
            DType::BFloat16 => f64::from(half::bf16::MAX),
            DType::Float32 => f64::from(f32::MAX),
            DType::Float64 => f64::MAX,
            DType::Float8E8M0 => 2f64.powi(127),
            DType::Bool => 1.0,
            _ => match (self.minifloat(), self.int_range()) {
                (Some(format), _) => format.max(),
                (None, Some((_, hi))) => hi,
                (None, None) => unreachable!("every dtype is a float, an integer or bool"),
            },
        }
    }

    /// Whether a cast to `to` keeps every value: a type of the same kind at least as wide
    /// (TVM's `IsWidenCast`).
    pub fn widens_to(self, to: DType) -> bool {
        // Each kind of float whose values are not all another's is its own kind: bfloat16 has
        // float16's width and more range, the 8- and 4-bit floats are compared with no other.
        let kind = |d: DType| match d {
            DType::Float16 | DType::Float32 | DType::Float64 => 0,
            DType::Int8
            | DType::Int16
            | DType::Int32
            | DType::Int64
            | DType::Int4
            | DType::Int2 => 1,
            DType::UInt8
            | DType::UInt16
            | DType::UInt32
            | DType::UInt64
            | DType::UInt4
            | DType::UInt2 => 2,
            DType::Bool => 3,
            other => 4 + other as usize,
        };
        kind(self) == kind(to) && self.bits() <= to.bits()
    }

    /// Bits per element.
    pub fn bits(self) -> usize {
        match self {
            DType::Int2 | DType::UInt2 => 2,
            DType::Int4 | DType::UInt4 | DType::Float4E2M1 => 4,
            DType::Bool
            | DType::Int8
            | DType::UInt8
            | DType::Float8E4M3FN
            | DType::Float8E4M3FNUZ
            | DType::Float8E5M2
            | DType::Float8E5M2FNUZ
            | DType::Float8E8M0 => 8,
            DType::Float16 | DType::BFloat16 | DType::Int16 | DType::UInt16 => 16,
            DType::Float32 | DType::Int32 | DType::UInt32 => 32,
            DType::Float64 | DType::Int64 | DType::UInt64 => 64,
        }
    }

    /// Bytes per element, rounded up (one for the 4- and 2-bit types, which ONNX packs).
    pub fn bytes(self) -> usize {
        self.bits().div_ceil(8)
    }

    /// Rounds a float to this (float) dtype's values: to nearest (ties to even); the 8- and
    /// 4-bit floats saturate at their largest finite value (infinities stay where the dtype
    /// has them: float8e5m2), and float8e8m0 rounds the magnitude up to a power of two.
    /// [`DType::cast_float`] is the conversion of the `cast` operator.
    ///
    /// ```
    /// use irpass_ir::DType;
    /// assert_eq!(DType::Float8E4M3FN.round_float(1000.0), 448.0);
    /// assert_eq!(DType::Float4E2M1.round_float(2.4), 2.0);
    /// assert_eq!(DType::Float8E8M0.round_float(0.3), 0.5);
    /// ```
    pub fn round_float(self, v: f64) -> f64 {
        match self {
            DType::Float16 => f64::from(half::f16::from_f64(v)),
            DType::BFloat16 => f64::from(half::bf16::from_f64(v)),
            DType::Float32 => f64::from(v as f32),
            DType::Float8E8M0 => e8m0::round(v),
            _ => match self.minifloat() {
                Some(format) => format.round(v),
                None => v,
            },
        }
    }

    /// A float converted by the `cast` operator: [`DType::round_float`], except that the 8-
    /// and 4-bit floats saturate infinities too, to the largest finite value (ONNX's `Cast`
    /// with its default `saturate=1` and `round_mode="up"`).
    ///
    /// ```
    /// use irpass_ir::DType;
    /// assert_eq!(DType::Float8E5M2.round_float(f64::INFINITY), f64::INFINITY);
    /// assert_eq!(DType::Float8E5M2.cast_float(f64::INFINITY), 57344.0);
    /// ```
    pub fn cast_float(self, v: f64) -> f64 {
        if v.is_infinite() && self.minifloat().is_some() {
            self.round_float(v.clamp(-self.max_finite(), self.max_finite()))
        } else {
            self.round_float(v)
        }
    }

    /// The code of an element of a dtype of 8 bits or fewer (its bits in the low ones of the
    /// byte, as ONNX stores it), after rounding or wrapping to the dtype; `None` for the wider
    /// dtypes.
    ///
    /// ```
    /// use irpass_ir::DType;
    /// assert_eq!(DType::Float8E4M3FN.byte_code(1.0), Some(0x38));
    /// assert_eq!(DType::Int4.byte_code(-1.0), Some(0xf));
    /// assert_eq!(DType::Float32.byte_code(1.0), None);
    /// ```
    pub fn byte_code(self, v: f64) -> Option<u8> {
        let mask = ((1u16 << self.bits().min(8)) - 1) as u8;
        match self {
            DType::Float8E8M0 => Some(e8m0::encode(v)),
            _ if self.bits() > 8 => None,
            _ => match self.minifloat() {
                Some(format) => Some(format.encode(v)),
                None => Some(self.wrap_int(v as i64) as u8 & mask),
            },
        }
    }

    /// The element of a code ([`DType::byte_code`]); `None` for the dtypes wider than 8 bits.
    ///
    /// ```
    /// use irpass_ir::DType;
    /// assert_eq!(DType::Float8E5M2.from_byte_code(0x3c), Some(1.0));
    /// assert_eq!(DType::Int2.from_byte_code(0b10), Some(-2.0));
    /// ```
    pub fn from_byte_code(self, code: u8) -> Option<f64> {
        Some(match self {
            DType::Float8E8M0 => e8m0::decode(code),
            _ if self.bits() > 8 => return None,
            _ => match self.minifloat() {
                Some(format) => format.decode(code),
                None => self.wrap_int(i64::from(code)) as f64,
            },
        })
    }

    /// Wraps an integer to this (integer) dtype's width.
    pub fn wrap_int(self, v: i64) -> i64 {
        match self {
            DType::Int2 => (v << 62) >> 62,
            DType::Int4 => (v << 60) >> 60,
            DType::UInt2 => v & 0x3,
            DType::UInt4 => v & 0xf,
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
