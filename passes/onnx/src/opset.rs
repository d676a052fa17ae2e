//! Which version of an operator a model's opset means, and whether irpass reads and writes it.
//!
//! The converters implement each operator as opsets [`IMPLEMENTED`] define it (with the changes
//! between them). A model at another opset is read or written when its version of each
//! operator it uses differs from one of those only in the element types the operator takes
//! (the table [`crate::versions`], generated from ONNX's operator schemas, says which versions
//! those are): so Reshape at opset 25 is Reshape-21, and Add at opset 7 is Add-7, while Add at
//! opset 6 (with its `broadcast` attribute) is refused, by name.

use crate::versions::{NEWEST_OPSET, VERSIONS};

/// The default-domain opsets whose definitions the converters implement.
pub const IMPLEMENTED: std::ops::RangeInclusive<i64> = 9..=21;

/// The default-domain opsets a model may import: 1 to the newest the table knows.
pub const OPSETS: std::ops::RangeInclusive<i64> = 1..=NEWEST_OPSET;

/// `op`'s versions, oldest first (`None` for an operator ONNX does not define).
fn versions(op: &str) -> Option<&'static [(i64, bool)]> {
    VERSIONS
        .binary_search_by(|(name, _)| (*name).cmp(op))
        .ok()
        .map(|i| VERSIONS[i].1)
}

/// The version of `op` that `opset` uses (the newest `since_version` at or below it).
pub fn version_at(op: &str, opset: i64) -> Option<i64> {
    versions(op)?
        .iter()
        .rev()
        .find(|(v, _)| *v <= opset)
        .map(|(v, _)| *v)
}

/// Whether irpass reads and writes `op` at `opset`: `Ok` when its version there is one that an
/// opset of [`IMPLEMENTED`] uses, or differs from the nearest such only in types; otherwise
/// why not (the version that changed the operator).
pub fn check(op: &str, opset: i64) -> Result<(), String> {
    let Some(all) = versions(op) else {
        return Err(format!("{op} is not an operator of ONNX's default domain"));
    };
    let Some(v) = version_at(op, opset) else {
        return Err(format!(
            "{op} does not exist at opset {opset} (it starts at {})",
            all[0].0
        ));
    };
    let (lo, hi) = (*IMPLEMENTED.start(), *IMPLEMENTED.end());
    let first = version_at(op, lo);
    let last = version_at(op, hi);
    // Versions strictly after `from` up to `to` each changed only types.
    let types_only = |from: i64, to: i64| {
        all.iter()
            .filter(|(w, _)| *w > from && *w <= to)
            .find(|(_, t)| !t)
            .map(|(w, _)| *w)
    };
    match (first, last) {
        (_, Some(last)) if v > last => match types_only(last, v) {
            None => Ok(()),
            Some(w) => Err(format!(
                "{op}-{w} changed the operator; irpass reads {op} as opsets up to {hi} define it"
            )),
        },
        (Some(first), _) if v < first => match types_only(v, first) {
            None => Ok(()),
            Some(_) => Err(format!(
                "{op}-{v} (opset {opset}) is an older form of the operator; irpass reads {op} from version {first} (opset {lo})"
            )),
        },
        // An operator that starts inside the implemented opsets, used at an opset before it
        // exists, was refused above; one that starts after them has no implemented version.
        (None, None) => Err(format!(
            "{op} starts at opset {}, after the opsets irpass implements ({lo} to {hi})",
            all[0].0
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_at_opsets() {
        assert_eq!(version_at("Reshape", 12), Some(5));
        assert_eq!(version_at("Reshape", 25), Some(25));
        assert_eq!(version_at("Add", 6), Some(6));
        assert_eq!(version_at("Gelu", 19), None);
        assert_eq!(version_at("NoSuchOp", 19), None);
    }

    #[test]
    fn types_only_changes_are_read_and_others_refused_by_name() {
        // Reshape 23, 24 and 25 added element types.
        assert_eq!(check("Reshape", 25), Ok(()));
        // Add-7 (opset 7, 8) is Add as opset 9 defines it; Add-6 has `broadcast`.
        assert_eq!(check("Add", 8), Ok(()));
        let e = check("Add", 6).unwrap_err();
        assert!(e.contains("Add-6") && e.contains("from version 7"), "{e}");
        assert!(check("Relu", 21).is_ok() && check("Relu", 1).is_err());
        let e = check("NoSuchOp", 13).unwrap_err();
        assert!(e.contains("not an operator"), "{e}");
        let e = check("Gelu", 13).unwrap_err();
        assert!(e.contains("does not exist at opset 13"), "{e}");
    }

    #[test]
    fn the_table_is_sorted_for_binary_search() {
        assert!(VERSIONS.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(NEWEST_OPSET >= *IMPLEMENTED.end());
    }
}
