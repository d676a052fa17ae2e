use irpass::pass_instrument;

/// Enters.
#[derive(Default)]
struct Enter;

#[pass_instrument]
impl Enter {
    fn enter_pass_ctx(self) {}
}

fn main() {
    let _ = Enter;
}
