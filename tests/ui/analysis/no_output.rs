use irpass::doc_toy::Toy;
use irpass::module_analysis;

/// Computes nothing.
#[module_analysis]
fn nothing(module: &Toy) {
    let _ = module;
}

fn main() {}
