//! The representation and its rewriter: bodies operands first on every model, the rewriter's rules, and input nested far
//! deeper than any stack.

use std::path::PathBuf;

use irpass_ir::body::*;
use irpass_ir::rewrite::*;
use irpass_ir::structural::{structural_hash, structurally_equal};
use irpass_ir::text::function_text;
use irpass_ir::{Attrs, DType, Module, Op, Tensor};

fn models() -> Vec<(PathBuf, Module)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/models");
    let mut out: Vec<(PathBuf, Module)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "relay"))
        .map(|p| {
            let m = Module::parse(&std::fs::read_to_string(&p).unwrap()).unwrap();
            (p, m)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() >= 5);
    out
}

fn arena(text: &str) -> (Module, ArenaFunction) {
    let m = Module::parse(text).unwrap();
    let a = m.get("main").unwrap().code.clone();
    (m, a)
}

/// The body's text: the lines inside `def @main(...) { ... }`, unindented.
fn body_text(a: &ArenaFunction) -> String {
    let text = function_text("main", a, None, &Attrs::new());
    let lines: Vec<&str> = text.lines().collect();
    lines[1..lines.len() - 1]
        .iter()
        .map(|l| l.strip_prefix("  ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

fn back(_m: &Module, r: ArenaFunction) -> String {
    body_text(&r)
}

fn operands_first(body: &Body) -> bool {
    body.ids().all(|id| {
        let mut ok = true;
        body.for_each_operand(id, |o| ok &= o < id);
        ok
    })
}

struct Nothing;
impl Rewrite for Nothing {}

#[test]
fn every_model_parses_into_bodies_operands_first_and_the_same_each_time() {
    for (path, m) in models() {
        let again = Module::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for (name, f) in m.iter() {
            assert!(operands_first(&f.code.body), "{}: @{name}", path.display());
            assert_eq!(again.get(name).unwrap().code.body, f.code.body);
        }
    }
}

#[test]
fn a_rewrite_that_changes_nothing_says_so_on_every_model() {
    for (path, m) in models() {
        for (name, f) in m.iter() {
            let a = &f.code;
            assert!(
                a.rewrite(&mut Nothing).is_none(),
                "{}: @{name}",
                path.display()
            );
        }
    }
}

/// Replaces `exp` by `log`, counting the nodes it sees.
struct ExpToLog {
    seen_exp: usize,
}
impl Rewrite for ExpToLog {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, _old: OldId, id: ExprId) -> Option<ExprId> {
        let (op, args, attrs) = cx.new.body().op_call(id)?;
        if op.name() != "exp" {
            return None;
        }
        self.seen_exp += 1;
        let (args, attrs) = (args.to_vec(), attrs.clone());
        Some(cx.new.call_op(Op::get("log").unwrap(), &args, attrs))
    }
}

#[test]
fn a_shared_node_is_rewritten_once_and_stays_shared() {
    let (m, a) = arena("def @main(%x: float32) { %0 = exp(%x); add(%0, %0) }");
    let mut r = ExpToLog { seen_exp: 0 };
    let out = a.rewrite(&mut r).unwrap();
    assert_eq!(r.seen_exp, 1);
    assert!(operands_first(&out.body));
    let live = out.body.reachable(out.root);
    assert_eq!(live.iter().filter(|&&l| l).count(), 3, "%x, log, add");
    assert_eq!(back(&m, out), "%0 = log(%x);\nadd(%0, %0)");
}

/// Drops `add(x, 0f)` by reading the old body: its operands as old ids, `x`'s new id through
/// the rewrite's table.
struct AddZeroFromOld;
impl Rewrite for AddZeroFromOld {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, old: OldId, _new: ExprId) -> Option<ExprId> {
        let (args, _) = cx.old.call_of(old, "add")?;
        let [x, zero] = args.array()?;
        assert_eq!(args.ids(), [x.id(), zero.id()]);
        assert_eq!(args.iter().collect::<Vec<_>>(), [x, zero]);
        (cx.old.scalar(zero)? == 0.0).then(|| cx.new_id(x).expect("operands come first"))
    }
}

#[test]
fn a_hook_reads_the_old_body_with_old_ids() {
    let (m, a) = arena("def @main(%x: float32) { exp(add(exp(%x), 0f)) }");
    let out = a.rewrite(&mut AddZeroFromOld).unwrap();
    assert_eq!(back(&m, out), "%0 = exp(%x);\nexp(%0)");
    // An operand field of an old node becomes an old id through the old body.
    let old = OldBody::of(&a.body);
    let Node::CallOp { args, .. } = old.node(old.at(a.root)) else {
        panic!("the root is a call")
    };
    let inner = old.list(*args).get(0).unwrap();
    assert_eq!(old.op_call(inner).unwrap().0.name(), "add");
    assert!(old.list(*args).get(1).is_none());
}

#[test]
#[should_panic(expected = "is not a node of the body being rewritten")]
fn an_id_beyond_the_old_body_is_refused() {
    let (_, a) = arena("def @main(%x: float32) { exp(%x) }");
    OldBody::of(&a.body).at(ExprId::new(a.body.len()));
}

#[test]
fn dead_nodes_are_not_copied_and_spans_are_kept() {
    let (m, a) = arena("def @main(%x: float32) {\n  let %unused = exp(%x);\n  exp(%x)\n}");
    let out = a.rewrite(&mut ExpToLog { seen_exp: 0 }).unwrap();
    assert_eq!(back(&m, out), "let %unused = log(%x);\nlog(%x)");
    /// Drops every binding.
    struct DropAll;
    impl Rewrite for DropAll {
        fn keep_binding(&mut self, _: OldBody<'_>, _: VarId, _: OldId) -> bool {
            false
        }
    }
    let out = a.rewrite(&mut DropAll).unwrap();
    assert_eq!(
        out.body.len(),
        2,
        "%x and exp: the dropped value is never copied"
    );
    let root_span = out.body.span(out.root).expect("span kept");
    assert_eq!(
        &m.source().unwrap().text[root_span.range()],
        "exp(%x)",
        "the rebuilt node keeps the span of the node it came from"
    );
}

/// Inlines bindings whose value is a constant or a variable.
struct InlineTrivial;
impl Rewrite for InlineTrivial {
    fn visit_let(&mut self, cx: &mut RewriteCx<'_>, _: VarId, value: ExprId) -> LetAction {
        match cx.new.body().node(value) {
            Node::Constant(_) | Node::Var(_) => LetAction::Inline,
            _ => LetAction::Keep,
        }
    }
}

#[test]
fn an_inlined_binding_turns_every_use_into_its_value_in_scope() {
    let (m, a) = arena(
        "def @main(%x: float32) { let %c = 2f; let %y = %x; let %z = add(%y, %c); multiply(%z, %c) }",
    );
    let out = a.rewrite(&mut InlineTrivial).unwrap();
    assert_eq!(back(&m, out), "let %z = add(%x, 2f);\nmultiply(%z, 2f)");
}

#[test]
fn a_variable_used_in_its_own_value_is_never_inlined() {
    // A recursive closure mentions its own variable: inlining it would leave that use unbound.
    struct InlineAll;
    impl Rewrite for InlineAll {
        fn visit_let(&mut self, _: &mut RewriteCx<'_>, _: VarId, _: ExprId) -> LetAction {
            LetAction::Inline
        }
    }
    let text = "def @main(%x: int32) {
  let %f = fn (%n: int32) -> int32 { if (less(%n, 1)) { %n } else { %f(subtract(%n, 1)) } };
  %f(%x)
}";
    let (m, a) = arena(text);
    let out = a.rewrite(&mut InlineAll);
    let f = m.get("main").unwrap().with_code(out);
    assert!(
        body_text(&f.code).starts_with("let %f = fn"),
        "{}",
        body_text(&f.code)
    );
    Module::from_functions([("main", f)])
        .check_well_formed()
        .unwrap();
}

