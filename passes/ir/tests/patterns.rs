//! The pattern language's data-driven tests: each file under `tests/patterns/` holds a pattern
//! (or rules, or partitions) and the programs it is checked on, most of them TVM's
//! `tests/python/relay/test_dataflow_pattern.py` (v0.16.0) translated; `tests/patterns/README.md`
//! lists those not translated and why.
//!
//! ```text
//! // source: TVM v0.16 test_dataflow_pattern.py::test_match_diamond   (where it is from)
//! // pattern: add(nn.relu(nn.conv2d(_, _) as ?c), nn.leaky_relu(?c))  (matched at @main's result)
//! // match:                         (the pattern matches this program's result ...)
//! def @main(...) { ... }
//! // no match:                      (... and not this one's)
//! def @main(...) { ... }
//! ```
//!
//! Instead of `pattern:`, `rule: PATTERN => TEMPLATE` lines (a rule set, in order; `rule once:`
//! for TVM's `rewrite_once`) or `partition: PATTERN` lines (applied in order, each optionally
//! followed by `attrs: KEY=VALUE, ...`) are checked on `// input:` / `// expected:` pairs,
//! compared structurally (sharing included). `IRPASS_BLESS=1 cargo test -p irpass-ir --test
//! patterns` rewrites every expected output with what was produced.

mod support;

use std::path::{Path, PathBuf};

use irpass_ir::pattern::{PartitionOptions, Pattern, Rule, RuleSet, partition};
use irpass_ir::{AttrValue, Attrs, Function, Module};
use support::{assert_same, rewrite_with};

enum Check {
    Match(String),
    NoMatch(String),
    Rewrite { input: String, expected: String },
}

struct Case {
    path: PathBuf,
    patterns: Vec<String>,
    rules: Vec<(String, String, bool)>,
    partitions: Vec<(String, Attrs)>,
    checks: Vec<Check>,
    /// The text up to the first check (kept when blessing).
    head: String,
}

fn section(line: &str) -> Option<&'static str> {
    ["// match:", "// no match:", "// input:", "// expected:"]
        .into_iter()
        .find(|s| line.trim() == *s)
}

fn attrs_of(text: &str) -> Result<Attrs, String> {
    let mut attrs = Attrs::new();
    for part in text.split(',') {
        let (k, v) = part
            .split_once('=')
            .ok_or(format!("`{part}` is not KEY=VALUE"))?;
        let v = v.trim();
        let value = match v.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
            Some(s) => AttrValue::Str(s.to_string()),
            None => AttrValue::Int(v.parse().map_err(|e| format!("`{v}`: {e}"))?),
        };
        attrs.set(k.trim(), value);
    }
    Ok(attrs)
}

fn read_case(path: &Path) -> Result<Case, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let mut case = Case {
        path: path.to_path_buf(),
        patterns: Vec::new(),
        rules: Vec::new(),
        partitions: Vec::new(),
        checks: Vec::new(),
        head: String::new(),
    };
    let mut current: Option<(&str, String)> = None;
    let mut pending_input: Option<String> = None;
    let mut finish = |kind: &str, body: String, case: &mut Case| -> Result<(), String> {
        match kind {
            "// match:" => case.checks.push(Check::Match(body)),
            "// no match:" => case.checks.push(Check::NoMatch(body)),
            "// input:" => pending_input = Some(body),
            "// expected:" => {
                let input = pending_input
                    .take()
                    .ok_or("`// expected:` without an `// input:` before it")?;
                case.checks.push(Check::Rewrite {
                    input,
                    expected: body,
                });
            }
            _ => unreachable!(),
        }
        Ok(())
    };
    for line in text.lines() {
        if let Some(kind) = section(line) {
            if let Some((k, body)) = current.take() {
                finish(k, body, &mut case)?;
            }
            current = Some((kind, String::new()));
            continue;
        }
        if let Some((_, body)) = &mut current {
            body.push_str(line);
            body.push('\n');
            continue;
        }
        case.head.push_str(line);
        case.head.push('\n');
        let l = line.trim_start_matches('/').trim();
        if let Some(p) = l.strip_prefix("pattern:") {
            case.patterns.push(p.trim().to_string());
        } else if let Some(r) = l
            .strip_prefix("rule once:")
            .or_else(|| l.strip_prefix("rule:"))
        {
            let (p, t) = r.split_once("=>").ok_or(format!("`{r}` has no `=>`"))?;
            let once = l.starts_with("rule once:");
            case.rules
                .push((p.trim().to_string(), t.trim().to_string(), once));
        } else if let Some(p) = l.strip_prefix("partition:") {
            case.partitions.push((p.trim().to_string(), Attrs::new()));
        } else if let Some(a) = l.strip_prefix("attrs:") {
            let last = case
                .partitions
                .last_mut()
                .ok_or("`attrs:` before any `partition:`")?;
            last.1 = attrs_of(a)?;
        }
    }
    if let Some((k, body)) = current.take() {
        finish(k, body, &mut case)?;
    }
    if case.checks.is_empty() {
        return Err("no `// match:`, `// no match:` or `// input:` section".into());
    }
    Ok(case)
}

