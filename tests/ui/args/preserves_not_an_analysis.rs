use irpass::doc_toy::Toy;
use irpass::module_pass;

/// Keeps.
#[module_pass(opt_level = 0, preserves = [42])]
fn keep(module: Toy) -> Toy {
    module
}

fn main() {
    let _ = Keep;
}
