use irpass::pass_instrument;

/// Enters.
struct Enter {
    name: String,
}

#[pass_instrument(default)]
impl Enter {
    fn enter_pass_ctx(&self) {
        let _ = &self.name;
    }
}

fn main() {}
