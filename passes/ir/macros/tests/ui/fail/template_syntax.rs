use irpass_ir_macros::rules;

rules! {
    static R: RuleSet = {
        dangling: "exp(?x)" => "multiply(?x,";
    };
}

fn main() {
    let _ = R.name();
}
