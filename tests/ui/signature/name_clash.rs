use irpass::doc_toy::Toy;
use irpass::function_pass;
use std::sync::Arc;

/// The name the pass below takes: one error, on the pass's attribute, and no other.
struct Double;

/// Doubles every value.
#[function_pass(opt_level = 1)]
fn double(func: Arc<Vec<i64>>, _module: &Toy) -> Arc<Vec<i64>> {
    Arc::new(func.iter().map(|v| v * 2).collect())
}

fn main() {
    let _ = Double;
}
