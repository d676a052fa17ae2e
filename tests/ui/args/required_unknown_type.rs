use std::sync::Arc;
use irpass::doc_toy::Toy;
use irpass::function_pass;

/// Keeps.
#[function_pass(opt_level = 0)]
fn keep(func: Arc<Vec<i64>>, _module: &Toy) -> Arc<Vec<i64>> {
    func
}

/// Doubles.
#[function_pass(opt_level = 1, required = [Kepe])]
fn double(func: Arc<Vec<i64>>, _module: &Toy) -> Arc<Vec<i64>> {
    func
}

fn main() {
    let _ = (Keep, Double);
}