#[test]
fn fixpoint_reruns_until_nothing_changes_and_stops_at_its_limit() {
    // Each round turns the first `negative(negative(e))` it meets into `e`.
    struct OnePair {
        done: bool,
    }
    impl Rewrite for OnePair {
        fn rewrite(&mut self, cx: &mut RewriteCx<'_>, _old: OldId, id: ExprId) -> Option<ExprId> {
            let body = cx.new.body();
            let inner = match body.op_call(id) {
                Some((op, args, _)) if !self.done && op.name() == "negative" => args[0],
                _ => return None,
            };
            match body.op_call(inner) {
                Some((op, args, _)) if op.name() == "negative" => {
                    self.done = true;
                    Some(args[0])
                }
                _ => None,
            }
        }
    }
    let text = "def @main(%x: float32) { negative(negative(negative(negative(negative(%x))))) }";
    let (m, a) = arena(text);
    let mut rounds = 0;
    let out = a
        .fixpoint(10, || {
            rounds += 1;
            OnePair { done: false }
        })
        .unwrap();
    assert_eq!(back(&m, out), "negative(%x)");
    assert_eq!(rounds, 3, "two rounds change, the third finds nothing");
    let mut rounds = 0;
    let out = a
        .fixpoint(1, || {
            rounds += 1;
            OnePair { done: false }
        })
        .unwrap();
    assert_eq!(rounds, 1);
    assert_eq!(
        back(&m, out),
        "%0 = negative(%x);\n%1 = negative(%0);\nnegative(%1)"
    );
}

