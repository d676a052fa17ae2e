//! Module edits from a function pass: asked for while one function is transformed (in
//! parallel), applied after every function is put back, in the module's order of functions
//! whatever the thread count; a failing edit fails the pass and keeps the module it was given.

use std::sync::Arc;

use irpass::{FunctionPass, IrModule, ModuleEdits, Pass, PassContext, PassInfo, PassKind};
use irpass_tests::{Func, Tiny};

/// Adds to the module a function `NAME_sum` holding the sum of each function's values (and
/// fails on a function whose first value is 13, in the edit itself).
struct Outline(PassInfo);

impl FunctionPass<Tiny> for Outline {
    fn info(&self) -> &PassInfo {
        &self.0
    }
    fn transform_function(
        &self,
        f: Arc<Func>,
        _: &Tiny,
        _: &PassContext,
    ) -> irpass::Result<Arc<Func>> {
        Ok(f)
    }
    fn transform_function_with_edits(
        &self,
        name: &str,
        f: Arc<Func>,
        _: &Tiny,
        _: &PassContext,
        edits: &mut ModuleEdits<Tiny>,
    ) -> irpass::Result<Arc<Func>> {
        if name.ends_with("_sum") {
            return Ok(f);
        }
        let sum: i64 = f.body.iter().sum();
        let (target, bad) = (format!("{name}_sum"), f.body.first() == Some(&13));
        edits.push(move |m: &mut Tiny| {
            if bad {
                return Err("13 cannot be summed".into());
            }
            m.add(&target, vec![sum], false);
            Ok(())
        });
        Ok(Arc::new(Func {
            body: vec![0],
            skip: f.skip,
        }))
    }
}

fn outline() -> Pass<Tiny> {
    Pass::function(Outline(PassInfo::new("Outline", 0, PassKind::Function)))
}

#[test]
fn edits_are_applied_after_the_map_in_the_order_of_the_functions_at_any_thread_count() {
    let names: Vec<String> = (0..40).map(|i| format!("f{i:02}")).collect();
    let module = Tiny::new(
        names
            .iter()
            .zip(0i64..)
            .map(|(n, i)| (n.as_str(), vec![i + 100, 1])),
    );
    let run = |threads: usize| {
        let ctx = PassContext::builder().threads(threads).build().unwrap();
        outline().run_in(module.clone(), &ctx).unwrap().to_string()
    };
    let one = run(1);
    assert!(one.contains("def @f07_sum: [108]"), "{one}");
    assert!(one.contains("def @f07: [0]"), "{one}");
    assert_eq!(run(2), one);
    assert_eq!(run(4), one);
}

#[test]
fn a_failing_edit_fails_the_pass_naming_the_function_and_keeps_the_module() {
    let module = Tiny::new([("a", vec![1, 2]), ("b", vec![13, 1])]);
    let err = outline()
        .run_in(module.clone(), &PassContext::default())
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("13 cannot be summed") && text.contains("on function `b`"),
        "{text}"
    );
    assert_eq!(err.module().to_string(), module.to_string());
}

/// Sums each function into a new function `NAME_total`, through the macro's `edits` parameter
/// (the edit learns the name of its function when it is applied).
#[irpass::function_pass(opt_level = 0)]
fn total(f: Arc<Func>, edits: &mut ModuleEdits<Tiny>) -> Arc<Func> {
    let sum: i64 = f.body.iter().sum();
    edits.push_for_function(move |m: &mut Tiny, name: &str| {
        if !name.ends_with("_total") {
            m.add(&format!("{name}_total"), vec![sum], false);
        }
        Ok(())
    });
    f
}

#[test]
fn a_macro_pass_takes_edits_as_a_parameter_and_each_edit_knows_its_function() {
    let module = Tiny::new([("a", vec![1, 2]), ("b", vec![5])]);
    let out = irpass::Pass::from(Total).run(module).unwrap().to_string();
    assert!(
        out.contains("def @a_total: [3]") && out.contains("def @b_total: [5]"),
        "{out}"
    );
}

#[test]
fn a_macro_pass_with_edits_called_alone_refuses_to_lose_them() {
    let module = Tiny::new([("a", vec![1])]);
    let (_, a) = module.functions().next().unwrap();
    let err = Total
        .transform_function(a.clone(), &module, &PassContext::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("asked for 1 module edit(s)"), "{err}");
}
