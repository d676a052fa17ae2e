//! The text format: every model and reference example round-trips, printing is stable, floats
//! are bit-exact, and bad text gets a positioned error (never a panic).

use std::path::PathBuf;

use std::sync::Arc;

use irpass_ir::body::{ArenaFunction, Body, BodyBuilder, ExprId, Node};
use irpass_ir::rewrite::{OldId, Rewrite, RewriteCx};
use irpass_ir::{Attrs, DType, Function, Module, Tensor, Type, constant_text};

/// The body and result of `@main`.
fn main_of(m: &Module) -> (&Body, ExprId) {
    let f = m.get("main").expect("a @main");
    (&f.code.body, f.code.root)
}

/// The tensor of constant node `e`.
fn constant_at(body: &Body, e: ExprId) -> &Arc<Tensor> {
    match body.node(e) {
        Node::Constant(k) => body.constant(*k),
        other => panic!("not a constant: {other:?}"),
    }
}

/// The fields of tuple node `e`.
fn fields_of(body: &Body, e: ExprId) -> &[ExprId] {
    match body.node(e) {
        Node::Tuple(fields) => body.list(*fields),
        other => panic!("not a tuple: {other:?}"),
    }
}

fn texts(dir: &str) -> Vec<(PathBuf, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut out: Vec<(PathBuf, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "relay"))
        .map(|p| {
            let t = std::fs::read_to_string(&p).unwrap();
            (p, t)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_model_round_trips_structurally_and_prints_stably() {
    let models = texts("../../examples/models");
    assert!(models.len() >= 5, "{} models", models.len());
    for (path, text) in models {
        let m = Module::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        m.infer_types()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let printed = m.to_string();
        let again = Module::parse(&printed).unwrap_or_else(|e| {
            panic!("{}: reprint does not parse: {e}\n{printed}", path.display())
        });
        assert!(m.structurally_equal(&again), "{}", path.display());
        assert_eq!(
            again.to_string(),
            printed,
            "{}: printing is not stable",
            path.display()
        );
        assert_eq!(
            irpass::IrModule::structural_hash(&m),
            irpass::IrModule::structural_hash(&again)
        );
    }
}

#[test]
fn the_relay_examples_parse_as_they_are_and_round_trip() {
    // Programs in Relay's own text format (v0.0.5), as Relay's printer writes them.
    let examples = texts("tests/data/relay-text");
    assert!(examples.len() >= 5, "{} examples", examples.len());
    for (p, text) in examples {
        let m = Module::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        m.infer_types()
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert!(
            m.structurally_equal(&Module::parse(&m.to_string()).unwrap()),
            "{}",
            p.display()
        );
    }
}

#[test]
fn graph_bindings_make_shared_nodes_and_print_once() {
    let m = Module::parse(
        "def @main(%x: float32) { %0 = exp(%x); %1 = add(%0, %0); multiply(%1, %1) }",
    )
    .unwrap();
    let (body, root) = main_of(&m);
    let (_, args, _) = body.op_call(root).unwrap();
    assert_eq!(args[0], args[1], "one node, used twice");
    let reachable = body.reachable(root).iter().filter(|&&r| r).count();
    assert_eq!(reachable, 4);
    let printed = m.to_string();
    assert_eq!(printed.matches("exp(").count(), 1, "{printed}");
}

#[test]
fn a_let_value_used_elsewhere_too_prints_once_and_reads_back_shared() {
    // The exp is the `let`'s value and the add's operand: one node.
    let m =
        Module::parse("def @main(%x: float32) { %0 = exp(%x); let %a = %0; add(%a, %0) }").unwrap();
    let printed = m.to_string();
    assert_eq!(printed.matches("exp(").count(), 1, "{printed}");
    let back = Module::parse(&printed).unwrap();
    assert!(back.structurally_equal(&m), "{printed}");
    // A value only the `let` uses is still written in the `let`.
    let m = Module::parse("def @main(%x: float32) { let %a = exp(%x); add(%a, %a) }").unwrap();
    assert!(m.to_string().contains("let %a = exp(%x);"), "{m}");
}

#[test]
fn a_variable_is_one_node_for_all_its_uses() {
    let m = Module::parse(
        "def @main(%x: float32) { let %y = add(%x, %x); let %z = multiply(%y, %x); (%y, %z) }",
    )
    .unwrap();
    let f = m.get("main").unwrap();
    let body = &f.code.body;
    let x = body.var_node(f.code.params[0]).unwrap();
    let uses: usize = body
        .ids()
        .filter_map(|id| body.op_call(id))
        .map(|(_, args, _)| args.iter().filter(|&&a| a == x).count())
        .sum();
    assert_eq!(uses, 3, "every use of %x is the parameter's node");
    let Node::Let {
        bindings,
        body: result,
    } = body.node(f.code.root)
    else {
        panic!("a block")
    };
    let (y, _) = body.bindings(*bindings)[0];
    assert_eq!(fields_of(body, *result)[0], body.var_node(y).unwrap());
    // Printing and reading back keeps it so.
    let again = Module::parse(&m.to_string()).unwrap();
    assert!(m.structurally_equal(&again));
}

#[test]
fn infix_operators_follow_precedence_and_print_as_calls() {
    let m = Module::parse("def @main(%a: float32, %b: float32) { %a - %b / 4f * %a + 1f < %b }")
        .unwrap();
    let printed = m.to_string();
    assert!(printed.contains("%0 = divide(%b, 4f);"), "{printed}");
    assert!(printed.contains("%1 = multiply(%0, %a);"), "{printed}");
    assert!(printed.contains("%2 = subtract(%a, %1);"), "{printed}");
    assert!(printed.contains("%3 = add(%2, 1f);"), "{printed}");
    assert!(printed.contains("less(%3, %b)"), "{printed}");
}

#[test]
fn scalar_literals_of_every_dtype_read_and_print() {
    let cases = [
        ("1f", DType::Float32, "1f"),
        ("2.5f64", DType::Float64, "2.5f64"),
        ("3", DType::Int32, "3"),
        ("-42i64", DType::Int64, "-42i64"),
        ("7i8", DType::Int8, "7i8"),
        ("200u8", DType::UInt8, "200u8"),
        ("True", DType::Bool, "True"),
        ("1e-05f", DType::Float32, "1e-5f"),
        ("0.1f16", DType::Float16, "0.1f16"),
        ("0.1bf16", DType::BFloat16, "0.1bf16"),
        ("70000u32", DType::UInt32, "70000u32"),
        ("-0f", DType::Float32, "-0f"),
        ("448f8e4m3fn", DType::Float8E4M3FN, "448f8e4m3fn"),
        // Rounded to the dtype, saturating: 500 is past float8e4m3fnuz's largest, 240.
        ("500f8e4m3fnuz", DType::Float8E4M3FNUZ, "240f8e4m3fnuz"),
        ("0.3f8e5m2", DType::Float8E5M2, "0.3125f8e5m2"),
        ("-1.5f8e5m2fnuz", DType::Float8E5M2FNUZ, "-1.5f8e5m2fnuz"),
        ("0.3f8e8m0", DType::Float8E8M0, "0.5f8e8m0"),
        ("2.4f4e2m1", DType::Float4E2M1, "2f4e2m1"),
        ("-3i4", DType::Int4, "-3i4"),
        ("15u4", DType::UInt4, "15u4"),
        ("-2i2", DType::Int2, "-2i2"),
        ("3u2", DType::UInt2, "3u2"),
    ];
    for (lit, dtype, printed) in cases {
        let m = Module::parse(&format!("def @main() {{ {lit} }}"))
            .unwrap_or_else(|e| panic!("{lit}: {e}"));
        let (body, root) = main_of(&m);
        let t = constant_at(body, root);
        assert_eq!(t.dtype(), dtype, "{lit}");
        assert_eq!(constant_text(t), printed, "{lit}");
    }
    let e = Module::parse("def @main() { 9i4 }")
        .unwrap_err()
        .to_string();
    assert!(e.contains("`9` does not fit in int4"), "{e}");
}

#[test]
fn tensor_literals_print_row_major_whatever_the_array_layout() {
    // A transposed array is not laid out row-major in memory; its literal must still list the
    // elements in row-major order of its (transposed) shape.
    let a = ndarray::Array::from_shape_vec((2, 3), vec![1.0, 2.5, -0.0, f64::NAN, 1e-5, 7.0])
        .unwrap()
        .into_dyn();
    let transposed = Tensor::from_f64(DType::Float32, a.clone().reversed_axes());
    let copied = Tensor::from_f64(
        DType::Float32,
        a.reversed_axes().as_standard_layout().into_owned(),
    );
    let text = "Tensor[(3, 2), float32]{1, nan, 2.5, 1e-5, -0, 7}";
    assert_eq!(constant_text(&transposed), text);
    assert_eq!(constant_text(&copied), text);
    assert_eq!(transposed.to_string(), text);
    assert_eq!(
        transposed.elements_text(),
        ["1", "nan", "2.5", "1e-5", "-0", "7"]
    );
    let empty = Tensor::from_vec(DType::Int32, &[0, 4], vec![]).unwrap();
    assert_eq!(constant_text(&empty), "Tensor[(0, 4), int32]{}");
    let m = Module::parse("def @main() { Tensor[(0, 4), int32]{} }").unwrap();
    assert_eq!(
        {
            let (body, root) = main_of(&m);
            constant_text(constant_at(body, root))
        },
        "Tensor[(0, 4), int32]{}"
    );
}

#[test]
fn floats_round_trip_bit_exactly_including_nan_and_infinities() {
    let values = [
        0.1,
        1.0 / 3.0,
        -0.0,
        1e-45,
        3.4028235e38,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        123456.789,
    ];
    for dtype in DType::ALL.into_iter().filter(|d| d.is_float()) {
        let t = Tensor::from_vec(dtype, &[values.len()], values.to_vec()).unwrap();
        let scalars: Vec<String> = values
            .iter()
            .map(|&v| constant_text(&Tensor::scalar(dtype, v)))
            .collect();
        let text = format!(
            "def @main() {{ ({}, {}) }}",
            constant_text(&t),
            scalars.join(", ")
        );
        let m = Module::parse(&text).unwrap_or_else(|e| panic!("{dtype}: {e}\n{text}"));
        let (body, root) = main_of(&m);
        let fields = fields_of(body, root);
        let back = constant_at(body, fields[0]);
        assert!(back.bit_eq(&t), "{dtype}: {t} vs {back}");
        for (i, &v) in values.iter().enumerate() {
            let s = constant_at(body, fields[i + 1]);
            assert!(
                s.bit_eq(&Tensor::scalar(dtype, v)),
                "{dtype} {v}: {}",
                scalars[i]
            );
        }
        assert_eq!(
            Module::parse(&m.to_string()).unwrap().to_string(),
            m.to_string()
        );
    }
}

#[test]
fn tensor_literals_read_with_their_type_and_print_the_same() {
    let text = "def @main() { (Tensor[(2, 2), float32]{1, 2.5, -3, 4}, Tensor[(3), int64]{1, -2, 3}, Tensor[(2), bool]{True, False}) }";
    let m = Module::parse(text).unwrap();
    let printed = m.to_string();
    assert!(
        printed.contains("Tensor[(2, 2), float32]{1, 2.5, -3, 4}"),
        "{printed}"
    );
    assert!(
        printed.contains("Tensor[(3), int64]{1, -2, 3}"),
        "{printed}"
    );
    assert!(
        printed.contains("Tensor[(2), bool]{True, False}"),
        "{printed}"
    );
}

#[test]
fn signed_literals_reach_both_ends_of_the_integer_range_and_negate_floats_exactly() {
    let body = |text: &str| {
        let m = Module::parse(&format!("def @main() {{ {text} }}"))
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        let (body, root) = main_of(&m);
        constant_at(body, root).clone()
    };
    let scalar_i64 = |text: &str| body(text).to_i64().iter().copied().next().unwrap();
    assert_eq!(scalar_i64("-9223372036854775808i64"), i64::MIN);
    assert_eq!(scalar_i64("9223372036854775807i64"), i64::MAX);
    assert_eq!(scalar_i64("-0i64"), 0);
    let t = body("Tensor[(3), int64]{-9223372036854775808, 9223372036854775807, -7}");
    assert_eq!(
        t.to_i64().iter().copied().collect::<Vec<_>>(),
        [i64::MIN, i64::MAX, -7]
    );
    // A negative element is exactly the negated positive one, and -0 keeps its sign.
    let t = body("Tensor[(4), float32]{-0.1, 0.1, -0, 1e-45}");
    let v = t.values();
    assert_eq!(v[0].to_bits(), (-v[1]).to_bits());
    assert_eq!(v[0], f64::from(-0.1f32));
    assert!(v[2] == 0.0 && v[2].is_sign_negative());
    assert!(v[3] > 0.0);
    for (text, wanted) in [
        (
            "9223372036854775808i64",
            "`9223372036854775808` does not fit in 64 bits",
        ),
        (
            "-9223372036854775809i64",
            "`-9223372036854775809` does not fit in 64 bits",
        ),
        ("-129i8", "`-129` does not fit in int8"),
        (
            "Tensor[(1), int64]{-9223372036854775809}",
            "`-9223372036854775809` is not an integer",
        ),
        (
            "Tensor[(4294967296, 4294967296, 16), float32]{1}",
            "too many elements",
        ),
    ] {
        let err = Module::parse(&format!("def @main() {{ {text} }}")).expect_err(text);
        assert!(err.message().contains(wanted), "{text}: {}", err.message());
    }
}

/// (text, message part, line, column) of a parse error.
const PARSE_ERRORS: &[(&str, &str, usize, usize)] = &[
    (
        "def @main(%x: float32) {\n  add(%x, %y)\n}",
        "`%y` is not defined here",
        2,
        11,
    ),
    (
        "def @main(%x: float32) {\n  add(%x %x)\n}",
        "expected `,` or `)` after an argument, found `%x`",
        2,
        10,
    ),
    (
        "def @main(%x: Tensor[(2, 3) float32]) { %x }",
        "expected `,` between the shape and the dtype",
        1,
        29,
    ),
    (
        "def @main(%x: Tensor[(2, 3), float31]) { %x }",
        "unknown dtype `float31`",
        1,
        30,
    ),
    (
        "def @main() { meta[relay.Constant][0] }",
        "refers to a metadata section, which this text does not have",
        1,
        15,
    ),
    (
        "#[version = \"0.0.4\"]\ndef @main() { 1f }",
        "version \"0.0.4\" is not supported",
        1,
        13,
    ),
    (
        "def @main() {\n  /* never closed\n  1f\n}",
        "this `/*` comment is never closed",
        2,
        3,
    ),
    ("def @main() { 1q }", "unknown number suffix `q`", 1, 15),
    ("def @main() { 300i8 }", "`300` does not fit in int8", 1, 15),
    (
        "def @main(%x: float32) { %x }\ndef @main(%y: float32) { %y }",
        "`@main` is defined twice",
        2,
        5,
    ),
    (
        "def @main(%x: float32, %x: float32) { %x }",
        "parameter `%x` is declared twice",
        1,
        24,
    ),
    (
        "def @main() { if (True) { 1f } }",
        "expected `else` after the `if` branch",
        1,
        32,
    ),
    (
        "def @main() { Tensor[(2), float32]{1, 2, 3} }",
        "has 2 elements, the literal gives 3",
        1,
        15,
    ),
    (
        "def @main(%x: float32) { %x = exp(%x); %x }",
        "binds a graph node, whose names are numbers",
        1,
        26,
    ),
    (
        "def @main() { \"text\" }",
        "expected an expression, found the string",
        1,
        15,
    ),
    (
        "let %x = 1f;",
        "expected `def @name(...)` at the top level",
        1,
        1,
    ),
    (
        "def @main() { 1f",
        "expected `}` to close the function body, found the end of the input",
        1,
        17,
    ),
    (
        "def @main(%x: float32) { nn.softmax(%x, axis=1, 2) }",
        "arguments come before attributes",
        1,
        49,
    ),
    (
        "def @main(%f: fn (float32) -> float32) { %f(%f, axis=1) }",
        "attributes (`name=value`) are for operator calls",
        1,
        49,
    ),
    ("def @main() { 1f } $", "unexpected character `$`", 1, 20),
];

#[test]
fn parse_errors_say_what_was_expected_and_where() {
    for (text, wanted, line, col) in PARSE_ERRORS {
        let err = Module::parse(text).expect_err(text);
        assert!(
            err.message().contains(wanted),
            "{text:?}\n  wanted `{wanted}`\n  got    `{}`",
            err.message()
        );
        assert_eq!(
            err.line_col(),
            Some((*line, *col)),
            "{text:?}: {}",
            err.message()
        );
        // The rendering shows the source line and a caret under the position.
        let rendered = err.render();
        let src_line = text.lines().nth(line - 1).unwrap();
        assert!(rendered.contains(src_line.trim()), "{rendered}");
        assert!(rendered.contains('^'), "{rendered}");
        assert!(
            rendered.contains(&format!("<input>:{line}:{col}")),
            "{rendered}"
        );
    }
}

#[test]
fn no_input_makes_the_parser_panic() {
    // Truncations and byte edits of a real model: each must parse or give an error.
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/models/gated_closures.relay"
    ))
    .unwrap();
    let mut cut = 0;
    while cut < text.len() {
        if text.is_char_boundary(cut) {
            let _ = Module::parse(&text[..cut]);
        }
        cut += 7;
    }
    for (i, c) in text.char_indices().step_by(11) {
        for replacement in [
            "(", ")", "{", "}", "%", "@", ",", ";", "-", "1f", "fn", "\"",
        ] {
            let mut edited = String::with_capacity(text.len() + 2);
            edited.push_str(&text[..i]);
            edited.push_str(replacement);
            edited.push_str(&text[i + c.len_utf8()..]);
            if let Ok(m) = Module::parse(&edited) {
                let _ = m.infer_types();
                let _ = m.to_string();
            }
        }
    }
}

