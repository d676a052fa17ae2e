use irpass_ir_macros::rules;

rules! {
    static R: RuleSet = {
        shadow: "exp(?cx)" if cx.same_type(cx, root) => "?cx";
    };
}

fn main() {
    let _ = R.name();
}
