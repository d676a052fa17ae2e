use std::sync::Arc;
use irpass::doc_toy::Toy;
use irpass::function_pass;

/// Doubles.
#[function_pass(opt_level = 1, name = "double-values")]
fn double(func: Arc<Vec<i64>>, _module: &Toy) -> Arc<Vec<i64>> {
    func
}

fn main() {
    let _ = Double;
}
