//! The pass library's analyses: types computed once per function state over `-O3` on every
//! model, never stale after a change; the call graph and use counts as the IR says.

mod support;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use irpass::analysis::AnalysisEvent;
use irpass::instrument::PassInstrument;
use irpass::{Pass, PassContext};
use irpass_passes as _;
use irpass_passes::analyses::{CallGraph, PostDominatorTree, PostDominators, Types, UseCounts};
use irpass_passes::ir::body::ExprId;
use irpass_passes::ir::random;
use irpass_passes::ir::{Function, Module};
use proptest::prelude::*;
use support::{MODELS, model, parse};

/// Counts the `Types` analysis's computations and cache hits.
#[derive(Default)]
struct CountTypes {
    computed: AtomicUsize,
    hits: AtomicUsize,
}

impl PassInstrument for CountTypes {
    fn name(&self) -> &str {
        "CountTypes"
    }
    fn on_analysis(&self, event: &AnalysisEvent<'_>) -> irpass::Result<()> {
        match event {
            AnalysisEvent::Computed {
                analysis: "Types", ..
            } => self.computed.fetch_add(1, Ordering::SeqCst),
            AnalysisEvent::CacheHit {
                analysis: "Types", ..
            } => self.hits.fetch_add(1, Ordering::SeqCst),
            _ => 0,
        };
        Ok(())
    }
}

/// The passes of `pass`, Sequentials flattened, in the order they run.
fn leaves(pass: &Pass<Module>, out: &mut Vec<Pass<Module>>) {
    let inner: Vec<&Pass<Module>> = pass.passes().collect();
    if inner.is_empty() {
        out.push(pass.clone());
    }
    for p in inner {
        leaves(p, out);
    }
}

#[test]
fn over_o3_types_are_computed_once_per_function_state_on_every_model() {
    for name in MODELS {
        let counter = Arc::new(CountTypes::default());
        let ctx = PassContext::builder()
            .opt_level(3)
            .instrument_arc(counter.clone())
            .build()
            .unwrap();
        let mut passes = Vec::new();
        leaves(&Pass::from(irpass_passes::pipeline(3)), &mut passes);
        // Run O3 pass by pass with one context, keeping every function state a pass was given
        // alive (so no address is reused) and counting the distinct ones.
        let mut module = model(name);
        let mut seen: Vec<Function> = Vec::new();
        let mut states: HashSet<usize> = HashSet::new();
        for pass in &passes {
            for (_, f) in module.iter() {
                if states.insert(f.address()) {
                    seen.push(f.clone());
                }
            }
            module = pass.run_in(module, &ctx).unwrap();
        }
        let computed = counter.computed.load(Ordering::SeqCst);
        let hits = counter.hits.load(Ordering::SeqCst);
        assert!(computed >= 1, "{name}: types were asked for");
        assert!(
            computed <= states.len(),
            "{name}: {computed} computations for {} function states",
            states.len()
        );
        assert!(
            hits >= 1,
            "{name}: later passes reuse the types ({hits} hits)"
        );
    }
}

#[test]
fn types_after_a_change_are_the_changed_functions_never_a_stale_result() {
    let ctx = PassContext::default();
    let m = parse(
        "def @f(%x: float32) { exp(%x) }\n\
         def @main(%x: float32) { @f(%x) }",
    );
    let main = m.get("main").unwrap();
    let before = ctx.function_analysis(&Types, main, &m);
    let t = before.as_ref().as_ref().unwrap();
    assert_eq!(t.of(main.code.root).to_string(), "float32");
    // `@f` now returns a tuple: `@main` is the same function value, but its types no longer
    // hold, so they are found again.
    let g = parse("def @f(%x: float32) { (%x, %x) }");
    let m2 = Module::from_functions([("f", g.get("f").unwrap().clone()), ("main", main.clone())]);
    let after = ctx.function_analysis(&Types, m2.get("main").unwrap(), &m2);
    assert!(!Arc::ptr_eq(&before, &after), "a stale result was served");
    let t = after.as_ref().as_ref().unwrap();
    assert_eq!(t.of(main.code.root).to_string(), "(float32, float32)");
    // A type error in the module is the analysis's result, not a panic.
    let bad = parse("def @main(%x: float32) { add(%x, (%x,)) }");
    let r = ctx.function_analysis(&Types, bad.get("main").unwrap(), &bad);
    assert!(r.as_ref().is_err());
}

#[test]
fn the_call_graph_and_use_counts_say_what_the_functions_hold() {
    let ctx = PassContext::default();
    let m = parse(
        "def @leaf(%x: float32) { exp(%x) }\n\
         def @mid(%x: float32) { @leaf(@leaf(%x)) }\n\
         def @main(%x: float32) { %0 = @mid(%x); add(%0, %0) }",
    );
    let calls = ctx.module_analysis(&CallGraph, &m);
    assert_eq!(calls.callees("main"), ["mid"]);
    assert_eq!(calls.callees("mid"), ["leaf"]);
    assert!(calls.callees("leaf").is_empty());
    assert!(calls.is_called("leaf") && calls.is_called("mid") && !calls.is_called("main"));
    let main = m.get("main").unwrap();
    let uses = ctx.function_analysis(&UseCounts, main, &m);
    // `%0` (the call of `@mid`) is used twice by the `add`.
    assert_eq!(uses.iter().filter(|&&n| n == 2).count(), 1, "{uses:?}");
}