/// One level of nesting around an expression.
type Wrap = dyn Fn(&mut BodyBuilder, ExprId) -> ExprId;

/// A chain `depth` levels deep of `wrap` around a variable, built with the builder.
fn deep(depth: usize, wrap: impl Fn(&mut BodyBuilder, ExprId) -> ExprId) -> ArenaFunction {
    let mut b = BodyBuilder::with_capacity(depth + 1);
    let x = b.var("x", None, None);
    let mut e = b.use_var(x);
    for _ in 0..depth {
        e = wrap(&mut b, e);
    }
    ArenaFunction {
        body: b.finish(),
        params: vec![x],
        root: e,
    }
}

/// Replaces the parameter's use by a constant: a change at the bottom of the whole chain.
struct LeafToConstant;
impl Rewrite for LeafToConstant {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, _old: OldId, id: ExprId) -> Option<ExprId> {
        matches!(cx.new.body().node(id), Node::Var(_))
            .then(|| cx.new.constant(Tensor::scalar(DType::Float32, 1.0).into()))
    }
}

#[test]
fn input_nested_a_million_deep_is_built_walked_rewritten_and_dropped_without_recursion() {
    // The test thread's stack is 2 MiB: a recursion a million levels deep would overflow it.
    const DEPTH: usize = 1_000_000;
    let shapes: [(&str, Box<Wrap>); 3] = [
        ("tuple", Box::new(|b, e| b.tuple(&[e]))),
        (
            "if",
            Box::new(|b, e| {
                let c = b.constant(Tensor::scalar(DType::Bool, 1.0).into());
                b.if_(c, e, e)
            }),
        ),
        (
            "closure",
            Box::new(|b, e| {
                b.closure(ClosureData {
                    params: vec![],
                    ret_type: None,
                    attrs: Attrs::new(),
                    body: e,
                })
            }),
        ),
    ];
    for (what, wrap) in shapes {
        let a = deep(DEPTH, wrap);
        assert!(operands_first(&a.body), "{what}");
        assert!(a.body.reachable(a.root).iter().all(|&l| l), "{what}");
        let uses = a.body.use_counts(a.root);
        assert!(uses[a.root.index()] == 0, "{what}");
        let out = a.rewrite(&mut LeafToConstant).unwrap();
        let live = out.body.reachable(out.root);
        let live_ids = || out.body.ids().filter(|id| live[id.index()]);
        assert_eq!(
            live_ids().count(),
            a.body.len(),
            "{what}: one node for one node"
        );
        assert!(
            live_ids().all(|id| !matches!(out.body.node(id), Node::Var(_))),
            "{what}: the leaf was replaced"
        );
        assert!(out.rewrite(&mut Nothing).is_none());
        drop(out);
        drop(a);
    }
}

#[test]
fn a_block_of_a_hundred_thousand_bindings_inlines_in_one_sweep() {
    // let %v1 = %x; let %v2 = %v1; ... %vN: every binding inlined, the result is %x.
    const N: usize = 100_000;
    let mut b = BodyBuilder::new();
    let x = b.var("x", None, None);
    let mut prev = b.use_var(x);
    let mut bindings = Vec::with_capacity(N);
    for i in 0..N {
        let v = b.var(&format!("v{i}"), None, None);
        bindings.push((v, prev));
        prev = b.use_var(v);
    }
    let root = b.lets(&bindings, prev);
    let body = b.finish();
    let code = ArenaFunction {
        body,
        params: vec![x],
        root,
    };
    let out = code.rewrite(&mut InlineTrivial).unwrap();
    assert_eq!(out.body.len(), 1);
    assert_eq!(out.body.node(out.root), &Node::Var(out.params[0]));
}

