use irpass_ir_macros::rules;

rules! {
    static R: RuleSet = {
        exclusiv fuse: "exp(log(?x))" => "?x";
    };
}

fn main() {
    let _ = R.name();
}
