use irpass::doc_toy::Toy;
use irpass::module_analysis;

/// Counts functions.
#[module_analysis]
fn count(module: Toy) -> usize {
    irpass::IrModule::function_count(&module)
}

fn main() {}
