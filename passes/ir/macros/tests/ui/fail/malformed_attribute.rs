use irpass_ir_macros::rules;

rules! {
    static R: RuleSet = {
        strided: "nn.conv2d(?x, ?w, strides=)" => "?x";
    };
}

fn main() {
    let _ = R.name();
}
