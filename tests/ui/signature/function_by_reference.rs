use std::sync::Arc;
use irpass::doc_toy::Toy;
use irpass::function_pass;

/// Doubles.
#[function_pass(opt_level = 1)]
fn double(func: &Arc<Vec<i64>>, _module: &Toy) -> Arc<Vec<i64>> {
    func.clone()
}

fn main() {
    let _ = Double;
}
