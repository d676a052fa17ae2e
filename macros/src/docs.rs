//! Doc comments: what becomes a pass's or instrument's description.

use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// The text of the `///` comments (`#[doc = "..."]` attributes) in `attrs`, one space of
/// indentation removed per line, blank lines at both ends dropped.
pub fn doc_text(attrs: &[Attribute]) -> String {
    let mut lines = Vec::new();
    for attr in attrs {
        if let Meta::NameValue(nv) = &attr.meta
            && nv.path.is_ident("doc")
            && let Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) = &nv.value
        {
            let value = s.value();
            if value.is_empty() {
                lines.push(String::new());
            }
            for line in value.lines() {
                lines.push(
                    line.strip_prefix(' ')
                        .unwrap_or(line)
                        .trim_end()
                        .to_string(),
                );
            }
        }
    }
    unwrap_paragraphs(&lines).trim_matches('\n').to_string()
}

/// Joins the lines of each paragraph with spaces, as Markdown reads a soft line break, so that
/// a description's first line is its first sentence and not half of it. Blank lines, list
/// items, headings and fenced code keep their line breaks.
fn unwrap_paragraphs(lines: &[String]) -> String {
    let mut out = String::new();
    let mut in_fence = false;
    let mut prev_joinable = false;
    for line in lines {
        let fence = line.trim_start().starts_with("```");
        let structural = line.is_empty()
            || fence
            || in_fence
            || line.trim_start().starts_with(['-', '*', '#', '|'])
            || line.starts_with("    ");
        if !out.is_empty() {
            out.push(if prev_joinable && !structural {
                ' '
            } else {
                '\n'
            });
        }
        out.push_str(line);
        if fence {
            in_fence = !in_fence;
        }
        prev_joinable = !structural && !line.is_empty();
    }
    out
}

/// The `#[doc]` attributes of `attrs`, to copy onto a generated item.
pub fn doc_attrs(attrs: &[Attribute]) -> Vec<&Attribute> {
    attrs.iter().filter(|a| a.path().is_ident("doc")).collect()
}

#[cfg(test)]
mod tests {
    use super::unwrap_paragraphs;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn soft_wrapped_lines_join_and_structure_stays() {
        let text = "Folds constants, and\nnever huge ones.\n\nSecond paragraph.\n- item one\n- item two\n```\ncode\nmore\n```";
        assert_eq!(
            unwrap_paragraphs(&lines(text)),
            "Folds constants, and never huge ones.\n\nSecond paragraph.\n- item one\n- item two\n```\ncode\nmore\n```"
        );
    }
}
