//! The module: types cached per function and re-inferred only where a change can reach,
//! structural equality, random programs well formed.

use std::sync::Arc;

use super::*;
use crate::body::*;
use crate::rewrite::{OldId, Rewrite, RewriteCx};
use crate::{Attrs, Op};

const CALLS: &str = "
def @g(%x: Tensor[(2), float32]) { nn.relu(%x) }
def @h(%x: Tensor[(2), float32]) { exp(%x) }
def @main(%x: Tensor[(2), float32]) { @g(%x) }
";

#[test]
fn a_second_inference_types_nothing_again() {
    let m = Module::parse(CALLS).unwrap();
    m.infer_types().unwrap();
    let before: Vec<Arc<BodyTypes>> = m.iter().map(|(_, f)| f.types().unwrap()).collect();
    m.infer_types().unwrap();
    for ((name, f), b) in m.iter().zip(&before) {
        assert!(
            Arc::ptr_eq(&f.types().unwrap(), b),
            "@{name} was typed again"
        );
    }
    // From scratch, every function is typed again, to the same types.
    m.check_types().unwrap();
    for ((name, f), b) in m.iter().zip(&before) {
        let now = f.types().unwrap();
        assert!(!Arc::ptr_eq(&now, b), "@{name}");
        assert_eq!(now.function_type(), b.function_type());
    }
}

/// `f` with `exp` applied to its result: a new function of the same type.
fn wrapped_in_exp(f: &Function) -> Function {
    struct WrapRoot(ExprId);
    impl Rewrite for WrapRoot {
        fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: OldId, new: ExprId) -> Option<ExprId> {
            let exp = Op::get("exp").unwrap();
            (old.id() == self.0).then(|| cx.new.call_op(exp, &[new], Attrs::new()))
        }
    }
    let code = &f.code;
    let out = code.rewrite(&mut WrapRoot(code.root));
    assert!(out.is_some());
    f.with_code(out)
}

#[test]
fn after_a_change_only_the_changed_function_and_the_callers_it_affects_are_typed_again() {
    let m = Module::parse(CALLS).unwrap();
    m.infer_types().unwrap();
    let types = |m: &Module, n: &str| m.get(n).unwrap().types().unwrap();
    let (g0, h0, main0) = (types(&m, "g"), types(&m, "h"), types(&m, "main"));

    // @h changes, keeping its type: only @h is typed again.
    let mut m2 = m.clone();
    m2.replace("h", wrapped_in_exp(m.get("h").unwrap()));
    m2.infer_types().unwrap();
    assert!(Arc::ptr_eq(&types(&m2, "g"), &g0));
    assert!(Arc::ptr_eq(&types(&m2, "main"), &main0));
    assert!(!Arc::ptr_eq(&types(&m2, "h"), &h0));

    // @g changes keeping its type: @main, which calls it, keeps its types too (they were
    // found against the type @g still has).
    let mut m3 = m.clone();
    m3.replace("g", wrapped_in_exp(m.get("g").unwrap()));
    m3.infer_types().unwrap();
    assert!(Arc::ptr_eq(&types(&m3, "h"), &h0));
    assert!(!Arc::ptr_eq(&types(&m3, "g"), &g0));
    assert!(Arc::ptr_eq(&types(&m3, "main"), &main0));

    // A callee replaced by one of another type: the caller, typed against the old one, is
    // typed again and the mismatch reported.
    let mut m4 = m.clone();
    let other = Module::parse("def @g(%x: Tensor[(3), float32]) { %x }").unwrap();
    m4.replace("g", other.get("g").unwrap().clone());
    let err = m4.infer_types().unwrap_err();
    assert!(err.message().contains("the arguments do not fit"), "{err}");
}

#[test]
fn structural_equality_and_hash_see_renaming_as_equal_and_a_change_as_unequal() {
    let a = Module::parse("def @main(%x: float32) { let %y = exp(%x); add(%y, %y) }").unwrap();
    let b = Module::parse("def @main(%z: float32) { let %w = exp(%z); add(%w, %w) }").unwrap();
    let c = Module::parse("def @main(%x: float32) { add(exp(%x), exp(%x)) }").unwrap();
    assert!(a.structurally_equal(&b));
    assert_eq!(a.structural_hash(), b.structural_hash());
    assert!(!a.structurally_equal(&c));
    let mut d = a.clone();
    assert!(d.same_as(&a));
    d.replace("main", wrapped_in_exp(a.get("main").unwrap()));
    assert!(!d.same_as(&a));
    assert!(!a.structurally_equal(&d));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, failure_persistence: None, ..Default::default() })]

    #[test]
    fn a_random_program_is_well_formed_and_well_typed(
        choices in proptest::collection::vec(proptest::prelude::any::<u32>(), 0..256)
    ) {
        let m = crate::random::program(&choices);
        if let Err(e) = m.verify() {
            proptest::prop_assert!(false, "{}\n{}", e, m);
        }
    }
}
