use irpass::doc_toy::Toy;
use irpass::function_pass;

/// Keeps.
struct KeepAll;

#[function_pass(opt_level = 1)]
impl KeepAll {
    fn transform_module(&self, module: Toy) -> Toy {
        module
    }
}

fn main() {
    let _ = KeepAll;
}