fn main_of(text: &str) -> Result<Function, String> {
    let m = Module::parse(text).map_err(|e| e.render())?;
    m.get("main").cloned().ok_or("no @main".into())
}

/// What the case's rules or partitions make of `input`.
fn transform(case: &Case, input: &str) -> Result<Module, String> {
    let mut main = main_of(input)?;
    if !case.rules.is_empty() {
        let rules = case
            .rules
            .iter()
            .enumerate()
            .map(|(i, (p, t, once))| {
                let r = Rule::template(format!("rule{i}"), p.clone(), t.clone());
                if *once { r.once() } else { r }
            })
            .collect();
        let set = RuleSet::new("case", rules);
        let out = set.apply(&main.code, None).map_err(|e| e.to_string())?;
        main = main.with_code(out);
    }
    for (p, attrs) in &case.partitions {
        let pattern = Pattern::parse(p).map_err(|e| e.to_string())?;
        let options = PartitionOptions {
            attrs: attrs.clone(),
            ..PartitionOptions::default()
        };
        let out = partition(&pattern, &main.code, &options).map_err(|e| e.to_string())?;
        main = main.with_code(out);
    }
    Ok(Module::from_functions([("main", main)]))
}

/// Runs one case; the failures, and the blessed text when blessing.
fn run(case: &Case, bless: bool) -> (Vec<String>, Option<String>) {
    let mut failures = Vec::new();
    let mut blessed = case.head.clone();
    for check in &case.checks {
        match check {
            Check::Match(prog) | Check::NoMatch(prog) => {
                let want = matches!(check, Check::Match(_));
                blessed.push_str(if want {
                    "// match:\n"
                } else {
                    "// no match:\n"
                });
                blessed.push_str(prog);
                let main = match main_of(prog) {
                    Ok(m) => m,
                    Err(e) => {
                        failures.push(format!("the program does not parse: {e}"));
                        continue;
                    }
                };
                for p in &case.patterns {
                    let pattern = match Pattern::parse(p) {
                        Ok(p) => p,
                        Err(e) => {
                            failures.push(format!("the pattern does not parse: {e}"));
                            continue;
                        }
                    };
                    let got = pattern.matches(&main.code, main.code.root);
                    if got != want {
                        failures.push(format!(
                            "`{p}` {} but should {}:\n{prog}",
                            if got { "matches" } else { "does not match" },
                            if want { "" } else { "not" }
                        ));
                    }
                }
            }
            Check::Rewrite { input, expected } => {
                blessed.push_str("// input:\n");
                blessed.push_str(input);
                blessed.push_str("// expected:\n");
                match transform(case, input) {
                    Ok(out) => {
                        let text = out.to_string();
                        if bless {
                            blessed.push_str(&text);
                        } else {
                            blessed.push_str(expected);
                        }
                        let same = Module::parse(expected)
                            .map(|e| {
                                // Printed and read back: the output compares as written.
                                let reread = Module::parse(&text).expect("printed text parses");
                                reread.structurally_equal(&e)
                            })
                            .unwrap_or(false);
                        if !same {
                            failures.push(format!(
                                "the output differs from the expected one:\n--- got\n{text}--- expected\n{expected}"
                            ));
                        }
                    }
                    Err(e) => {
                        blessed.push_str(expected);
                        failures.push(format!("failed: {e}"));
                    }
                }
            }
        }
    }
    (failures, bless.then_some(blessed))
}

