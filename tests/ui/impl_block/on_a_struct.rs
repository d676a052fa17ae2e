use irpass::function_pass;

/// Not a pass.
#[function_pass(opt_level = 1)]
struct NotAPass;

fn main() {
    let _ = NotAPass;
}
