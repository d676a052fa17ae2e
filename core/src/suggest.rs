//! "Did you mean …?": the names closest to a misspelt one, as the registry's errors suggest
//! them. An IR crate uses it for its own names (operators, attributes) so that its messages
//! read like the framework's.

/// Up to three candidates close to `name`, closest first (case-insensitive edit distance; a
/// candidate containing `name`, or contained in it, counts as close).
///
/// ```
/// use irpass::suggest::closest;
/// assert_eq!(closest("FoldConstnt", ["FoldConstant", "InferType"]), ["FoldConstant"]);
/// assert!(closest("xyz", ["FoldConstant"]).is_empty());
/// ```
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let wanted = name.to_lowercase();
    let mut scored: Vec<(f64, &str)> = candidates
        .into_iter()
        .filter_map(|candidate| {
            let lower = candidate.to_lowercase();
            let mut score = strsim::normalized_damerau_levenshtein(&wanted, &lower);
            if lower == wanted {
                score = 2.0;
            } else if wanted.len() >= 3 && (lower.contains(&wanted) || wanted.contains(&lower)) {
                score = score.max(0.75);
            }
            (score >= 0.5).then_some((score, candidate))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(3)
        .map(|(_, c)| c.to_string())
        .collect()
}

/// ` (did you mean `A`, `B`?)` for the names [`closest`] found, or nothing when it found none:
/// the phrase the framework's errors end with.
///
/// ```
/// use irpass::suggest::did_you_mean;
/// assert_eq!(did_you_mean(&["FoldConstant".to_string()]), " (did you mean `FoldConstant`?)");
/// assert_eq!(did_you_mean(&[]), "");
/// ```
pub fn did_you_mean(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        return String::new();
    }
    let names: Vec<String> = suggestions.iter().map(|s| format!("`{s}`")).collect();
    format!(" (did you mean {}?)", names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn closest_names_rank_typos_first_and_drop_unrelated_names() {
        let names = [
            "FoldConstant",
            "FoldScaleAxis",
            "InferType",
            "DeadCodeElimination",
        ];
        assert_eq!(closest("FoldConstnt", names)[0], "FoldConstant");
        assert_eq!(closest("foldconstant", names), ["FoldConstant"]);
        assert!(closest("Zzzzzz", names).is_empty());
    }
}
