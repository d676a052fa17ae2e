//! WebAssembly's integer binary operators, as the folding and strength-reduction passes see
//! them: one table from walrus's `BinaryOp` to a width and an operation, and their semantics.

use walrus::ir::{BinaryOp, Instr, Value};

/// An integer binary operation, at either width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum IntOp {
    Add,
    Sub,
    Mul,
    DivS,
    DivU,
    RemS,
    RemU,
    And,
    Or,
    Xor,
    Shl,
    ShrS,
    ShrU,
    Eq,
    Ne,
    LtU,
    GtU,
}

/// The width (`true` for 64 bits) and operation of `op`, if it is one of [`IntOp`].
pub fn classify(op: BinaryOp) -> Option<(bool, IntOp)> {
    use BinaryOp as B;
    use IntOp as I;
    Some(match op {
        B::I32Add => (false, I::Add),
        B::I32Sub => (false, I::Sub),
        B::I32Mul => (false, I::Mul),
        B::I32DivS => (false, I::DivS),
        B::I32DivU => (false, I::DivU),
        B::I32RemS => (false, I::RemS),
        B::I32RemU => (false, I::RemU),
        B::I32And => (false, I::And),
        B::I32Or => (false, I::Or),
        B::I32Xor => (false, I::Xor),
        B::I32Shl => (false, I::Shl),
        B::I32ShrS => (false, I::ShrS),
        B::I32ShrU => (false, I::ShrU),
        B::I32Eq => (false, I::Eq),
        B::I32Ne => (false, I::Ne),
        B::I32LtU => (false, I::LtU),
        B::I32GtU => (false, I::GtU),
        B::I64Add => (true, I::Add),
        B::I64Sub => (true, I::Sub),
        B::I64Mul => (true, I::Mul),
        B::I64DivS => (true, I::DivS),
        B::I64DivU => (true, I::DivU),
        B::I64RemS => (true, I::RemS),
        B::I64RemU => (true, I::RemU),
        B::I64And => (true, I::And),
        B::I64Or => (true, I::Or),
        B::I64Xor => (true, I::Xor),
        B::I64Shl => (true, I::Shl),
        B::I64ShrS => (true, I::ShrS),
        B::I64ShrU => (true, I::ShrU),
        B::I64Eq => (true, I::Eq),
        B::I64Ne => (true, I::Ne),
        B::I64LtU => (true, I::LtU),
        B::I64GtU => (true, I::GtU),
        _ => return None,
    })
}

/// walrus's operator for `op` at a width (the inverse of [`classify`]).
pub fn binary_op(wide: bool, op: IntOp) -> BinaryOp {
    use BinaryOp as B;
    use IntOp as I;
    match (wide, op) {
        (false, I::Shl) => B::I32Shl,
        (false, I::ShrU) => B::I32ShrU,
        (false, I::And) => B::I32And,
        (true, I::Shl) => B::I64Shl,
        (true, I::ShrU) => B::I64ShrU,
        (true, I::And) => B::I64And,
        _ => unreachable!("only the strength-reduction targets are built"),
    }
}

/// An integer constant's bits and width (`true` for 64 bits), if `instr` is one.
pub fn constant(instr: &Instr) -> Option<(u64, bool)> {
    match instr {
        Instr::Const(c) => match c.value {
            Value::I32(v) => Some((v as u32 as u64, false)),
            Value::I64(v) => Some((v as u64, true)),
            _ => None,
        },
        _ => None,
    }
}

/// The constant instruction for `bits` at a width.
pub fn make_constant(bits: u64, wide: bool) -> Instr {
    let value = if wide {
        Value::I64(bits as i64)
    } else {
        Value::I32(bits as u32 as i32)
    };
    Instr::Const(walrus::ir::Const { value })
}

/// `a op b` at a width, as WebAssembly defines it; `None` where it traps (division by zero,
/// signed overflow of a division). Comparisons give an `i32` (0 or 1): the second value says
/// whether the result is 64 bits wide.
pub fn eval(wide: bool, op: IntOp, a: u64, b: u64) -> Option<(u64, bool)> {
    let bits = if wide { 64 } else { 32 };
    let mask = if wide { u64::MAX } else { u64::from(u32::MAX) };
    let signed = |x: u64| {
        if wide {
            x as i64
        } else {
            i64::from(x as u32 as i32)
        }
    };
    let (sa, sb) = (signed(a), signed(b));
    let min = if wide { i64::MIN } else { i64::from(i32::MIN) };
    let value = match op {
        IntOp::Add => a.wrapping_add(b),
        IntOp::Sub => a.wrapping_sub(b),
        IntOp::Mul => a.wrapping_mul(b),
        IntOp::DivU | IntOp::RemU if b == 0 => return None,
        IntOp::DivS | IntOp::RemS if sb == 0 => return None,
        IntOp::DivS if sa == min && sb == -1 => return None,
        IntOp::DivU => a / b,
        IntOp::RemU => a % b,
        IntOp::DivS => sa.wrapping_div(sb) as u64,
        IntOp::RemS => sa.wrapping_rem(sb) as u64,
        IntOp::And => a & b,
        IntOp::Or => a | b,
        IntOp::Xor => a ^ b,
        IntOp::Shl => a << (b % bits),
        IntOp::ShrU => a >> (b % bits),
        IntOp::ShrS => (sa >> (b % bits)) as u64,
        IntOp::Eq => return Some((u64::from(a == b), false)),
        IntOp::Ne => return Some((u64::from(a != b), false)),
        IntOp::LtU => return Some((u64::from(a < b), false)),
        IntOp::GtU => return Some((u64::from(a > b), false)),
    };
    Some((value & mask, wide))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluation_follows_webassembly_at_both_widths() {
        assert_eq!(eval(false, IntOp::Add, 0xffff_ffff, 1), Some((0, false)));
        assert_eq!(
            eval(true, IntOp::Add, 0xffff_ffff, 1),
            Some((1 << 32, true))
        );
        assert_eq!(
            eval(false, IntOp::ShrS, 0x8000_0000, 31),
            Some((0xffff_ffff, false))
        );
        assert_eq!(eval(false, IntOp::Shl, 1, 33), Some((2, false)));
        assert_eq!(eval(false, IntOp::DivS, 0x8000_0000, 0xffff_ffff), None);
        assert_eq!(
            eval(false, IntOp::RemS, 0x8000_0000, 0xffff_ffff),
            Some((0, false))
        );
        assert_eq!(eval(true, IntOp::DivU, 7, 0), None);
        assert_eq!(eval(true, IntOp::LtU, 1, 2), Some((1, false)));
    }
}
