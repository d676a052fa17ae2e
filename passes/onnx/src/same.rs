//! The ONNX operators that are one IR operator of the same operands and no attributes, both
//! ways: the importer converts a node of the first to a call of the second (its operands
//! broadcast as ONNX broadcasts them, [`crate::import`]), and the writer writes a call of the
//! second as a node of the first. One entry here is the whole of such an operator's
//! translation; an operator whose translation needs more (attributes, several nodes, an opset
//! that changes it) has its own code in `import/ops.rs` and `export/ops.rs`, or a native
//! definition ([`crate::native`]).

/// (ONNX operator, IR operator, operand count).
pub(crate) const SAME: &[(&str, &str, usize)] = &[
    ("Abs", "abs", 1),
    ("Ceil", "ceil", 1),
    ("Erf", "erf", 1),
    ("Exp", "exp", 1),
    ("Floor", "floor", 1),
    ("Log", "log", 1),
    ("Neg", "negative", 1),
    ("Not", "logical_not", 1),
    ("Relu", "nn.relu", 1),
    ("Sigmoid", "sigmoid", 1),
    ("Sqrt", "sqrt", 1),
    ("Tanh", "tanh", 1),
    ("Add", "add", 2),
    ("And", "logical_and", 2),
    ("Div", "divide", 2),
    ("Equal", "equal", 2),
    ("Greater", "greater", 2),
    ("Less", "less", 2),
    ("MatMul", "matmul", 2),
    ("Mul", "multiply", 2),
    ("Or", "logical_or", 2),
    ("Sub", "subtract", 2),
    ("Xor", "logical_xor", 2),
    ("Where", "where", 3),
];

/// The IR operator and operand count of ONNX operator `onnx`, if it is one of [`SAME`].
pub(crate) fn ir_of(onnx: &str) -> Option<(&'static str, usize)> {
    SAME.iter()
        .find(|(o, _, _)| *o == onnx)
        .map(|&(_, ir, n)| (ir, n))
}

/// The ONNX operator of IR operator `ir`, if it is one of [`SAME`].
pub(crate) fn onnx_of(ir: &str) -> Option<&'static str> {
    SAME.iter().find(|(_, i, _)| *i == ir).map(|&(o, _, _)| o)
}

#[cfg(test)]
mod tests {
    use super::SAME;

    #[test]
    fn each_operator_appears_once_on_each_side_and_exists_in_the_ir() {
        for (k, (onnx, ir, n)) in SAME.iter().enumerate() {
            assert!(
                SAME[k + 1..].iter().all(|(o, i, _)| o != onnx && i != ir),
                "{onnx} / {ir} twice"
            );
            let op = irpass_ir::Op::get(ir).unwrap();
            let accepts = match op.def().arity {
                irpass_ir::op::Arity::Exact(k) => k == *n,
                irpass_ir::op::Arity::AtLeast(k) => k <= *n,
            };
            assert!(accepts, "{ir} does not take {n} operands");
        }
    }
}
