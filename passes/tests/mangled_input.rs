//! Bad input gets an error, never a panic, and whatever parses and type-checks is optimised
//! correctly. The inputs are the models of `examples/models/` mangled at random (text deleted,
//! copied elsewhere, or pieces of tokens inserted: extreme numbers, unbalanced brackets,
//! keywords, non-ASCII), and textual pipelines made of random tokens.
//!
//! Each property runs a fixed number of cases from a fixed seed, so CI sees the same inputs
//! every run; a failure prints the input that caused it.

mod support;

use irpass::{Pass, PassContext, pipeline, registry};
use irpass_passes as _;
use irpass_passes::ir::{Module, Type, Value, eval_function};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use support::{MODELS, close, inputs, model, registered_passes};

/// Pieces that edits insert: tokens of the format, their near misses, and numbers at the edge
/// of what the types hold.
const PIECES: &[&str] = &[
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ",",
    ";",
    "%",
    "@",
    "=",
    "-",
    ".",
    ":",
    "?",
    "\"",
    "->",
    "0",
    "1",
    "-1",
    "1e308",
    "1e-320",
    "nan",
    "-inf",
    "99999999999999999999",
    "2147483648",
    "-9223372036854775808",
    "0i64",
    "1f",
    ".9999999",
    "Tensor[(",
    "Tensor[(0), float32]{}",
    "float32",
    "int64",
    "bool",
    "axis=",
    "let %q = ",
    "fn (",
    "if (",
    "else",
    "def ",
    "#[",
    "/*",
    "//",
    "meta[",
    "%x",
    "%0",
    "%1.0",
    " ",
    "\n",
    "\u{e9}",
    "\u{1F600}",
];

/// Numbers that replace a number of the text.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "-1",
    "0.5",
    "1e308",
    "-1e-320",
    "nan",
    "inf",
    "65536",
    "4294967297",
];

/// Words that replace a word of the text: operators of one and two operands, and dtypes.
const WORDS: &[&str] = &[
    "add",
    "multiply",
    "subtract",
    "divide",
    "maximum",
    "power",
    "nn.relu",
    "exp",
    "negative",
    "sqrt",
    "transpose",
    "sum",
    "mean",
    "float32",
    "float64",
    "int32",
    "int64",
    "bool",
];

/// One edit of a text; positions are fractions of its length (or of its count of numbers or
/// words).
#[derive(Clone, Debug)]
enum Edit {
    Number { nth: f64, piece: usize },
    Word { nth: f64, piece: usize },
    Delete { at: f64, len: usize },
    Insert { at: f64, piece: usize },
    Copy { from: f64, len: usize, to: f64 },
    Truncate { at: f64 },
}

fn edit() -> impl Strategy<Value = Edit> {
    let at = || 0.0..1.0f64;
    prop_oneof![
        6 => (at(), 0..NUMBERS.len()).prop_map(|(nth, piece)| Edit::Number { nth, piece }),
        4 => (at(), 0..WORDS.len()).prop_map(|(nth, piece)| Edit::Word { nth, piece }),
        4 => (at(), 1..12usize).prop_map(|(at, len)| Edit::Delete { at, len }),
        4 => (at(), 0..PIECES.len()).prop_map(|(at, piece)| Edit::Insert { at, piece }),
        2 => (at(), 1..40usize, at()).prop_map(|(from, len, to)| Edit::Copy { from, len, to }),
        1 => at().prop_map(|at| Edit::Truncate { at }),
    ]
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for e in edits {
        let n = chars.len();
        let pos = |f: f64| ((f * n as f64) as usize).min(n);
        match *e {
            Edit::Number { nth, piece } => {
                replace_nth(&mut chars, nth, NUMBERS[piece], |c| c.is_ascii_digit())
            }
            Edit::Word { nth, piece } => {
                replace_nth(&mut chars, nth, WORDS[piece], |c| c.is_ascii_alphabetic())
            }
            Edit::Delete { at, len } => {
                let i = pos(at);
                chars.drain(i..(i + len).min(n));
            }
            Edit::Insert { at, piece } => {
                let i = pos(at);
                chars.splice(i..i, PIECES[piece].chars());
            }
            Edit::Copy { from, len, to } => {
                let i = pos(from);
                let copied: Vec<char> = chars[i..(i + len).min(n)].to_vec();
                let j = pos(to);
                chars.splice(j..j, copied);
            }
            Edit::Truncate { at } => chars.truncate(pos(at)),
        }
    }
    chars.into_iter().collect()
}

