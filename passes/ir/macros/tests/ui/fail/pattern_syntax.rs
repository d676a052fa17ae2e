use irpass_ir_macros::rules;

rules! {
    static R: RuleSet = {
        unclosed: "nn.relu(?x" => "?x";
    };
}

fn main() {
    let _ = R.name();
}