#[test]
fn deep_chains_parse_print_and_type_check_without_overflowing_the_stack() {
    let n = 50_000;
    let mut text = String::from("def @main(%x: Tensor[(2), float32]) {\n  %0 = add(%x, %x);\n");
    for i in 1..n {
        text.push_str(&format!("  %{i} = add(%{}, %x);\n", i - 1));
    }
    text.push_str(&format!("  %{}\n}}\n", n - 1));
    let m = Module::parse(&text).unwrap();
    m.infer_types().unwrap();
    let printed = m.to_string();
    assert_eq!(printed.lines().count(), n + 3);
    let nested = format!(
        "def @main(%x: float32) {{ {}%x{} }}",
        "negative(".repeat(20_000),
        ")".repeat(20_000)
    );
    let m = Module::parse(&nested).unwrap();
    m.infer_types().unwrap();
    assert!(m.structurally_equal(&Module::parse(&m.to_string()).unwrap()));
}

#[test]
fn a_long_chain_of_unary_minus_parses_without_recursion() {
    // 100 000 signs: the parser counts them in a loop (this aborted with a stack overflow).
    let n = 100_000;
    let text = format!("def @main(%x: float32) {{ {}%x }}", "- ".repeat(n));
    let m = Module::parse(&text).unwrap();
    m.infer_types().unwrap();
    let printed = m.to_string();
    assert_eq!(printed.matches("negative(").count(), n);
    // A sign right before a number is the number's; the others negate, innermost first.
    let m = Module::parse("def @main() { - - 2f }").unwrap();
    assert_eq!(
        m.to_string(),
        "#[version = \"0.0.5\"]\ndef @main() {\n  negative(-2f)\n}\n"
    );
}