fn case_files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/patterns");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/patterns exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "relay"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_pattern_case_holds() {
    let bless = std::env::var_os("IRPASS_BLESS").is_some();
    let mut failures = Vec::new();
    let mut checks = 0;
    for path in case_files() {
        let case = match read_case(&path) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        checks += case.checks.len();
        let (fails, blessed) = run(&case, bless);
        for f in fails {
            failures.push(format!("{}: {f}", case.path.display()));
        }
        if let Some(text) = blessed {
            std::fs::write(&case.path, text).expect("writable case file");
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(checks >= 100, "only {checks} checks ran");
}

/// Every TVM test is translated (a data case names it as its source, or a Rust test below
/// says `TVM: test_...`) or listed in `tests/patterns/README.md` with the reason it is not.
#[test]
fn every_tvm_test_is_translated_or_listed_with_a_reason() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut translated = std::collections::BTreeSet::new();
    let mut texts: Vec<String> = case_files()
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    texts.push(std::fs::read_to_string(dir.join("patterns.rs")).unwrap());
    for text in &texts {
        for line in text.lines() {
            let names = line
                .strip_prefix("// source: TVM v0.16 test_dataflow_pattern.py::")
                .or_else(|| line.trim().strip_prefix("/// TVM: "))
                .or_else(|| line.trim().strip_prefix("// TVM: "));
            if let Some(name) = names {
                translated.insert(name.trim().to_string());
            }
        }
    }
    let readme = std::fs::read_to_string(dir.join("patterns/README.md")).unwrap();
    let listed: Vec<&str> = readme
        .lines()
        .filter_map(|l| l.strip_prefix("- `"))
        .filter_map(|l| l.split('`').next())
        .collect();
    for name in &translated {
        assert!(
            TVM_TESTS.contains(&name.as_str()),
            "`{name}` is not one of TVM's tests"
        );
        assert!(
            !listed.contains(&name.as_str()),
            "`{name}` is translated and listed as not"
        );
    }
    for name in TVM_TESTS {
        assert!(
            translated.contains(*name) || listed.contains(name),
            "`{name}` is neither translated nor listed with a reason"
        );
    }
    assert!(
        translated.len() >= 80,
        "{} TVM tests translated",
        translated.len()
    );
}

// TVM's tests that need Rust code: a `check` callback, a computed replacement, the builders.

fn function(text: &str) -> Function {
    main_of(text).expect("the test's program parses")
}

fn text_of(f: Function) -> String {
    Module::from_functions([("main", f)]).to_string()
}

