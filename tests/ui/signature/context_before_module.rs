use std::sync::Arc;

use irpass::doc_toy::Toy;
use irpass::{PassContext, function_pass};

/// The context is written before the module: the order is function, module, context.
#[function_pass(opt_level = 1)]
fn double(func: Arc<Vec<i64>>, _ctx: &PassContext, _module: &Toy) -> Arc<Vec<i64>> {
    func
}

fn main() {
    let _ = Double;
}
