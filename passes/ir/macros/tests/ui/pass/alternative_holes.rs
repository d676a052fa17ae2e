//! A hole only one side of an alternative binds is an `Option` in guards and blocks; a hole
//! both sides bind is an `ExprId`; `exclusive` and `once` together compile.
use irpass_ir::{ExprId, Module};
use irpass_ir_macros::rules;

rules! {
    static SQUARES: RuleSet = {
        /// `x * x` or `x ** 2` is `x * x`, once, counting which form it was.
        once exclusive square: "sqrt(multiply(?x, ?x) | power(?x, const as ?two))" if two.is_none_or(|t| cx.scalar(t) == Some(2.0)) => {
            let x: ExprId = x;
            let two: Option<ExprId> = two;
            let _ = two;
            cx.unary("abs", x)
        };
    };
}

fn main() {
    let m = Module::parse("def @main(%a: float32) { (sqrt(multiply(%a, %a)), sqrt(power(%a, 2f))) }").unwrap();
    let main = m.get("main").unwrap();
    let out = SQUARES.apply(&main.code, None).unwrap();
    let text = Module::from_functions([("main", main.with_code(out))]).to_string();
    // Both forms are the same `abs(%a)` (a replacement reuses an equal call).
    assert!(text.contains("%0 = abs(%a);") && text.contains("(%0, %0)"), "{text}");
}
