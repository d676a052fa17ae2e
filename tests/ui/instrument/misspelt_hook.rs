use irpass::{ModuleView, PassInfo, pass_instrument};

/// Counts.
#[derive(Default)]
struct Counter;

#[pass_instrument]
impl Counter {
    fn run_befor_pass(&self, _module: &dyn ModuleView, _info: &PassInfo) {}
}

fn main() {
    let _ = Counter;
}
