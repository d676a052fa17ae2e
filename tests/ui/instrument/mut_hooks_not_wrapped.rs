use irpass::{ModuleView, PassContext, PassInfo, pass_instrument};

/// Counts the passes that ran.
#[derive(Default)]
struct Count {
    n: usize,
}

#[pass_instrument]
impl Count {
    fn run_after_pass(&mut self, _module: &dyn ModuleView, _info: &PassInfo) {
        self.n += 1;
    }
}

fn main() {
    // A `&mut self` hook makes a `PassInstrumentMut`: it must be wrapped in `Locked`.
    let _ = PassContext::builder().instrument(Count::default()).build();
}