#[test]
fn the_library_registers_its_analyses() {
    let names: Vec<&str> = irpass::analysis::registered()
        .iter()
        .map(|a| a.name)
        .collect();
    for name in [
        "Types",
        "ModuleTypes",
        "UseCounts",
        "CallGraph",
        "PostDominators",
    ] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
}

/// The operator call of `main` named `op` (the only one).
fn call_of(f: &Function, op: &str) -> ExprId {
    let body = &f.code.body;
    let found: Vec<ExprId> = body
        .ids()
        .filter(|&e| body.op_call(e).is_some_and(|(o, _, _)| o.name() == op))
        .collect();
    assert_eq!(found.len(), 1, "one {op}");
    found[0]
}

#[test]
fn post_dominators_of_a_diamond_a_tuple_and_values_that_escape() {
    let m = parse(
        "def @main(%x: float32) {
           %0 = exp(%x); %1 = negative(%0); %2 = tanh(%0); %3 = add(%1, %2);
           %4 = sqrt(%3); %5 = abs(%3);
           let %a = sigmoid(%4);
           %6 = log(%a);
           (%5, %6)
         }",
    );
    let main = m.get("main").unwrap();
    let ctx = PassContext::default();
    let tree = ctx.function_analysis(&PostDominators, main, &m);
    let [exp, neg, tanh, add, sqrt, abs, sigmoid, log] = [
        "exp", "negative", "tanh", "add", "sqrt", "abs", "sigmoid", "log",
    ]
    .map(|o| call_of(main, o));
    // The diamond meets at the add.
    assert_eq!(tree.consumers(exp), [neg, tanh]);
    for n in [exp, neg, tanh] {
        assert_eq!(tree.post_dominator(n), Some(add));
    }
    assert!(tree.post_dominates(add, exp) && !tree.post_dominates(neg, exp));
    // The add flows into sqrt, which flows into a let's value (it escapes), and into abs:
    // the two ways leave the graph apart, so the add has no post-dominator.
    assert!(tree.escapes(sigmoid) && tree.post_dominator(sigmoid).is_none());
    assert_eq!(tree.post_dominator(sqrt), Some(sigmoid));
    assert_eq!(tree.post_dominator(add), None);
    // The tuple is the result: abs and log flow into it, and it escapes.
    let root = main.code.root;
    let tuple = tree.post_dominator(abs).expect("the tuple");
    assert_eq!(tree.post_dominator(log), Some(tuple));
    assert!(tree.escapes(tuple) && tree.escapes(root));
    // Operands come before their users in the order, each node once.
    let pos = |e: ExprId| tree.order().iter().position(|&o| o == e).unwrap();
    assert!(pos(exp) < pos(neg) && pos(neg) < pos(tanh) && pos(tanh) < pos(add));
    let distinct: HashSet<ExprId> = tree.order().iter().copied().collect();
    assert_eq!(distinct.len(), tree.order().len());
    // Asked again for the unchanged function: the cached tree.
    assert!(Arc::ptr_eq(
        &tree,
        &ctx.function_analysis(&PostDominators, main, &m)
    ));
}

/// Whether a flow from `from` reaches the outside without passing through `avoid`, by a
/// plain search (the definition the tree is checked against).
fn escapes_avoiding(tree: &PostDominatorTree, from: ExprId, avoid: ExprId) -> bool {
    let mut seen = HashSet::new();
    let mut stack = vec![from];
    while let Some(e) = stack.pop() {
        if e == avoid || !seen.insert(e) {
            continue;
        }
        if tree.escapes(e) {
            return true;
        }
        stack.extend(tree.consumers(e));
    }
    false
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]
    /// On random programs each node's post-dominator is, by brute force, a node every flow
    /// from it to the outside passes through, and the closest one: every other such node
    /// post-dominates it. A node without one has no such node.
    #[test]
    fn the_post_dominator_tree_agrees_with_the_definition_on_random_programs(
        choices in proptest::collection::vec(any::<u32>(), 0..90),
    ) {
        let m = random::program(&choices);
        let main = m.get("main").unwrap();
        let tree = PostDominators::of(main);
        for &b in tree.order() {
            let strict: Vec<ExprId> = tree
                .order()
                .iter()
                .copied()
                .filter(|&a| a != b && !escapes_avoiding(&tree, b, a))
                .collect();
            match tree.post_dominator(b) {
                None => prop_assert!(strict.is_empty(), "{b:?} has {strict:?} in\n{m}"),
                Some(p) => {
                    prop_assert!(strict.contains(&p), "{p:?} for {b:?} in\n{m}");
                    for &a in &strict {
                        prop_assert!(
                            a == p || !escapes_avoiding(&tree, p, a),
                            "{a:?} post-dominates {b:?} but not {p:?} in\n{m}"
                        );
                        prop_assert!(tree.post_dominates(a, b));
                    }
                }
            }
            prop_assert_eq!(tree.depth(b) as usize, 1 + tree.post_dominator(b).map_or(0, |p| tree.depth(p) as usize));
        }
    }
}