/// TVM: test_partition_check
#[test]
fn partition_check_refuses_what_the_callback_refuses() {
    use irpass_ir::Node;
    let pattern = Pattern::parse("nn.relu(nn.conv2d(%input, _))").unwrap();
    let nchw = |b: &irpass_ir::Body, m: &irpass_ir::pattern::Match| {
        let Node::CallOp { .. } = b.node(m.root) else {
            return false;
        };
        let conv = b.op_call(m.root).unwrap().1[0];
        let (op, _, attrs) = b.op_call(conv).unwrap();
        op.attr_value(attrs, "data_layout") == Some(AttrValue::Str("NCHW".into()))
    };
    let options = PartitionOptions {
        check: Some(&nchw),
        ..PartitionOptions::default()
    };
    let f = function("def @main(%input, %weight) { nn.relu(nn.conv2d(%input, %weight)) }");
    let out = partition(&pattern, &f.code, &options).unwrap();
    let got = Module::from_functions([("main", f.with_code(out))]);
    let want = Module::parse(
        r#"def @main(%input, %weight) {
  %0 = fn (%i, %w, PartitionedFromPattern="nn.conv2d_nn.relu_") { nn.relu(nn.conv2d(%i, %w)) };
  %0(%input, %weight)
}"#,
    )
    .unwrap();
    assert!(got.structurally_equal(&want), "{got}");
    let nhwc = function(
        r#"def @main(%input, %weight) { nn.relu(nn.conv2d(%input, %weight, data_layout="NHWC")) }"#,
    );
    assert!(partition(&pattern, &nhwc.code, &options).unwrap().is_none());
}

