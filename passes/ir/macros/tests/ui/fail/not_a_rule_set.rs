use irpass_ir_macros::rules;

rules! {
    static R: Vec<u8> = {
        fine: "exp(log(?x))" => "?x";
    };
}

fn main() {
    let _ = R.name();
}
