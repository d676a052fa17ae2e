//! What irpass understands of ONNX, derived from the importer's table of conversions
//! (`import::ops::KNOWN`, `same.rs`) and the native definitions ([`crate::native`]): the
//! supported-operator list the guide shows.

use std::collections::BTreeMap;

/// One ONNX operator irpass understands, and how a node of it imports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coverage {
    /// Its domain (`""`: the default one).
    pub domain: &'static str,
    /// The operator.
    pub op: &'static str,
    /// Whether the importer converts it to the reference IR's own operators (where its use
    /// allows: constant axes, a known rank).
    pub converted: bool,
    /// The versions (`since_version`) its native definition (`onnx.<Op>`) implements; empty
    /// where it has none.
    pub native_versions: &'static [i64],
}

/// Every ONNX operator irpass understands, by domain then name. A node of any other operator
/// is kept whole (opaque) where its outputs' types are known.
///
/// ```
/// let all = irpass_onnx::coverage();
/// let top_k = all.iter().find(|c| c.op == "TopK").unwrap();
/// assert!(!top_k.native_versions.is_empty());
/// assert!(all.iter().any(|c| c.domain == "ai.onnx.ml" && c.op == "TreeEnsemble"));
/// ```
pub fn coverage() -> Vec<Coverage> {
    let mut all: BTreeMap<(&str, &str), Coverage> = BTreeMap::new();
    let converted = crate::import::KNOWN
        .iter()
        .copied()
        .chain(crate::same::SAME.iter().map(|&(op, _, _)| op));
    for op in converted {
        all.insert(
            ("", op),
            Coverage {
                domain: "",
                op,
                converted: true,
                native_versions: &[],
            },
        );
    }
    for n in inventory::iter::<crate::native::Native> {
        all.entry((n.domain, n.onnx))
            .or_insert(Coverage {
                domain: n.domain,
                op: n.onnx,
                converted: false,
                native_versions: &[],
            })
            .native_versions = n.versions;
    }
    all.into_values().collect()
}

/// [`coverage`] as a Markdown table: operator, how it imports, the native versions.
pub fn coverage_table() -> String {
    let mut out = String::from("| domain | operator | imports as | native versions |\n");
    out.push_str("|---|---|---|---|\n");
    for c in coverage() {
        let native = format!(
            "`onnx.{}{}`",
            if c.domain.is_empty() {
                String::new()
            } else {
                format!("{}.", c.domain)
            },
            c.op
        );
        let how = match (c.converted, c.native_versions.is_empty()) {
            (true, true) => "IR operators".to_string(),
            (true, false) => format!("IR operators, else {native}"),
            (false, _) => native,
        };
        let versions: Vec<String> = c.native_versions.iter().map(i64::to_string).collect();
        let domain = if c.domain.is_empty() {
            "ai.onnx"
        } else {
            c.domain
        };
        out.push_str(&format!(
            "| {domain} | {} | {how} | {} |\n",
            c.op,
            versions.join(", ")
        ));
    }
    out
}
