//! Every accepted form of `pass_config_option!`.

use irpass::{PassContext, pass_config_option, registry};

pass_config_option!("forms.Short", Option<u32>);
pass_config_option!("forms.ShortTrailingComma", bool,);

pass_config_option! {
    /// A list.
    pub NAMES: Vec<String> = "forms.Names";
    /// A map, crate-visible.
    pub(crate) TABLE: std::collections::BTreeMap<String, u32> = "forms.nested.Table";
    /// Private, and the last one without `;`
    FLAG: bool = "forms.Flag"
}

fn main() {
    let ctx = PassContext::builder()
        .config_text("forms.Names", r#"["a"]"#)
        .config_text("forms.nested.Table", r#"{"x": 1}"#)
        .config_text("forms.Flag", "true")
        .config_text("forms.Short", "3")
        .build()
        .unwrap();
    assert_eq!(ctx.get(&NAMES).unwrap(), &["a".to_string()]);
    assert_eq!(ctx.get(&TABLE).unwrap()["x"], 1);
    assert_eq!(ctx.get(&FLAG), Some(&true));
    let table = registry::config_option("forms.nested.Table").unwrap();
    assert_eq!(table.type_name, "std::collections::BTreeMap<String, u32>");
    assert_eq!(table.doc, "A map, crate-visible.");
    assert!(registry::config_option("forms.ShortTrailingComma").is_ok());
}
