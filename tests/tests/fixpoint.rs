//! A fixpoint: passes run in rounds until one leaves the module as it was, at most N rounds,
//! in code (`Sequential::fixpoint`) and in pipeline text (`fixpoint<N>(...)`).

use irpass::pipeline::{Step, parse};
use irpass::{PassContext, Sequential, registry};
use irpass_tests::Tiny;

fn ctx() -> PassContext {
    PassContext::builder().opt_level(2).build().unwrap()
}

#[test]
fn a_fixpoint_runs_until_a_round_changes_nothing() {
    let module = Tiny::new([("main", vec![1, 2, 3, 4]), ("other", vec![5, 6])]);
    let shrink = registry::lookup::<Tiny>("Shrink").unwrap();
    let seq = Sequential::fixpoint([shrink], 10).unwrap();
    let out = seq.run_in(module, &ctx()).unwrap();
    assert_eq!(out.body("main"), Some(&[1][..]));
    assert_eq!(out.body("other"), Some(&[5][..]));
    assert_eq!(seq.max_rounds(), Some(10));
}

#[test]
fn a_fixpoint_that_does_not_converge_within_its_bound_is_an_error_naming_it() {
    // Three rounds take [1, 2, 3, 4] to [1]; two rounds are not enough (the second still
    // changes the module), and the error carries what the second round left.
    let module = Tiny::new([("main", vec![1, 2, 3, 4])]);
    let err = parse("fixpoint<2>(Shrink)")
        .unwrap()
        .build::<Tiny>()
        .unwrap()
        .run_in(module.clone(), &ctx())
        .unwrap_err();
    assert!(
        err.to_string().contains("no fixpoint within 2 rounds"),
        "{err}"
    );
    assert_eq!(err.module().body("main"), Some(&[1, 2][..]));
    // Four rounds: three that change it and one that does not.
    let out = parse("fixpoint<4>(Shrink)")
        .unwrap()
        .build::<Tiny>()
        .unwrap()
        .run_in(module, &ctx())
        .unwrap();
    assert_eq!(out.body("main"), Some(&[1][..]));
    // No round at all is refused when the pipeline is built.
    assert!(Sequential::<Tiny>::fixpoint([], 0).is_err());
}

#[test]
fn fixpoint_text_parses_prints_and_reports_its_mistakes() {
    let spec = parse("Canon, fixpoint< 3 >(Shrink, Scaled{value=2}), fixpoint(Shrink)").unwrap();
    assert_eq!(
        spec.to_string(),
        "Canon,fixpoint<3>(Shrink,Scaled{value=2}),fixpoint(Shrink)"
    );
    assert!(matches!(
        &spec.0[1],
        Step::Fixpoint { max_rounds: Some(3), pipeline } if pipeline.0.len() == 2
    ));
    assert!(matches!(
        &spec.0[2],
        Step::Fixpoint {
            max_rounds: None,
            ..
        }
    ));
    for (text, message) in [
        ("fixpoint<0>(Shrink)", "a whole number from 1"),
        ("fixpoint<x>(Shrink)", "a whole number from 1"),
        ("fixpoint<3(Shrink)", "expected `>`"),
        ("fixpoint<3>Shrink", "expected `(`"),
        ("fixpoint(Shrink", "to close `fixpoint(`"),
    ] {
        let err = parse(text).unwrap_err().to_string();
        assert!(err.contains(message), "{text}: {err}");
    }
    // The bare word is still a pass name.
    assert!(matches!(
        &parse("fixpoint").unwrap().0[0],
        Step::Pass { .. }
    ));
}
