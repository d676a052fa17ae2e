use irpass::doc_toy::Toy;
use irpass::function_pass;

/// Takes a string where the toy's functions are `Arc<Vec<i64>>`.
#[function_pass(opt_level = 1)]
fn double(func: String, _module: &Toy) -> String {
    func
}

fn main() {
    let _ = Double;
}
