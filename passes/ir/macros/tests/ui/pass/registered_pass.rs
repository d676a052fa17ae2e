//! A rule set registered as a pass, found by name and run.
use irpass_ir::Module;
use irpass_ir_macros::rules;

rules! {
    /// Removes `exp(log(x))` and doubles sums of a value with itself.
    #[pass(name = "ExpLogRules", opt_level = 1)]
    pub static EXP_LOG: RuleSet = {
        /// exp undoes log.
        exp_log: "exp(log(?x))" => "?x";
        double: "add(?x, ?x)" if cx.dtype(x).is_some_and(|d| d.is_float()) => {
            let two = cx.scalar_like(x, 2.0)?;
            cx.call("multiply", &[x, two], irpass_ir::Attrs::new())
        };
    };
}

fn main() {
    let pass = irpass_ir::__private::irpass::registry::lookup::<Module>("ExpLogRules").unwrap();
    let m = Module::parse("def @main(%a: float32) { %0 = exp(log(%a)); add(%0, %0) }").unwrap();
    let out = pass.run(m).unwrap();
    assert!(out.to_string().contains("multiply(%a, 2f)"), "{out}");
    assert_eq!(EXP_LOG.rules().unwrap().len(), 2);
}
