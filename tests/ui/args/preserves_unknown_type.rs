use irpass::doc_toy::Toy;
use irpass::module_pass;

/// A type that is not an analysis.
struct NotAnAnalysis;

/// Keeps.
#[module_pass(opt_level = 0, preserves = [NotAnAnalysis])]
fn keep(module: Toy) -> Toy {
    module
}

fn main() {
    let _ = (Keep, NotAnAnalysis);
}
