use std::sync::Arc;
use irpass::doc_toy::Toy;
use irpass::module_pass;

/// Takes main.
#[module_pass(opt_level = 0)]
fn take_main(module: Toy) -> Arc<Vec<i64>> {
    let _ = module;
    Arc::new(Vec::new())
}

fn main() {
    let _ = TakeMain;
}
