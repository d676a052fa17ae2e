use irpass_ir_macros::rules;

rules! {
    static R: RuleSet = {
        once exclusive once fuse: "exp(log(?x))" => "?x";
    };
}

fn main() {
    let _ = R.name();
}
