use irpass::pass_config_option;

pass_config_option! {
    /// The depth.
    pub DEPTH: u32 = relay.Depth;
}

fn main() {
    let _ = DEPTH;
}
