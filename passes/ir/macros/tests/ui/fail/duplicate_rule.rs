use irpass_ir_macros::rules;

rules! {
    static R: RuleSet = {
        same: "exp(log(?x))" => "?x";
        same: "log(exp(?x))" => "?x";
    };
}

fn main() {
    let _ = R.name();
}
