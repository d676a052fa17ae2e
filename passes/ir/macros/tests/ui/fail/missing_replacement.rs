use irpass_ir_macros::rules;

rules! {
    static R: RuleSet = {
        nothing: "exp(log(?x))" => ;
    };
}

fn main() {}