#[test]
fn a_node_fits_in_16_bytes() {
    assert!(size_of::<Node>() <= 16, "{} bytes", size_of::<Node>());
}

#[test]
#[should_panic(expected = "is not a node of this body")]
fn the_builder_refuses_an_operand_it_has_not_built() {
    let mut big = BodyBuilder::new();
    let x = big.var("x", None, None);
    let xe = big.use_var(x);
    let t = big.tuple(&[xe]);
    let mut small = BodyBuilder::new();
    small.tuple(&[t]);
}

#[test]
fn scopes_sharing_and_closures_print_as_text_that_reads_back_the_same() {
    let texts = [
        // A node shared by both branches is bound in each branch's scope.
        "def @main(%c: bool, %x: float32) { %0 = exp(%x); if (%c) { add(%0, %0) } else { multiply(%0, %0) } }",
        // A node shared before the `if` is bound once, outside.
        "def @main(%c: bool, %x: float32) { %0 = exp(%x); %1 = add(%0, 1f); if (%c) { %1 } else { negative(%1) } }",
        // Closures, calls of closures and of globals, tuples, projections, a block as operand.
        "def @f(%a: float32) -> float32 { %a }
         def @main(%x: float32) {
           let %g = fn (%y: float32, Primitive=1) -> float32 { %0 = (%y, %x); %0.1 };
           %1 = %g(%x);
           %2 = @f(%1);
           (%2,)
         }",
        // Names that clash, names of digits, a recursive closure.
        "def @main(%x: int32, %x1: int32) {
           let %x2 = add(%x, %x1);
           let %f = fn (%n: int32) -> int32 { if (less(%n, 1)) { %n } else { %f(subtract(%n, 1)) } };
           %f(%x2)
         }",
    ];
    for text in texts {
        let m = Module::parse(text).unwrap_or_else(|e| panic!("{e}"));
        let printed = m.to_string();
        let again = Module::parse(&printed).unwrap();
        assert_eq!(again.to_string(), printed, "{text}");
        assert!(again.structurally_equal(&Module::parse(&again.to_string()).unwrap()));
    }
}

#[test]
fn the_arena_printer_prints_input_nested_a_million_deep_on_a_test_stack() {
    // Tuples a million deep: each level one binding line, so the text is linear in depth.
    const DEPTH: usize = 1_000_000;
    let a = deep(DEPTH, |b, e| b.tuple(&[e]));
    let text = function_text("main", &a, None, &Attrs::new());
    assert_eq!(text.matches(",);").count(), DEPTH - 1);
    assert!(text.len() < 30 * DEPTH, "{} bytes", text.len());
    // `if`s nested in their branches: each level indents two more up to 64 levels, then no
    // more, so the text stays linear in depth too.
    const IFS: usize = 100_000;
    let a = deep(IFS, |b, e| {
        let c = b.constant(Tensor::scalar(DType::Bool, 1.0).into());
        let one = b.constant(Tensor::scalar(DType::Float32, 1.0).into());
        b.if_(c, e, one)
    });
    let text = function_text("main", &a, None, &Attrs::new());
    assert_eq!(text.matches("if (True)").count(), IFS);
    // A few lines of at most ~140 columns a level.
    assert!(text.len() < 1_000 * IFS, "{} bytes", text.len());
    let widest = text.lines().map(|l| l.len() - l.trim_start().len()).max();
    assert_eq!(widest, Some(128), "64 levels of two spaces, no more");
}

