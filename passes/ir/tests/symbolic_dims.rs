//! Sizes known by name (`batch`): written and read back by the text format, and kept by the
//! type relations wherever the result's size is the named one.

use irpass_ir::{Dim, Module, Symbol};

/// The type of `@main` in `text`, inferred.
fn main_type(text: &str) -> String {
    let m = Module::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    m.infer_types().unwrap_or_else(|e| panic!("{e}\n{text}"));
    m.get("main").unwrap().function_type().unwrap().to_string()
}

/// The result type of `@main(%x: x_type) { body }`.
fn result(x_type: &str, body: &str) -> String {
    let t = main_type(&format!("def @main(%x: {x_type}) {{ {body} }}"));
    t.split(" -> ").nth(1).unwrap().to_string()
}

#[test]
fn names_are_read_and_written_by_the_text_format_quoted_when_not_a_word() {
    let text = r#"def @main(%x: Tensor[(batch, "2*seq", 3), float32]) { %x }"#;
    let m = Module::parse(text).unwrap();
    let printed = m.to_string();
    assert!(
        printed.contains(r#"Tensor[(batch, "2*seq", 3), float32]"#),
        "{printed}"
    );
    assert!(Module::parse(&printed).unwrap().structurally_equal(&m));
    assert_eq!(Dim::named("batch"), Dim::Named(Symbol::new("batch")));
    assert_eq!(
        Dim::named("batch").symbol().map(Symbol::as_str),
        Some("batch")
    );
    // A dotted word is an operator's name, not a dimension.
    let err = Module::parse("def @main(%x: Tensor[(nn.a), float32]) { %x }").unwrap_err();
    assert!(err.to_string().contains("expected a dimension"), "{err}");
}

#[test]
fn elementwise_operators_keep_a_name_broadcast_against_itself_or_one() {
    let t = "Tensor[(batch, 1, 4), float32]";
    assert_eq!(result(t, "add(%x, %x)"), "Tensor[(batch, 1, 4), float32]");
    assert_eq!(
        result(t, "multiply(%x, Tensor[(3, 1), float32]{1, 2, 3})"),
        "Tensor[(batch, 3, 4), float32]"
    );
    // Against a static size other than 1, the name must be that size (or 1): the size wins.
    assert_eq!(
        result(t, "add(%x, Tensor[(2, 1, 1), float32]{1, 2})"),
        "Tensor[(2, 1, 4), float32]"
    );
    // Two different names broadcast to a size known only at run time.
    assert_eq!(
        main_type("def @main(%a: Tensor[(n), float32], %b: Tensor[(m), float32]) { add(%a, %b) }"),
        "fn (Tensor[(n), float32], Tensor[(m), float32]) -> Tensor[(?), float32]"
    );
}

#[test]
fn a_reshape_finds_its_free_size_by_cancelling_the_names_on_both_sides() {
    let t = "Tensor[(batch, seq, 8), float32]";
    assert_eq!(
        result(t, "reshape(%x, newshape=[0, 0, 2, -1])"),
        "Tensor[(batch, seq, 2, 4), float32]"
    );
    assert_eq!(
        result(t, "reshape(%x, newshape=[0, -1, 8])"),
        "Tensor[(batch, seq, 8), float32]"
    );
    // `seq * 8` is not a size the IR can name.
    assert_eq!(
        result(t, "reshape(%x, newshape=[0, -1])"),
        "Tensor[(batch, ?), float32]"
    );
    // A static mismatch is still found when the names cancel.
    let m = Module::parse(&format!(
        "def @main(%x: {t}) {{ reshape(%x, newshape=[0, 0, 3]) }}"
    ))
    .unwrap();
    let err = m.infer_types().unwrap_err().to_string();
    assert!(err.contains("cannot reshape"), "{err}");
}

#[test]
fn slices_pads_and_concatenations_keep_a_name_only_where_the_size_is_unchanged() {
    let t = "Tensor[(batch, seq, 8), float32]";
    assert_eq!(
        result(
            t,
            "strided_slice(%x, begin=[0, 2], end=[2147483647, 2147483647], axes=[0, 2])"
        ),
        "Tensor[(batch, seq, 6), float32]"
    );
    assert_eq!(
        result(t, "strided_slice(%x, begin=[0], end=[4], axes=[1])"),
        "Tensor[(batch, ?, 8), float32]"
    );
    assert_eq!(
        result(t, "nn.pad(%x, 0f, pad_width=[0, 0, 1, 1, 0, 0])"),
        "Tensor[(batch, ?, 8), float32]"
    );
    assert_eq!(
        result(t, "concatenate((%x, %x), axis=2)"),
        "Tensor[(batch, seq, 16), float32]"
    );
    assert_eq!(
        result(t, "concatenate((%x, %x), axis=1)"),
        "Tensor[(batch, ?, 8), float32]"
    );
}
