use irpass::function_pass;

/// Keeps anything.
#[function_pass(opt_level = 1)]
fn keep<F: Clone>(func: F, _module: &irpass::doc_toy::Toy) -> F {
    func
}

fn main() {
    let _ = Keep;
}
