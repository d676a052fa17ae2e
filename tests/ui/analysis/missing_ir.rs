use std::sync::Arc;
use irpass::function_analysis;

/// The largest value.
#[function_analysis]
fn max_value(func: &Arc<Vec<i64>>) -> i64 {
    func.iter().copied().max().unwrap_or(0)
}

fn main() {}
