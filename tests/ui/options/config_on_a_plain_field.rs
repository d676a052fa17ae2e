use irpass::{PassOptions, pass_config_option};

pass_config_option! {
    /// The depth.
    pub DEPTH: u32 = "test.Unroll.depth";
}

#[derive(Default, serde::Deserialize, PassOptions)]
struct Unroll {
    /// How deep to unroll.
    #[option(config = DEPTH, default = 4)]
    depth: u32,
}

fn main() {
    let _ = Unroll::default().depth;
}
