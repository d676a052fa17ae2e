use irpass::{PassOptions, pass_config_option};

pass_config_option! {
    /// The level.
    pub LEVEL: i64 = "test.Fuse.level";
}

#[derive(Default, serde::Deserialize, PassOptions)]
struct Fuse {
    /// The fusion level.
    #[option(config = LEVEL, default = i64::from(ctx.opt_level()))]
    level: Option<i64>,
}

fn main() {
    let _ = Fuse::default().level;
}