/// Replaces the token at fraction `nth` of those that start with a character `starts` accepts
/// (after a character that cannot be inside a token) with `with`. A token runs on over
/// letters, digits, `_`, `.`, and a sign after an exponent `e`.
fn replace_nth(chars: &mut Vec<char>, nth: f64, with: &str, starts: impl Fn(char) -> bool) {
    let inside = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if inside(chars[i]) {
            let start = i;
            while i < chars.len()
                && (inside(chars[i])
                    || (matches!(chars[i], '-' | '+') && matches!(chars[i - 1], 'e' | 'E')))
            {
                i += 1;
            }
            let before = start.checked_sub(1).map(|b| chars[b]);
            if starts(chars[start]) && before != Some('%') && before != Some('@') {
                tokens.push(start..i);
            }
        } else {
            i += 1;
        }
    }
    if tokens.is_empty() {
        return;
    }
    let k = ((nth * tokens.len() as f64) as usize).min(tokens.len() - 1);
    chars.splice(tokens[k].clone(), with.chars());
}

/// A runner with a fixed seed: the same cases in every run.
fn runner(cases: u32) -> TestRunner {
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    let seed = *b"irpass: mangled inputs, seed 01.";
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed))
}

/// Whether `@main` exists and its parameters are tensors small enough to make inputs for.
fn has_small_main(m: &Module) -> bool {
    m.get("main").is_some_and(|f| {
        f.param_types().into_iter().all(|ty| match ty {
            Some(Type::Tensor(t)) => t.static_shape().is_some_and(|s| {
                s.iter()
                    .try_fold(1usize, |a, &d| a.checked_mul(d))
                    .is_some_and(|n| n <= 1 << 16)
            }),
            _ => false,
        })
    })
}

fn holds_closure(v: &Value) -> bool {
    match v {
        Value::Closure(_) => true,
        Value::Tuple(fields) => fields.iter().any(holds_closure),
        Value::Tensor(_) | Value::Opaque(_) => false,
    }
}

/// How far a mangled text got.
enum Outcome {
    ParseError,
    TypeError,
    Optimised,
}

/// The property for one mangled text. Parse and type errors are fine (they must render);
/// a module that type-checks must print and parse back as itself, and `o3` must turn it into
/// a well-typed module computing the same values.
fn mangled_model_is_an_error_or_optimised_correctly(
    text: &str,
    o3: &Pass<Module>,
    ctx: &PassContext,
) -> Result<Outcome, TestCaseError> {
    let m = match Module::parse(text) {
        Ok(m) => m,
        Err(e) => {
            prop_assert!(!e.to_string().is_empty());
            return Ok(Outcome::ParseError);
        }
    };
    if let Err(e) = m.infer_types() {
        prop_assert!(!e.to_string().is_empty());
        return Ok(Outcome::TypeError);
    }
    let printed = m.to_string();
    let back = Module::parse(&printed)
        .map_err(|e| TestCaseError::fail(format!("the printed module does not parse: {e}")))?;
    prop_assert!(back.structurally_equal(&m), "printed:\n{}", printed);

    let out = o3
        .run_in(m.clone(), ctx)
        .map_err(|e| TestCaseError::fail(format!("O3 failed on a well-typed module: {e}")))?;
    let typed = out.check_types();
    prop_assert!(
        typed.is_ok(),
        "O3 gives an ill-typed module: {:?}\n{}",
        typed.err(),
        out
    );

    if has_small_main(&m) {
        let args = inputs(&m, 5);
        if let Ok(expected) = eval_function(&m, "main", args.clone()) {
            let got = eval_function(&out, "main", args)
                .map_err(|e| TestCaseError::fail(format!("O3's output fails to run: {e}")))?;
            prop_assert!(
                holds_closure(&expected) || close(&got, &expected),
                "O3 changed the outputs: {} before, {} after\n{}",
                expected,
                got,
                out
            );
        }
    }
    Ok(Outcome::Optimised)
}

