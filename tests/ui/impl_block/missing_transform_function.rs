use irpass::function_pass;

/// Replaces nothing.
#[derive(Default)]
struct ReplaceFunc;

#[function_pass(opt_level = 1)]
impl ReplaceFunc {
    fn helper(&self) -> u32 {
        1
    }
}

fn main() {
    let _ = ReplaceFunc.helper();
}
