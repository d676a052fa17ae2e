//! Properties over random well-typed programs (`irpass_ir::random`): they type-check, print
//! stably, read back as a program that reads back structurally equal with an equal hash, and
//! evaluate to bit-identical values before and after the round trip. (A generated program may
//! share one node between an `if` branch and the code after it, which text writes as two
//! computations: so the first parse is compared by value and text, the second structurally.)

use irpass_ir::{Module, eval_function, random};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_programs_round_trip_through_text(choices in proptest::collection::vec(any::<u32>(), 0..120), seed in any::<u64>()) {
        let m = random::program(&choices);
        prop_assert!(m.infer_types().is_ok(), "{}\n{}", m.infer_types().unwrap_err(), m);
        let text = m.to_string();
        let back = Module::parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(back.to_string(), text.clone());
        let again = Module::parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert!(again.structurally_equal(&back), "{}", text);
        prop_assert_eq!(again.structural_hash(), back.structural_hash());
        prop_assert!(back.infer_types().is_ok());
        let inputs = random::inputs(&m, seed);
        let a = eval_function(&m, "main", inputs.clone()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let b = eval_function(&back, "main", inputs).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(a.bit_eq(&b), "{} vs {}", a, b);
    }
}
