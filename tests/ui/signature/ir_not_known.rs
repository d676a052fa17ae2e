use std::sync::Arc;
use irpass::doc_toy::Toy;
use irpass::function_pass;

/// Doubles; the IR cannot be told from `Arc<Vec<i64>>` alone.
#[function_pass(opt_level = 1)]
fn double(func: Arc<Vec<i64>>) -> Arc<Vec<i64>> {
    func
}

fn main() {
    let _ = Double;
    let _ = Toy::default();
}
