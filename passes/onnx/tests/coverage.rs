//! The guide's list of the ONNX operators irpass understands is the one the importer's
//! tables give (`irpass_onnx::coverage_table`): `IRPASS_BLESS=1 cargo test -p irpass-onnx
//! --test coverage` rewrites it.

use std::path::PathBuf;

const START: &str = "<!-- coverage:start -->\n";
const END: &str = "<!-- coverage:end -->";

#[test]
fn the_guides_operator_table_is_the_one_the_importer_gives() {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "..",
        "core",
        "src",
        "guide",
        "onnx.md",
    ]
    .iter()
    .collect();
    let guide = std::fs::read_to_string(&path).unwrap();
    let (before, rest) = guide.split_once(START).expect("the guide marks its table");
    let (table, after) = rest.split_once(END).expect("the guide ends its table");
    let want = irpass_onnx::coverage_table();
    if std::env::var_os("IRPASS_BLESS").is_some() {
        std::fs::write(&path, format!("{before}{START}{want}{END}{after}")).unwrap();
        return;
    }
    assert_eq!(
        table, want,
        "the guide's table differs from the importer's (IRPASS_BLESS=1 rewrites it)"
    );
    // Every native operator and every domain's are there.
    assert!(
        table.contains("| ai.onnx | Loop | `onnx.Loop` | 1, 11 |"),
        "{table}"
    );
    assert!(table.contains("| ai.onnx.ml | TreeEnsemble |"), "{table}");
}
