use std::sync::Arc;
use irpass::doc_toy::Toy;
use irpass::function_pass;

/// Replaces nothing.
#[derive(Default)]
struct ReplaceFunc;

#[function_pass(opt_level = 1)]
impl ReplaceFunc {
    fn transform_functon(&self, func: Arc<Vec<i64>>, _module: &Toy) -> Arc<Vec<i64>> {
        func
    }
}

fn main() {
    let _ = ReplaceFunc;
}
