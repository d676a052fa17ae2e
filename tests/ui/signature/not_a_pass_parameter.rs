use std::sync::Arc;
use irpass::function_pass;

/// Doubles.
#[function_pass(opt_level = 1)]
fn double(func: Arc<Vec<i64>>, factor: i64) -> Arc<Vec<i64>> {
    let _ = factor;
    func
}

fn main() {
    let _ = Double;
}