#[test]
fn long_let_blocks_and_deeply_nested_ones_neither_overflow_nor_differ() {
    let n = 100_000;
    let mut b = BodyBuilder::with_capacity(3 * n);
    let x = b.var("x", Some(Type::tensor(&[2], DType::Float32)), None);
    let vars: Vec<_> = (0..n)
        .map(|i| b.var(&format!("v{i}"), None, None))
        .collect();
    let xe = b.use_var(x);
    let values: Vec<ExprId> = (0..n)
        .map(|i| {
            let prev = if i == 0 { xe } else { b.use_var(vars[i - 1]) };
            b.op("add", &[prev, xe], Attrs::new()).unwrap()
        })
        .collect();
    // One block per binding, each the body of the one before: 100 000 levels deep.
    let mut nested = b.use_var(vars[n - 1]);
    for i in (0..n).rev() {
        nested = b.lets(&[(vars[i], values[i])], nested);
    }
    let code = ArenaFunction {
        body: b.finish(),
        params: vec![x],
        root: nested,
    };
    let nested = Module::from_functions([("main", Function::new(code, None, Attrs::new(), None))]);
    nested.infer_types().unwrap();
    let text = nested.to_string();
    assert_eq!(text.matches("let ").count(), n);
    let flat = Module::parse(&text).unwrap();
    flat.infer_types().unwrap();
    assert_eq!(flat.to_string(), text);
    // A rewrite of every call walks the nesting with a loop, not recursion.
    struct AddToSubtract;
    impl Rewrite for AddToSubtract {
        fn rewrite(&mut self, cx: &mut RewriteCx<'_>, _old: OldId, new: ExprId) -> Option<ExprId> {
            let (op, args, attrs) = cx.new.body().op_call(new)?;
            let (args, attrs) = (args.to_vec(), attrs.clone());
            (op.name() == "add").then(|| cx.new.op("subtract", &args, attrs).unwrap())
        }
    }
    let f = nested.get("main").unwrap();
    let out = f.with_code(f.code.rewrite(&mut AddToSubtract));
    let out = Module::from_functions([("main", out)]);
    let printed = out.to_string();
    assert_eq!(printed.matches("subtract(").count(), n);
    assert_eq!(printed.matches("add(").count(), 0);
    drop((nested, flat, out));
}

#[test]
fn distinct_variables_of_one_name_print_with_distinct_suffixes_and_read_back() {
    // 500 variables written `%y` (as inlining copies make), and one written `%y3`: each
    // prints under its own name, and the text reads back as the same program.
    let mut b = BodyBuilder::new();
    let x = b.var("x", Some(Type::scalar(DType::Float32)), None);
    let mut bindings = Vec::new();
    let mut cur = b.use_var(x);
    for i in 0..500 {
        let name = if i == 2 { "y3" } else { "y" };
        let v = b.var(name, None, None);
        let value = b.op("exp", &[cur], Attrs::new()).unwrap();
        bindings.push((v, value));
        cur = b.use_var(v);
    }
    let root = b.lets(&bindings, cur);
    let code = ArenaFunction {
        body: b.finish(),
        params: vec![x],
        root,
    };
    let f = Function::new(code, None, Attrs::new(), None);
    let m = Module::from_functions([("main", f)]);
    let text = m.to_string();
    let mut names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("let %"))
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(names.len(), 500);
    assert_eq!(&names[..5], ["y", "y1", "y3", "y2", "y4"]);
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 500, "a name printed twice");
    let back = Module::parse(&text).unwrap();
    assert!(back.structurally_equal(&m));
}
