//! Names: the struct name made from a function name, and "did you mean" suggestions.

/// `fold_constant` → `FoldConstant` (`r#` prefixes dropped, digits kept).
pub fn upper_camel(snake: &str) -> String {
    let snake = snake.strip_prefix("r#").unwrap_or(snake);
    let mut out = String::with_capacity(snake.len());
    for word in snake.split('_').filter(|w| !w.is_empty()) {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    out
}

/// The candidate closest to `given`, if it is close enough to be a likely misspelling.
pub fn closest<'a>(given: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (strsim::damerau_levenshtein(given, c), *c))
        .filter(|(distance, c)| *distance <= 3.max(c.len() / 4) && *distance < c.len())
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, c)| c)
}

/// Whether `s` is a Rust identifier (ASCII), usable as a pass name and a struct name.
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && s != "_"
}

/// The type as written, without the spaces of token printing (`Vec<String>`).
pub fn type_text(ty: &syn::Type) -> String {
    let spaced = quote::ToTokens::to_token_stream(ty).to_string();
    let mut out = String::with_capacity(spaced.len());
    for (i, part) in spaced.split(' ').enumerate() {
        let glue = matches!(part, "<" | ">" | "::" | "," | ">>")
            || out.ends_with('<')
            || out.ends_with("::")
            || out.ends_with('&')
            || out.ends_with(' ');
        if i > 0 && !glue {
            out.push(' ');
        }
        out.push_str(part);
        if part == "," {
            out.push(' ');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_case_of_snake_case_names() {
        assert_eq!(upper_camel("fold_constant"), "FoldConstant");
        assert_eq!(upper_camel("to_a_normal_form"), "ToANormalForm");
        assert_eq!(upper_camel("r#type"), "Type");
        assert_eq!(upper_camel("o2_pipeline"), "O2Pipeline");
        assert_eq!(upper_camel("__private_thing"), "PrivateThing");
    }

    #[test]
    fn suggestions_only_for_near_misses() {
        let hooks = ["run_before_pass", "run_after_pass", "should_run"];
        assert_eq!(closest("run_befor_pass", &hooks), Some("run_before_pass"));
        assert_eq!(closest("shuold_run", &hooks), Some("should_run"));
        assert_eq!(closest("helper", &hooks), None);
    }

    #[test]
    fn identifiers() {
        assert!(is_identifier("FoldConstant"));
        assert!(is_identifier("_x1"));
        assert!(!is_identifier("fold-constant"));
        assert!(!is_identifier("1x"));
        assert!(!is_identifier(""));
        assert!(!is_identifier("_"));
    }

    #[test]
    fn type_names_read_like_source() {
        let ty: syn::Type = syn::parse_quote!(Vec<String>);
        assert_eq!(type_text(&ty), "Vec<String>");
        let ty: syn::Type = syn::parse_quote!(std::collections::BTreeMap<String, u32>);
        assert_eq!(type_text(&ty), "std::collections::BTreeMap<String, u32>");
        let ty: syn::Type = syn::parse_quote!(u32);
        assert_eq!(type_text(&ty), "u32");
    }
}
