use irpass::doc_toy::Toy;
use irpass::function_analysis;

/// Reads a function of another type than the IR's.
#[function_analysis(ir = Toy)]
fn length(func: &Vec<String>) -> usize {
    func.len()
}

fn main() {}