#[test]
fn structural_equality_holds_across_parses_and_renaming_and_sees_sharing() {
    for (path, m) in models() {
        let again = Module::parse(&m.to_string()).unwrap();
        for (name, f) in m.iter() {
            let a = &f.code;
            let b = &again.get(name).unwrap().code;
            assert!(structurally_equal(a, b), "{}: @{name}", path.display());
            assert_eq!(
                structural_hash(a),
                structural_hash(b),
                "{}: @{name}",
                path.display()
            );
        }
    }
    let main = |text: &str| arena(text).1;
    let base = main("def @main(%x: float32) { let %y = exp(%x); %0 = add(%y, %y); (%0, %0) }");
    let renamed = main("def @main(%a: float32) { let %b = exp(%a); %0 = add(%b, %b); (%0, %0) }");
    assert!(structurally_equal(&base, &renamed));
    assert_eq!(structural_hash(&base), structural_hash(&renamed));
    for different in [
        // The same computation twice instead of shared.
        "def @main(%x: float32) { let %y = exp(%x); (add(%y, %y), add(%y, %y)) }",
        // Another constant, operator, attribute, projection or annotation.
        "def @main(%x: float32) { let %y = exp(%x); %0 = add(%y, 1f); (%0, %0) }",
        "def @main(%x: float32) { let %y = exp(%x); %0 = multiply(%y, %y); (%0, %0) }",
        "def @main(%x: float32) { let %y = log(%x); %0 = add(%y, %y); (%0, %0) }",
        "def @main(%x: float64) { let %y = exp(%x); %0 = add(%y, %y); (%0, %0) }",
        // The two operands swapped between a parameter and the binding.
        "def @main(%x: float32) { let %y = exp(%x); %0 = add(%x, %y); (%0, %0) }",
    ] {
        let other = main(different);
        assert!(!structurally_equal(&base, &other), "{different}");
        assert!(!structurally_equal(&other, &base), "{different}");
        assert_ne!(
            structural_hash(&base),
            structural_hash(&other),
            "{different}"
        );
    }
    // Projections of another field, closures with another parameter use.
    let pairs = [
        (
            "def @main(%x: float32) { %0 = (%x, exp(%x)); %0.0 }",
            "def @main(%x: float32) { %0 = (%x, exp(%x)); %0.1 }",
        ),
        (
            "def @main(%x: float32) { let %f = fn (%a: float32, %b: float32) { %a }; %f(%x, %x) }",
            "def @main(%x: float32) { let %f = fn (%a: float32, %b: float32) { %b }; %f(%x, %x) }",
        ),
    ];
    for (p, q) in pairs {
        assert!(!structurally_equal(&main(p), &main(q)), "{p} / {q}");
        assert_ne!(
            structural_hash(&main(p)),
            structural_hash(&main(q)),
            "{p} / {q}"
        );
    }
}

/// Replaces calls of one operator by calls of another with the same operands and attributes.
struct OpSwap(&'static str, &'static str);
impl Rewrite for OpSwap {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, _old: OldId, id: ExprId) -> Option<ExprId> {
        let (op, args, attrs) = cx.new.body().op_call(id)?;
        if op.name() != self.0 {
            return None;
        }
        let (args, attrs) = (args.to_vec(), attrs.clone());
        Some(cx.new.call_op(Op::get(self.1).unwrap(), &args, attrs))
    }
}

#[test]
fn a_rewritten_function_is_unequal_to_its_input_exactly_when_the_rewrite_changed_it() {
    let mut changed = 0;
    for (path, m) in models() {
        for (name, f) in m.iter() {
            let a = &f.code;
            let out = a.rewrite(&mut OpSwap("add", "subtract"));
            let has_add = a.body.ids().any(|id| {
                a.body
                    .op_call(id)
                    .is_some_and(|(op, ..)| op.name() == "add")
            });
            assert_eq!(out.is_some(), has_add, "{}: @{name}", path.display());
            if let Some(out) = out {
                let b = out;
                assert!(!structurally_equal(a, &b), "{}: @{name}", path.display());
                // Swapping back gives the input again.
                let back = b.rewrite(&mut OpSwap("subtract", "add"));
                let back = back.map_or(b, ArenaFunction::from);
                let original_has_subtract = a.body.ids().any(|id| {
                    a.body
                        .op_call(id)
                        .is_some_and(|(op, ..)| op.name() == "subtract")
                });
                if !original_has_subtract {
                    assert!(structurally_equal(a, &back), "{}: @{name}", path.display());
                    assert_eq!(structural_hash(a), structural_hash(&back));
                }
                changed += 1;
            }
        }
    }
    assert!(changed > 0, "some model adds");
}

#[test]
fn structural_equality_and_hash_walk_a_million_deep_without_recursion() {
    const DEPTH: usize = 1_000_000;
    let a = deep(DEPTH, |b, e| b.tuple(&[e]));
    let b = deep(DEPTH, |b, e| b.tuple(&[e]));
    assert!(structurally_equal(&a, &b));
    assert_eq!(structural_hash(&a), structural_hash(&b));
    let c = deep(DEPTH - 1, |b, e| b.tuple(&[e]));
    assert!(!structurally_equal(&a, &c));
}
