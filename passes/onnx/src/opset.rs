//! Which version of an operator a model's opset means, and whether irpass reads and writes it.
//!
//! The converters implement each operator as opsets [`IMPLEMENTED`] define it (with the changes
//! between them). A model at another opset is read or written when its version of each
//! operator it uses differs from one of those only in the element types the operator takes
//! (the table [`crate::versions`], generated from ONNX's operator schemas, says which versions
//! those are): so Reshape at opset 25 is Reshape-21, and Add at opset 7 is Add-7. A few older
//! versions that differ in more are read too, as [`READ_OLDER`] says how; the others
//! (`BatchNormalization-7` with `spatial`, `Upsample`, ...) are refused, by name.

use crate::versions::{NEWEST_OPSET, VERSIONS};

/// The default-domain opsets whose definitions the converters implement.
pub const IMPLEMENTED: std::ops::RangeInclusive<i64> = 9..=21;

/// The default-domain opsets a model may import: 1 to the newest the table knows.
pub const OPSETS: std::ops::RangeInclusive<i64> = 1..=NEWEST_OPSET;

/// Versions before opset 9 that differ from the next version of their operator in more than
/// types, read as that next version (and written as themselves): those whose difference is
/// `consumed_inputs`, an attribute of versions 1 to 5 that changes nothing computed; the
/// arithmetic, logical and comparison operators before opset 7, which broadcast only with
/// `broadcast=1`, the second operand aligned with the first at `axis` (the importer aligns it;
/// the writer sets `broadcast` where the shapes differ and refuses what it cannot say so,
/// [`LEGACY_BROADCAST`]); `Gemm-6`, whose `C` broadcasts only with `broadcast=1` (read as
/// always broadcasting, which a valid model cannot tell apart; written with it); and
/// `AveragePool-1`, version 7 without `count_include_pad`, whose default (0) is version 1's
/// only behaviour.
const READ_OLDER: &[(&str, i64)] = &[
    ("Abs", 1),
    ("Add", 1),
    ("Add", 6),
    ("And", 1),
    ("AveragePool", 1),
    ("Ceil", 1),
    ("Div", 1),
    ("Div", 6),
    ("Elu", 1),
    ("Equal", 1),
    ("Exp", 1),
    ("Floor", 1),
    ("Gemm", 6),
    ("Greater", 1),
    ("HardSigmoid", 1),
    ("LeakyRelu", 1),
    ("Less", 1),
    ("Log", 1),
    ("Mul", 1),
    ("Mul", 6),
    ("Neg", 1),
    ("Or", 1),
    ("Pow", 1),
    ("Reciprocal", 1),
    ("Relu", 1),
    ("Selu", 1),
    ("Sigmoid", 1),
    ("Sqrt", 1),
    ("Sub", 1),
    ("Sub", 6),
    ("Tanh", 1),
    ("Xor", 1),
];

/// The operators that broadcast only by their `broadcast` attribute before opset 7.
pub(crate) const LEGACY_BROADCAST: &[&str] = &[
    "Add", "And", "Div", "Equal", "Greater", "Less", "Mul", "Or", "Pow", "Sub", "Xor",
];

/// The opset from which [`LEGACY_BROADCAST`]'s operators broadcast as numpy does.
pub(crate) const NUMPY_BROADCAST_OPSET: i64 = 7;

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

/// Whether version `v` of `op` reads as version `first`: each version after it up to `first`
/// changes only types or follows one that [`READ_OLDER`] lists.
fn older_reads_as(op: &str, all: &[(i64, bool)], v: i64, first: i64) -> bool {
    let mut previous = v;
    for &(w, types_only) in all.iter().filter(|(w, _)| *w > v && *w <= first) {
        if !types_only && !READ_OLDER.contains(&(op, previous)) {
            return false;
        }
        previous = w;
    }
    true
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
        (Some(first), _) if v < first => match older_reads_as(op, all, v, first) {
            true => Ok(()),
            false => Err(format!(
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
        // Add-7 (opset 7, 8) is Add as opset 9 defines it; Add-6 (`broadcast`) and Add-1
        // (`consumed_inputs` too) are read as it, the importer aligning by `axis`.
        assert_eq!(check("Add", 8), Ok(()));
        assert_eq!(check("Add", 6), Ok(()));
        assert_eq!(check("Add", 1), Ok(()));
        assert!(check("Relu", 21).is_ok() && check("Relu", 1).is_ok());
        // BatchNormalization-7 has `spatial`, which nothing reads.
        let e = check("BatchNormalization", 7).unwrap_err();
        assert!(
            e.contains("BatchNormalization-7") && e.contains("from version 9"),
            "{e}"
        );
        // Gemm-6's `broadcast` is read and written; Gemm-1 differs from 6 in types only.
        assert!(check("Gemm", 6).is_ok() && check("Gemm", 1).is_ok());
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
