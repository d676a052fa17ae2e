//! Floats of 8 bits or fewer (OCP's float8 and float4 formats, and the float8 kinds with no
//! negative zero): each element is a code of `1 + exponent + mantissa` bits, decoded through
//! a table of its finite values. Rounding is to the nearest value, ties to the even code, and
//! saturates at the largest finite value (what ONNX's `Cast` does with `saturate=1`, its
//! default); `float8e8m0` (scales: powers of two, no sign) rounds up to a power of two.

use std::sync::OnceLock;

/// How a format spends its top exponent and the negative-zero code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Specials {
    /// IEEE-like: the top exponent is infinity (mantissa 0) or NaN (float8e5m2).
    Ieee,
    /// No infinity; the all-ones code of either sign is NaN (float8e4m3fn).
    FiniteAllOnesNan,
    /// No infinity, no negative zero: the negative-zero code is the only NaN (the `fnuz` kinds).
    Fnuz,
    /// No infinity, no NaN (float4e2m1).
    Finite,
}

/// A small float format.
#[derive(Debug)]
pub(crate) struct MiniFloat {
    exponent_bits: u32,
    mantissa_bits: u32,
    bias: i32,
    specials: Specials,
    /// The finite non-negative values by code (codes `0..len`), ascending.
    table: OnceLock<Vec<f64>>,
}

pub(crate) static E4M3FN: MiniFloat = MiniFloat::new(4, 3, 7, Specials::FiniteAllOnesNan);
pub(crate) static E4M3FNUZ: MiniFloat = MiniFloat::new(4, 3, 8, Specials::Fnuz);
pub(crate) static E5M2: MiniFloat = MiniFloat::new(5, 2, 15, Specials::Ieee);
pub(crate) static E5M2FNUZ: MiniFloat = MiniFloat::new(5, 2, 16, Specials::Fnuz);
pub(crate) static E2M1: MiniFloat = MiniFloat::new(2, 1, 1, Specials::Finite);

impl MiniFloat {
    const fn new(exponent_bits: u32, mantissa_bits: u32, bias: i32, specials: Specials) -> Self {
        MiniFloat {
            exponent_bits,
            mantissa_bits,
            bias,
            specials,
            table: OnceLock::new(),
        }
    }

    fn sign_bit(&self) -> u8 {
        1 << (self.exponent_bits + self.mantissa_bits)
    }

    /// The value of a non-negative code, `None` for NaN and infinity.
    fn magnitude(&self, code: u8) -> Option<f64> {
        let exponent_max = (1u8 << self.exponent_bits) - 1;
        let mantissa_mask = (1u8 << self.mantissa_bits) - 1;
        let (e, m) = (code >> self.mantissa_bits, code & mantissa_mask);
        match self.specials {
            Specials::Ieee if e == exponent_max => return None,
            Specials::FiniteAllOnesNan if e == exponent_max && m == mantissa_mask => return None,
            _ => {}
        }
        let m = f64::from(m) / f64::from(1u8 << self.mantissa_bits);
        let value = if e == 0 {
            m * 2f64.powi(1 - self.bias)
        } else {
            (1.0 + m) * 2f64.powi(i32::from(e) - self.bias)
        };
        Some(value)
    }

    fn table(&self) -> &[f64] {
        self.table.get_or_init(|| {
            (0..self.sign_bit())
                .map_while(|code| self.magnitude(code))
                .collect()
        })
    }

    /// The largest finite value.
    pub(crate) fn max(&self) -> f64 {
        *self.table().last().expect("every format has finite values")
    }

    /// The value of a code.
    pub(crate) fn decode(&self, code: u8) -> f64 {
        let sign = self.sign_bit();
        let code = code & (sign | (sign - 1));
        if self.specials == Specials::Fnuz && code == sign {
            return f64::NAN;
        }
        let negative = code & sign != 0;
        let magnitude = match self.magnitude(code & !sign) {
            Some(v) => v,
            None if self.specials == Specials::Ieee
                && code & ((1 << self.mantissa_bits) - 1) == 0 =>
            {
                f64::INFINITY
            }
            None => return f64::NAN,
        };
        if negative { -magnitude } else { magnitude }
    }

    /// The code of `v` after [`MiniFloat::round`].
    pub(crate) fn encode(&self, v: f64) -> u8 {
        let sign = self.sign_bit();
        let v = self.round(v);
        if v.is_nan() {
            return match self.specials {
                Specials::Fnuz => sign,
                _ => sign - 1,
            };
        }
        let table = self.table();
        let magnitude = v.abs();
        let code = table.partition_point(|&t| t < magnitude) as u8;
        if v.is_sign_negative() && !(self.specials == Specials::Fnuz && magnitude == 0.0) {
            code | sign
        } else {
            code
        }
    }

