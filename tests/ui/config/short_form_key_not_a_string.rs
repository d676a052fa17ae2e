use irpass::pass_config_option;

pass_config_option!(relay.Depth, u32);

fn main() {}
