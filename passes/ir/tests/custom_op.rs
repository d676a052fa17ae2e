//! Another crate adds an operator to the reference IR through `inventory`, with its schema,
//! type relation and kernel; the parser, type checker, printer and interpreter use it.

use irpass_ir::op::{Arity, AttrDefault, AttrKind, AttrSpec, OpDef, OpPattern};
use irpass_ir::{DType, Module, Op, Tensor, Type, Value, eval_function};

inventory::submit! {
    OpDef {
        name: "test.scale_shift",
        description: "x * scale + shift (a test operator from another crate).",
        arity: Arity::Exact(1),
        attrs: &[
            AttrSpec { name: "scale", kind: AttrKind::Float, default: AttrDefault::Required },
            AttrSpec { name: "shift", kind: AttrKind::Float, default: AttrDefault::Float(0.0) },
        ],
        pattern: OpPattern::ElemWise,
        type_rel: |args, _| match args.first() {
            Some(Type::Tensor(t)) if t.dtype.is_float() => Ok(Type::Tensor(t.clone())),
            Some(other) => Err(format!("`test.scale_shift` needs a float tensor, got `{other}`")),
            None => Err("`test.scale_shift` needs an argument".into()),
        },
        kernel: |args, attrs| {
            let x = args[0].as_tensor().ok_or("not a tensor")?;
            let (scale, shift) = (attrs.float("scale"), attrs.float("shift"));
            Ok(Value::tensor(Tensor::from_f64(x.dtype(), x.to_f64().mapv(|v| v * scale + shift))))
        },
    }
}

#[test]
fn an_operator_registered_by_another_crate_parses_type_checks_prints_and_evaluates() {
    assert!(Op::all().iter().any(|op| op.name() == "test.scale_shift"));
    let text = "def @main(%x: Tensor[(3), float32]) { test.scale_shift(%x, scale=2f, shift=0.5f) }";
    let m = Module::parse(text).unwrap();
    m.infer_types().unwrap();
    assert!(
        m.to_string()
            .contains("test.scale_shift(%x, scale=2f, shift=0.5f)")
    );
    let x = Value::tensor(Tensor::from_vec(DType::Float32, &[3], vec![1.0, 2.0, -1.0]).unwrap());
    let out = eval_function(&m, "main", vec![x]).unwrap();
    assert_eq!(out.as_tensor().unwrap().values(), [2.5, 4.5, -1.5]);
    // Its schema is enforced like a built-in operator's.
    let err =
        Module::parse("def @main(%x: Tensor[(3), float32]) { test.scale_shift(%x) }").unwrap_err();
    assert!(
        err.message().contains("needs the attribute `scale`"),
        "{err}"
    );
    let err = Module::parse("def @main(%x: Tensor[(3), int32]) { test.scale_shift(%x, scale=1f) }")
        .unwrap()
        .infer_types()
        .unwrap_err();
    assert!(err.message().contains("needs a float tensor"), "{err}");
}