/// TVM: test_partition_check_types
#[test]
fn partition_check_reads_the_types_it_is_given() {
    let pattern = Pattern::parse("nn.relu(nn.conv2d(_, _))").unwrap();
    let run = |text: &str| {
        let m = Module::parse(text).unwrap();
        m.infer_types().unwrap();
        let f = m.get("main").unwrap().clone();
        let types = m.types_of("main").unwrap().unwrap();
        let batch_one = |b: &irpass_ir::Body, m: &irpass_ir::pattern::Match| {
            let conv = b.op_call(m.root).unwrap().1[0];
            let (op, _, attrs) = b.op_call(conv).unwrap();
            let nchw = op.attr_value(attrs, "data_layout") == Some(AttrValue::Str("NCHW".into()));
            let irpass_ir::Type::Tensor(t) = types.of(conv) else {
                return false;
            };
            nchw && t.shape[0] == irpass_ir::Dim::Static(1)
        };
        let options = PartitionOptions {
            check: Some(&batch_one),
            types: Some(&types),
            ..PartitionOptions::default()
        };
        partition(&pattern, &f.code, &options)
            .unwrap()
            .map(|out| text_of(f.with_code(Some(out))))
    };
    let out = run("def @main(%input: Tensor[(1, 10, 10, 10), float32], %weight: Tensor[(10, 10, 3, 3), float32]) { nn.relu(nn.conv2d(%input, %weight)) }")
        .expect("partitioned");
    assert!(
        out.contains(r#"PartitionedFromPattern="nn.conv2d_nn.relu_""#),
        "{out}"
    );
    // The parameters carry their arguments' types.
    assert!(out.contains("Tensor[(1, 10, 10, 10), float32]"), "{out}");
    assert!(run(r#"def @main(%input: Tensor[(1, 10, 10, 10), float32], %weight: Tensor[(3, 3, 10, 10), float32]) { nn.relu(nn.conv2d(%input, %weight, data_layout="NHWC", kernel_layout="HWIO")) }"#).is_none());
    assert!(run("def @main(%input: Tensor[(2, 10, 10, 10), float32], %weight: Tensor[(10, 10, 3, 3), float32]) { nn.relu(nn.conv2d(%input, %weight)) }").is_none());
}

/// The rule of TVM's `test_rewrite_once`: a concatenation loses its last operand.
fn drop_last_operand(once: bool) -> Rule {
    let r = Rule::compute("drop_last", "concatenate(?t)", |cx, m| {
        let irpass_ir::Node::Tuple(fields) = cx.body().node(m["t"]) else {
            return None;
        };
        let fields = cx.body().list(*fields).to_vec();
        match fields.len() {
            0 => None,
            1 => Some(fields[0]),
            n => {
                let t = cx.builder.tuple(&fields[..n - 1]);
                cx.call(
                    "concatenate",
                    &[t],
                    Attrs::from_pairs([("axis", AttrValue::Int(0))]),
                )
            }
        }
    });
    if once { r.once() } else { r }
}

fn relu_after_softmax(once: bool) -> Rule {
    let r = Rule::compute("relu_after_softmax", "nn.softmax(..) as ?s", |cx, m| {
        cx.call("nn.relu", &[m["s"]], Attrs::new())
    });
    if once { r.once() } else { r }
}

/// TVM: test_rewrite_once
#[test]
fn a_rule_applied_once_fires_in_the_first_round_only() {
    let concat = "def @main(%x, %y, %z) { concatenate((%x, %y, %z), axis=0) }";
    assert_same(
        &rewrite_with(vec![drop_last_operand(false)], concat),
        "def @main(%x, %y, %z) { %x }",
    );
    assert_same(
        &rewrite_with(vec![drop_last_operand(true)], concat),
        "def @main(%x, %y, %z) { concatenate((%x, %y), axis=0) }",
    );
    let softmax = "def @main(%x, %y, %z) { nn.softmax(concatenate((%x, %y, %z), axis=0)) }";
    assert_same(
        &rewrite_with(
            vec![relu_after_softmax(true), drop_last_operand(true)],
            softmax,
        ),
        "def @main(%x, %y, %z) { nn.relu(nn.softmax(concatenate((%x, %y), axis=0))) }",
    );
    assert_same(
        &rewrite_with(
            vec![relu_after_softmax(true), drop_last_operand(false)],
            softmax,
        ),
        "def @main(%x, %y, %z) { nn.relu(nn.softmax(%x)) }",
    );
}

/// A rule set whose rules undo each other is an error that names them.
#[test]
fn rules_that_never_converge_are_named() {
    let f = function("def @main(%x, %y) { exp(add(%x, %y)) }");
    // Round after round: each round's replacement holds a new match.
    let grow = vec![Rule::template("grow", "exp(?x)", "log(exp(?x))")];
    let e = RuleSet::new("grow", grow).apply(&f.code, None).unwrap_err();
    assert!(
        e.message.contains("rule set `grow` does not converge: after 100 rounds these rules still fire: `grow` (1 times)"),
        "{e}"
    );
    // At one node: the replacement matches again, forever.
    let swap = vec![Rule::template("swap", "add(?a, ?b)", "add(?b, ?a)")];
    let e = RuleSet::new("swap", swap).apply(&f.code, None).unwrap_err();
    assert!(
        e.message.contains("`swap`") && e.message.contains("in a row at one node"),
        "{e}"
    );
}

/// An operator name no operator has is an error when the rule set is first used, with the
/// closest names; so is a hole the replacement uses and the pattern does not bind.
#[test]
fn a_rule_set_reports_unknown_operators_and_unbound_holes() {
    let f = function("def @main(%x) { exp(%x) }");
    let set = RuleSet::new("typo", vec![Rule::template("r", "nn.rleu(?x)", "?x")]);
    let e = set.apply(&f.code, None).unwrap_err();
    assert!(e.message.contains("unknown operator `nn.rleu`"), "{e}");
    assert!(e.message.contains("nn.relu"), "{e}");
    let set = RuleSet::new("unbound", vec![Rule::template("r", "exp(?x)", "log(?y)")]);
    let e = set.apply(&f.code, None).unwrap_err();
    assert!(
        e.to_string().contains("`?y` is not bound by the pattern"),
        "{e}"
    );
    assert_eq!(e.range(), Some(4..6));
}

/// TVM's pattern construction tests: each builder makes the node it is named after, and the
/// text makes the same.
#[test]
fn the_builders_make_the_nodes_they_are_named_after() {
    use irpass_ir::pattern::{
        PatternKind as K, dominates, is_constant, is_function, is_if, is_let, is_literal, is_op,
        is_tuple, is_tuple_get_item, is_var, wildcard,
    };
    use irpass_ir::{DType, Tensor, Type};
    // TVM: test_expr_pattern
    assert!(matches!(
        is_literal(Tensor::scalar(DType::Float32, 1.0)).kind(),
        K::Literal(_)
    ));
    // TVM: test_var_pattern
    assert!(matches!(is_var(Some("x")).kind(), K::Var(Some(n)) if &**n == "x"));
    // TVM: test_constant_pattern
    assert!(matches!(is_constant().kind(), K::Constant));
    // TVM: test_wildcard_pattern
    assert!(matches!(wildcard().kind(), K::Wildcard));
    // TVM: test_CallPattern
    let c = is_op("add").call([wildcard(), wildcard()]);
    assert!(
        matches!(c.kind(), K::Call { args: Some(a), .. } if a.len() == 2
        && a.iter().all(|p| matches!(p.kind(), K::Wildcard)))
    );
    // TVM: test_FunctionPattern
    let (w1, w2) = (wildcard(), wildcard());
    let f = is_function(
        Some(vec![w1.clone(), w2.clone()]),
        &is_op("add").call([w1, w2]),
    );
    assert!(
        matches!(f.kind(), K::Function(Some(ps), body) if ps.len() == 2 && matches!(body.kind(), K::Call { .. }))
    );
    // TVM: test_TuplePattern
    let t = is_tuple(Some(vec![wildcard(), wildcard()]));
    assert!(matches!(t.kind(), K::Tuple(Some(fs)) if fs.len() == 2));
    // TVM: test_TupleGetItemPattern
    assert!(
        matches!(is_tuple_get_item(&t, Some(1)).kind(), K::Proj(inner, Some(1)) if matches!(inner.kind(), K::Tuple(_)))
    );
    // TVM: test_AltPattern
    assert!(matches!(
        is_op("add").or(&is_op("subtract")).kind(),
        K::Alt(..)
    ));
    // TVM: test_TypePattern
    let ty = Type::Tensor(std::sync::Arc::new(irpass_ir::TensorType::new(
        &[10, 10],
        DType::Float32,
    )));
    assert!(matches!(wildcard().has_type(ty.clone()).kind(), K::HasType(_, t) if *t == ty));
    // TVM: test_DataTypePattern
    assert!(matches!(
        wildcard().has_dtype(DType::Float16).kind(),
        K::HasDtype(_, DType::Float16)
    ));
    // TVM: test_ShapePattern
    assert!(matches!(wildcard().has_shape(&[10, 10]).kind(), K::HasShape(_, s) if s.len() == 2));
    // TVM: test_AttrPattern
    let a = is_op("add").has_attrs([("TOpPattern", AttrValue::Int(0))]);
    assert!(
        matches!(a.kind(), K::HasAttrs(_, attrs) if attrs.get("TOpPattern") == Some(&AttrValue::Int(0)))
    );
    // TVM: test_IfPattern
    let (x, y) = (is_var(Some("x")), is_var(Some("y")));
    let i = is_if(&is_op("less").call([x.clone(), y.clone()]), &x, &y);
    assert!(
        matches!(i.kind(), K::If(c, t, e) if matches!(c.kind(), K::Call { .. })
        && matches!(t.kind(), K::Var(_)) && matches!(e.kind(), K::Var(_)))
    );
    // TVM: test_LetPattern
    let v = is_var(Some("let"));
    let l = is_let(&v, &is_op("less").call([x, y]), &v);
    assert!(
        matches!(l.kind(), K::Let(var, value, body) if matches!(var.kind(), K::Var(_))
        && matches!(value.kind(), K::Call { .. }) && matches!(body.kind(), K::Var(_)))
    );
    // The dominator pattern, built and matched.
    let d = dominates(
        &is_op("nn.conv2d").call([wildcard(), wildcard()]),
        &is_op("nn.relu").call([wildcard()]),
        &is_op("add").call([wildcard(), wildcard()]),
    );
    let f = function("def @main(%x, %w) { %0 = nn.conv2d(%x, %w); add(nn.relu(%0), %0) }");
    assert!(d.matches(&f.code, f.code.root));
}

/// Every test of TVM's `test_dataflow_pattern.py` (v0.16.0).
const TVM_TESTS: &[&str] = &[
    "test_expr_pattern",
    "test_var_pattern",
    "test_constant_pattern",
    "test_wildcard_pattern",
    "test_CallPattern",
    "test_FunctionPattern",
    "test_TuplePattern",
    "test_TupleGetItemPattern",
    "test_AltPattern",
    "test_TypePattern",
    "test_DataTypePattern",
    "test_ShapePattern",
    "test_AttrPattern",
    "test_IfPattern",
    "test_LetPattern",
    "test_match_op",
    "test_no_match_op",
    "test_match_op_or",
    "test_match_call_commutive",
    "test_no_match_call_commutive",
    "test_match_call",
    "test_no_match_call",
    "test_match_func",
    "test_no_match_func",
    "test_match_if",
    "test_no_match_if",
    "test_match_let",
    "test_no_match_let",
    "test_match_option",
    "test_no_match_option",
    "test_match_const",
    "test_match_tuple",
    "test_no_match_tuple",
    "test_match_type",
    "test_no_match_type",
    "test_match_dtype",
    "test_no_match_dtype",
    "test_match_shape",
    "test_no_match_shape",
    "test_match_op_attr",
    "test_no_match_op_attr",
    "test_match_func_attr",
    "test_no_match_func_attr",
    "test_match_call_attr",
    "test_no_match_call_attr",
    "test_match_call_attr_dtype",
    "test_match_diamond",
    "test_no_match_diamond",
    "test_match_fake_diamond",
    "test_at_most_one_parent",
    "test_match_dominator",
    "test_not_match_dominator",
    "test_not_match_dominator2",
    "test_match_typed_dominator",
    "test_no_match_typed_dominator",
    "test_rewrite",
    "test_rewrite_func",
    "test_rewrite_func_with_attr",
    "test_nested_rewrite",
    "test_not_fuse_multi_diamond",
    "test_fuse_batchnorm",
    "test_no_fuse_batchnorm",
    "test_fuse_double_batchnorm",
    "test_partial_fuse_double_batchnorm",
    "test_fuse_batchnorm_commutation",
    "test_quadruple_rewrite_dominator",
    "test_algebraic_simplify",
    "test_double_partition",
    "test_partition_dominator",
    "test_quadruple_partition_dominator",
    "test_partition_batchnorm",
    "test_partition_double_batchnorm",
    "test_overlappting_partitions",
    "test_partition_overused",
    "test_partition_fuzzy_tuple",
    "test_partition_fuzzy_function_args",
    "test_partition_check",
    "test_partition_check_types",
    "test_partition_option",
    "test_partition_function",
    "test_partition_optional_function",
    "test_rewrite_function_with_fuzzy_body",
    "test_partition_function_with_fuzzy_body",
    "test_match_match",
    "test_partition_constant_embedding",
    "test_rewrite_once",
    "test_matched_outside_but_dominated",
    "test_partition_parallel_branch_with_same_input",
    "test_rewrite_with_pattern_recursion",
];

/// `could_fire` says whether some node is one a rule starts at: `apply` changes nothing
/// when it does not.
#[test]
fn could_fire_tells_whether_any_node_can_start_a_rule() {
    let set = RuleSet::new(
        "exp_log",
        vec![Rule::template("exp_log", "exp(log(?x))", "?x")],
    );
    let none = function("def @main(%x: float32) { add(log(%x), %x) }");
    assert!(!set.could_fire(&none.code).unwrap());
    assert!(set.apply(&none.code, None).unwrap().is_none());
    // An `exp` is where the rule starts, whether or not the rest matches.
    let start = function("def @main(%x: float32) { exp(%x) }");
    assert!(set.could_fire(&start.code).unwrap());
    assert!(set.apply(&start.code, None).unwrap().is_none());
    // A rule set that does not compile says so.
    let typo = RuleSet::new("typo", vec![Rule::template("r", "nn.rleu(?x)", "?x")]);
    assert!(typo.could_fire(&start.code).is_err());
}
