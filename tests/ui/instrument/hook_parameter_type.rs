use irpass::doc_toy::Toy;
use irpass::{PassInfo, pass_instrument};

/// Counts.
#[derive(Default)]
struct Counter;

#[pass_instrument]
impl Counter {
    fn run_before_pass(&self, _module: &Toy, _info: &PassInfo) {}
}

fn main() {
    let _ = Counter;
}
