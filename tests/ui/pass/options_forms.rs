//! Every form `#[derive(PassOptions)]` accepts: an option with a config key and a constant
//! default, one whose default reads the context, a plain field, a field with its own type text.

use irpass::registry::PassOptions as _;
use irpass::{PassContext, PassOptions, pass_config_option};

pass_config_option! {
    /// How deep to unroll.
    pub DEPTH: u32 = "test.Unroll.depth";
    /// The unroll level.
    pub LEVEL: i64 = "test.Unroll.level";
}

#[derive(Clone, Debug, Default, serde::Deserialize, PassOptions)]
#[serde(default)]
pub struct Unroll {
    /// How deep to unroll.
    #[option(config = DEPTH, default = 4)]
    pub depth: Option<u32>,
    /// The unroll level.
    ///
    /// Only the first paragraph is listed.
    #[option(config = LEVEL, default = i64::from(ctx.opt_level()), default_text = "the opt level")]
    pub level: Option<i64>,
    /// Operators never unrolled.
    #[option(type_name = "[operator names]")]
    pub skip: Vec<String>,
    /// UPPER case stays.
    pub calls: bool,
}

fn main() {
    let ctx = PassContext::builder().opt_level(3).config(&DEPTH, 8).build().unwrap();
    let unroll = Unroll::default();
    assert_eq!(unroll.depth(&ctx), 8);
    assert_eq!(unroll.depth(&PassContext::default()), 4);
    assert_eq!(unroll.level(&ctx), 3);
    let set = Unroll { depth: Some(2), level: Some(1), ..Unroll::default() };
    assert_eq!((set.depth(&ctx), set.level(&ctx)), (2, 1));
    let listed = Unroll::options();
    let rows: Vec<(&str, &str, &str, &str)> = listed
        .iter()
        .map(|o| (o.name, o.type_name, o.default.as_str(), o.doc))
        .collect();
    assert_eq!(
        rows,
        [
            ("depth", "u32", "test.Unroll.depth, else 4", "how deep to unroll"),
            ("level", "i64", "test.Unroll.level, else the opt level", "the unroll level"),
            ("skip", "[operator names]", "[]", "operators never unrolled"),
            ("calls", "bool", "false", "UPPER case stays"),
        ]
    );
}
