use irpass_ir_macros::rules;

rules! {
    static R: RuleSet = {
        typo: "multiply(?value, 1f)" => "?vlaue";
    };
}

fn main() {
    let _ = R.name();
}
