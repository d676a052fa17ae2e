use std::sync::Arc;
use irpass::doc_toy::Toy;
use irpass::function_pass;

/// Counts calls.
#[derive(Default)]
struct Counting {
    calls: usize,
}

#[function_pass(opt_level = 1)]
impl Counting {
    fn transform_function(&mut self, func: Arc<Vec<i64>>, _module: &Toy) -> Arc<Vec<i64>> {
        self.calls += 1;
        func
    }
}

fn main() {
    let _ = Counting::default().calls;
}
