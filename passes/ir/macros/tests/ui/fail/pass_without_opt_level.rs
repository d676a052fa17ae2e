use irpass_ir_macros::rules;

rules! {
    /// Removes `exp(log(x))`.
    #[pass(name = "ExpLog")]
    static R: RuleSet = {
        fine: "exp(log(?x))" => "?x";
    };
}

fn main() {
    let _ = R.name();
}
