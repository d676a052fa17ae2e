use irpass::pass_config_option;

/// Not decodable.
pub struct Limits {
    pub max: u32,
}

pass_config_option! {
    /// Limits.
    pub LIMITS: Limits = "relay.Limits";
}

fn main() {
    let _ = LIMITS;
}
