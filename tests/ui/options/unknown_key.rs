use irpass::{PassOptions, pass_config_option};

pass_config_option! {
    /// The depth.
    pub DEPTH: u32 = "test.Unroll.depth";
}

#[derive(Default, serde::Deserialize, PassOptions)]
struct Unroll {
    /// How deep to unroll.
    #[option(confg = DEPTH, default = 4)]
    depth: Option<u32>,
    /// Unroll calls too.
    calls: bool,
}

fn main() {
    let _ = Unroll::default().calls;
}
