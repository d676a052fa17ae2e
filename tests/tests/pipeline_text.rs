//! Textual pipelines: parsing with positioned errors, printing that parses back to the same
//! pipeline (a property over generated pipelines), and building them from the registry.

use irpass::pipeline::{OptionValue, PipelineSpec, Step, parse};
use irpass_tests::Tiny;
use proptest::prelude::*;

#[test]
fn nested_sequentials_and_options_parse_and_print() {
    let spec = parse(" Canon , opt( Analyze,Scaled{ value = 7 } ) ,Scaled{}").unwrap();
    assert_eq!(
        spec.to_string(),
        "Canon,opt(Analyze,Scaled{value=7}),Scaled{}"
    );
    let Step::Nested { name, pipeline } = &spec.0[1] else {
        panic!()
    };
    assert_eq!(name, "opt");
    assert_eq!(pipeline.0.len(), 2);
    let spec =
        parse(r#"P{a=1.5e3,b=-2,c=true,d=word,e="two words",f=[1,[x,"y z"]],g="true"}"#).unwrap();
    assert_eq!(
        spec.to_string(),
        r#"P{a=1.5e3,b=-2,c=true,d=word,e="two words",f=[1,[x,"y z"]],g="true"}"#
    );
}

#[test]
fn built_pipelines_run_with_options_and_requirements() {
    let pass = parse("Scaled{value=3},opt(NeedsCanon)")
        .unwrap()
        .build::<Tiny>()
        .unwrap();
    let ctx = irpass::PassContext::builder().opt_level(1).build().unwrap();
    let out = pass.run_in(Tiny::main(), &ctx).unwrap();
    // Scaled appends 3; NeedsCanon requires Canon (appends 100), which requires Analyze.
    assert_eq!(out.body("main"), Some(&[3, 100][..]));
}

/// (text, column, message part)
const ERRORS: &[(&str, usize, &str)] = &[
    ("A,,B", 3, "expected a pass name, found `,`"),
    (
        "A(B",
        4,
        "expected `,` or `)` to close `A(`, found the end of the pipeline",
    ),
    ("A{x 1}", 5, "expected `=` after option `x`, found `1`"),
    ("A{x=1,x=2}", 7, "option `x` is given twice"),
    ("A{x=}", 5, "expected a value"),
    (
        "A{x=1;}",
        6,
        "expected `,` or `}` in the options of `A`, found `;`",
    ),
    ("A{x=\"open}", 5, "this string is never closed"),
    (
        "A B",
        3,
        "expected `,` or the end of the pipeline, found `B`",
    ),
    ("", 1, "expected a pass name, found the end of the pipeline"),
    ("A{x=[1,2}", 9, "expected `,` or `]` in a list"),
    ("A{x=1.2.3}", 5, "`1.2.3` is not a number"),
];

#[test]
fn syntax_errors_give_the_column_and_what_was_expected() {
    for (text, column, wanted) in ERRORS {
        let err = parse(text).unwrap_err();
        assert_eq!(err.column, *column, "{text}: {err}");
        assert!(err.message.contains(wanted), "{text}: {}", err.message);
        assert!(
            err.to_string()
                .contains(&format!("{}^", " ".repeat(column - 1))),
            "{err}"
        );
    }
}

#[test]
fn unknown_names_and_bad_options_are_build_errors_that_help() {
    let err = parse("Canonn")
        .unwrap()
        .build::<Tiny>()
        .unwrap_err()
        .to_string();
    assert!(err.ends_with("(did you mean `Canon`?)"), "{err}");
    let err = parse("Scaled{valeu=1}")
        .unwrap()
        .build::<Tiny>()
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown field `valeu`"), "{err}");
    let err = parse("Analyze{x=1}")
        .unwrap()
        .build::<Tiny>()
        .unwrap_err()
        .to_string();
    assert!(err.contains("takes no options"), "{err}");
}

fn name() -> impl Strategy<Value = String> {
    "[A-Za-z_][A-Za-z0-9_.]{0,8}"
}

fn value() -> impl Strategy<Value = OptionValue> {
    let leaf = prop_oneof![
        any::<i32>().prop_map(|n| OptionValue::Number(n.to_string())),
        (-1000.0f64..1000.0).prop_map(|f| OptionValue::Number(format!("{f:?}"))),
        any::<bool>().prop_map(OptionValue::Bool),
        "[ -~]{0,12}".prop_map(OptionValue::Str),
    ];
    leaf.prop_recursive(3, 12, 4, |inner| {
        proptest::collection::vec(inner, 0..4).prop_map(OptionValue::List)
    })
}

fn step() -> impl Strategy<Value = Step> {
    let pass = (
        name(),
        proptest::option::of(proptest::collection::btree_map(name(), value(), 0..4)),
    )
        .prop_map(|(name, opts)| Step::Pass {
            name,
            options: opts.map(|m| m.into_iter().collect()),
        });
    pass.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            // (`fixpoint(...)` is the fixpoint, not a Sequential of that name.)
            (
                name().prop_filter("the fixpoint word", |n| n != "fixpoint"),
                proptest::collection::vec(inner.clone(), 1..4)
            )
                .prop_map(|(name, steps)| Step::Nested {
                    name,
                    pipeline: PipelineSpec(steps),
                }),
            (
                proptest::option::of(1u32..1000),
                proptest::collection::vec(inner, 1..4)
            )
                .prop_map(|(max_rounds, steps)| Step::Fixpoint {
                    max_rounds,
                    pipeline: PipelineSpec(steps),
                }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn printing_a_pipeline_gives_text_that_parses_to_the_same_pipeline(steps in proptest::collection::vec(step(), 1..5)) {
        let spec = PipelineSpec(steps);
        let text = spec.to_string();
        let back = parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(back, spec);
    }
}

#[test]
fn a_pass_with_options_is_listed_with_their_names_even_when_it_does_not_describe_them() {
    // `Scaled` takes options and does not implement `PassOptions`: the registry still knows
    // the names serde decodes (what `--list-passes` prints, without types or defaults).
    let reg = irpass::registry::passes::<Tiny>()
        .into_iter()
        .find(|r| r.info.name == "Scaled")
        .expect("Scaled is registered");
    let options = (reg.options)();
    assert_eq!(
        options.iter().map(|o| o.name).collect::<Vec<_>>(),
        ["value"]
    );
    assert!(options[0].type_name.is_empty() && options[0].default.is_empty());
    // A pass without options describes none.
    let canon = irpass::registry::passes::<Tiny>()
        .into_iter()
        .find(|r| r.info.name == "Canon")
        .expect("Canon is registered");
    assert!((canon.options)().is_empty());
}
