use irpass::PassOptions;

#[derive(Default, serde::Deserialize, PassOptions)]
struct Unroll {
    /// How deep to unroll.
    depth: u32,
    calls: bool,
}

fn main() {
    let _ = Unroll::default().calls;
}