    /// `v` rounded to the nearest value of the format (ties to the even code), saturating at
    /// the largest finite value; NaN stays NaN (a format without NaN gives negative zero,
    /// as `ml_dtypes` and ONNX's reference do), an infinity stays one where the format has
    /// them, and the fnuz kinds have no negative zero.
    pub(crate) fn round(&self, v: f64) -> f64 {
        if v.is_nan() {
            return if self.specials == Specials::Finite {
                -0.0
            } else {
                f64::NAN
            };
        }
        if v.is_infinite() && self.specials == Specials::Ieee {
            return v;
        }
        let table = self.table();
        let magnitude = v.abs();
        let max = self.max();
        let rounded = if magnitude >= max {
            max
        } else {
            // table[hi - 1] <= magnitude < table[hi]
            let hi = table.partition_point(|&t| t <= magnitude);
            let (lo_v, hi_v) = (table[hi - 1], table[hi]);
            let (below, above) = (magnitude - lo_v, hi_v - magnitude);
            if below < above || (below == above && (hi - 1) % 2 == 0) {
                lo_v
            } else {
                hi_v
            }
        };
        if v.is_sign_negative() && !(self.specials == Specials::Fnuz && rounded == 0.0) {
            -rounded
        } else {
            rounded
        }
    }
}

/// float8e8m0: the code `c` is `2^(c - 127)` (`c` in `0..=254`), 255 is NaN; no sign, no zero.
pub(crate) mod e8m0 {
    /// The value of a code.
    pub(crate) fn decode(code: u8) -> f64 {
        if code == 255 {
            f64::NAN
        } else {
            2f64.powi(i32::from(code) - 127)
        }
    }

    /// The code of `v`'s magnitude rounded up to a power of two ([`round`]).
    pub(crate) fn encode(v: f64) -> u8 {
        let v = round(v);
        if v.is_nan() {
            255
        } else {
            // Exact: `v` is a power of two between 2^-127 and 2^127.
            (v.log2() as i32 + 127) as u8
        }
    }

    /// The smallest power of two at least `|v|`, between 2^-127 (zero's) and 2^127 (the
    /// largest, where larger magnitudes saturate); NaN and infinity are NaN. ONNX's `Cast` with
    /// `round_mode="up"`, its default.
    pub(crate) fn round(v: f64) -> f64 {
        if !v.is_finite() {
            return f64::NAN;
        }
        let magnitude = v.abs();
        let mut k = -127;
        while k < 127 && 2f64.powi(k) < magnitude {
            k += 1;
        }
        2f64.powi(k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_finite_values_are_the_formats_documented_ones() {
        assert_eq!(E4M3FN.max(), 448.0);
        assert_eq!(E4M3FNUZ.max(), 240.0);
        assert_eq!(E5M2.max(), 57344.0);
        assert_eq!(E5M2FNUZ.max(), 57344.0);
        assert_eq!(E2M1.max(), 6.0);
        assert_eq!(E2M1.table(), &[0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
    }

    #[test]
    fn every_code_decodes_and_encodes_back() {
        for (format, bits) in [
            (&E4M3FN, 8),
            (&E4M3FNUZ, 8),
            (&E5M2, 8),
            (&E5M2FNUZ, 8),
            (&E2M1, 4),
        ] {
            for code in 0..(1u16 << bits) {
                let code = code as u8;
                let v = format.decode(code);
                if v.is_nan() || v.is_infinite() || (format.specials == Specials::Fnuz && v == 0.0)
                {
                    continue;
                }
                assert_eq!(format.encode(v), code, "{format:?} {code:#x} = {v}");
            }
        }
        assert!(E4M3FN.decode(0x7f).is_nan() && E4M3FN.decode(0xff).is_nan());
        assert_eq!(E5M2.decode(0x7c), f64::INFINITY);
        assert!(E5M2FNUZ.decode(0x80).is_nan());
    }

    #[test]
    fn rounding_is_to_nearest_even_and_saturates() {
        // Between 1 and 1.125 (float8e4m3fn's step at 1): the tie goes to the even code, 1.
        assert_eq!(E4M3FN.round(1.0625), 1.0);
        assert_eq!(E4M3FN.round(1.1875), 1.25);
        assert_eq!(E4M3FN.round(1e6), 448.0);
        assert_eq!(E4M3FN.round(f64::NEG_INFINITY), -448.0);
        assert_eq!(E5M2.round(1e6), 57344.0);
        assert_eq!(E5M2.round(f64::INFINITY), f64::INFINITY);
        assert_eq!(E2M1.round(0.25), 0.0);
        assert_eq!(E2M1.round(-3.5), -4.0);
        assert!(E4M3FNUZ.round(-1e-9).is_sign_positive());
        assert!(E4M3FN.round(-1e-9).is_sign_negative());
    }

    #[test]
    fn e8m0_rounds_magnitudes_up_to_powers_of_two() {
        assert_eq!(e8m0::round(0.0), 2f64.powi(-127));
        assert_eq!(e8m0::round(1.1), 2.0);
        assert_eq!(e8m0::round(-0.124), 0.125);
        assert_eq!(e8m0::round(1e300), 2f64.powi(127));
        assert_eq!(e8m0::encode(1.0), 127);
        assert_eq!(e8m0::decode(e8m0::encode(0.5)), 0.5);
        assert!(e8m0::round(f64::INFINITY).is_nan());
    }
}
