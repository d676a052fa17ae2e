use irpass::{ModuleView, PassInfo, pass_instrument};

/// Vetoes nothing.
#[derive(Default)]
struct Vetoer;

#[pass_instrument]
impl Vetoer {
    fn should_run(&self, _module: &dyn ModuleView, _info: &PassInfo) {}
}

fn main() {
    let _ = Vetoer;
}
