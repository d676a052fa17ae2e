use std::sync::Arc;
use irpass::doc_toy::Toy;
use irpass::function_pass;

/// Adds a value.
struct AddValue {
    value: i64,
}

#[function_pass(opt_level = 1, options)]
impl AddValue {
    fn transform_function(&self, func: Arc<Vec<i64>>, _module: &Toy) -> Arc<Vec<i64>> {
        Arc::new(func.iter().map(|v| v + self.value).collect())
    }
}

fn main() {}
