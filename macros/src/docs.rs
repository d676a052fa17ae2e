//! Doc comments: what becomes a pass's or instrument's description.

use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// The text of the `///` comments (`#[doc = "..."]` attributes) in `attrs`, one space of
/// indentation removed per line, blank lines at both ends dropped.
pub fn doc_text(attrs: &[Attribute]) -> String {
    let mut lines = Vec::new();
    for attr in attrs {
        if let Meta::NameValue(nv) = &attr.meta {
            if nv.path.is_ident("doc") {
                if let Expr::Lit(ExprLit {
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
        }
    }
    lines.join("\n").trim_matches('\n').to_string()
}

/// The `#[doc]` attributes of `attrs`, to copy onto a generated item.
pub fn doc_attrs(attrs: &[Attribute]) -> Vec<&Attribute> {
    attrs.iter().filter(|a| a.path().is_ident("doc")).collect()
}
