//! What the `irpass-opt` tests share: where the models are, and output as text.

/// The path of `examples/models/NAME.relay`.
pub fn model(name: &str) -> String {
    format!(
        "{}/../examples/models/{name}.relay",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// Process output as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