#[test]
fn mangled_models_are_errors_or_are_optimised_correctly_never_a_panic() {
    let texts: Vec<String> = MODELS.iter().map(|name| model(name).to_string()).collect();
    let strategy = (0..texts.len(), proptest::collection::vec(edit(), 1..3));
    let ctx = PassContext::builder().opt_level(3).build().unwrap();
    let o3 = registry::lookup::<Module>("O3").unwrap();
    let (parsed, typed) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    let result = runner(2000).run(&strategy, |(which, edits)| {
        let text = apply(&texts[which], &edits);
        let outcome = mangled_model_is_an_error_or_optimised_correctly(&text, &o3, &ctx)
            .map_err(|e| TestCaseError::fail(format!("{e}\ninput:\n{text}")))?;
        match outcome {
            Outcome::ParseError => {}
            Outcome::TypeError => parsed.set(parsed.get() + 1),
            Outcome::Optimised => {
                parsed.set(parsed.get() + 1);
                typed.set(typed.get() + 1);
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    // Not vacuous: some mangled texts are still programs, and some of those go through O3.
    let (parsed, typed) = (parsed.get(), typed.get());
    eprintln!("{parsed} of 2000 mangled texts parsed, {typed} type-checked and went through O3");
    assert!(
        parsed >= 100 && typed >= 20,
        "{parsed} parsed, {typed} typed"
    );
}

/// Tokens of the pipeline syntax and near misses of names; the registered names are added
/// from the registry.
const PIPELINE_TOKENS: &[&str] = &[
    "Fold",
    "(",
    ")",
    "{",
    "}",
    ",",
    "=",
    "layout",
    "NHWC",
    "fuse_opt_level",
    "1",
    "-1",
    "99999999999999999999",
    "\"x\"",
    "[",
    "]",
    "true",
    " ",
    "seq",
    "\u{e9}",
    "\\",
    ":",
    "0.5",
    "null",
];

#[test]
fn random_pipeline_texts_are_errors_or_run_never_a_panic() {
    let m = model("resnet_block");
    let ctx = PassContext::builder().opt_level(3).build().unwrap();
    let mut tokens: Vec<String> = registered_passes();
    tokens.extend(PIPELINE_TOKENS.iter().map(|t| t.to_string()));
    let strategy = proptest::collection::vec(0..tokens.len(), 1..9);
    let built = std::cell::Cell::new(0);
    let result = runner(400).run(&strategy, |picked| {
        let text: String = picked.iter().map(|&t| tokens[t].as_str()).collect();
        let spec = match pipeline::parse(&text) {
            Ok(spec) => spec,
            Err(e) => {
                prop_assert!(!e.to_string().is_empty());
                return Ok(());
            }
        };
        let printed = spec.to_string();
        prop_assert_eq!(
            pipeline::parse(&printed).ok(),
            Some(spec.clone()),
            "{}",
            text
        );
        let pass = match spec.build::<Module>() {
            Ok(pass) => pass,
            Err(e) => {
                prop_assert!(!e.to_string().is_empty());
                return Ok(());
            }
        };
        built.set(built.get() + 1);
        let out = pass.run_in(m.clone(), &ctx);
        prop_assert!(out.is_ok(), "{}: {}", text, out.err().unwrap());
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let built = built.get();
    eprintln!("{built} of 400 random pipelines built and ran");
    assert!(built >= 20, "only {built} of 400 random pipelines built");
}
