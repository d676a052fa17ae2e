//! Checks of a rule set, each error on the token at fault: the texts parse (with the parser
//! that reads them at run time), replacements use only bound holes, holes are Rust names,
//! rule names are unique, `#[pass(...)]` is well formed.

use std::collections::HashMap;

use irpass_ir::pattern::{Pattern, PatternError, Template};
use proc_macro2::{Span, TokenStream};
use syn::{Ident, LitInt, LitStr};

use super::model::{Replacement, RuleDef, RuleSetDef};

/// What the checks found.
pub struct Checked {
    /// The compile errors (empty when there are none).
    pub errors: TokenStream,
    /// Each rule's holes, as the identifiers guards and blocks bind (empty for a rule whose
    /// pattern does not parse).
    pub holes: Vec<Vec<Hole>>,
    /// `#[pass(name = "...", opt_level = N)]`, when given and well formed.
    pub pass: Option<PassArgs>,
}

/// A hole as a guard or block binds it.
pub struct Hole {
    pub ident: Ident,
    /// Whether every match captures it (else it is only on one side of an alternative, and
    /// bound as an `Option`).
    pub always: bool,
}

/// The arguments of `#[pass(...)]`.
pub struct PassArgs {
    pub name: LitStr,
    pub opt_level: LitInt,
}

/// Names a guard or a block binds besides the holes.
const RESERVED: [&str; 3] = ["cx", "m", "root"];

pub fn check(set: &RuleSetDef) -> Checked {
    let mut errors: Option<syn::Error> = None;
    let mut push = |e: syn::Error| match &mut errors {
        Some(first) => first.combine(e),
        None => errors = Some(e),
    };
    if !is_rule_set(&set.ty) {
        push(syn::Error::new_spanned(
            &set.ty,
            "a rule set's type is `RuleSet` (irpass_ir::pattern::RuleSet)",
        ));
    }
    let mut seen: HashMap<String, &Ident> = HashMap::new();
    let mut holes = Vec::with_capacity(set.rules.len());
    for rule in &set.rules {
        if let Some(first) = seen.insert(rule.name.to_string(), &rule.name) {
            let mut e = syn::Error::new(
                rule.name.span(),
                format!("a second rule named `{}`", rule.name),
            );
            e.combine(syn::Error::new(first.span(), "the first is here"));
            push(e);
        }
        holes.push(check_rule(rule, &mut push));
    }
    let pass = set.pass.as_ref().and_then(|attr| match pass_args(attr) {
        Ok(p) => Some(p),
        Err(e) => {
            push(e);
            None
        }
    });
    Checked {
        errors: errors.map(|e| e.to_compile_error()).unwrap_or_default(),
        holes,
        pass,
    }
}

fn is_rule_set(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "RuleSet" && s.arguments.is_none()))
}

/// Checks one rule; its holes as identifiers.
fn check_rule(rule: &RuleDef, push: &mut impl FnMut(syn::Error)) -> Vec<Hole> {
    let pattern = match Pattern::parse(&rule.pattern.value()) {
        Ok(p) => p,
        Err(e) => {
            push(text_error(&rule.pattern, &e, "in the pattern"));
            return Vec::new();
        }
    };
    let names = pattern.holes();
    let always = pattern.always_bound();
    let mut idents = Vec::with_capacity(names.len());
    for name in &names {
        match syn::parse_str::<Ident>(name) {
            Ok(_) if RESERVED.contains(&name.as_str()) => push(syn::Error::new(
                rule.pattern.span(),
                format!("the hole `?{name}` shadows the `{name}` a guard or block sees; rename it"),
            )),
            Ok(_) => idents.push(Hole {
                ident: Ident::new(name, rule.pattern.span()),
                always: always.contains(name),
            }),
            Err(_) => push(syn::Error::new(
                rule.pattern.span(),
                format!(
                    "the hole `?{name}` is not a Rust identifier, which guards and blocks bind it as"
                ),
            )),
        }
    }
    if let Replacement::Template(t) = &rule.replacement {
        match Template::parse(&t.value()) {
            Ok(template) => {
                let bound: Vec<&str> = names.iter().map(String::as_str).collect();
                for hole in template.holes() {
                    if !bound.contains(&hole.as_str()) {
                        let near = closest(&hole, &bound);
                        let hint = near
                            .map(|n| format!("; did you mean `?{n}`?"))
                            .unwrap_or_default();
                        push(syn::Error::new(
                            t.span(),
                            format!("`?{hole}` is not bound by the pattern{hint}"),
                        ));
                    }
                }
            }
            Err(e) => push(text_error(t, &e, "in the replacement")),
        }
    }
    idents
}

/// The bound name closest to `name`, if one is close.
fn closest<'a>(name: &str, bound: &[&'a str]) -> Option<&'a str> {
    bound
        .iter()
        .map(|b| (strsim::levenshtein(name, b), *b))
        .filter(|(d, b)| *d <= (b.len().max(name.len()) / 2).max(1))
        .min()
        .map(|(_, b)| b)
}

/// A pattern or template error on its string literal: on the part at fault where the
/// compiler can point inside a literal, on the literal otherwise, the message showing where.
fn text_error(lit: &LitStr, e: &PatternError, context: &str) -> syn::Error {
    let span = e
        .range()
        .and_then(|r| inner_span(lit, r))
        .unwrap_or_else(|| lit.span());
    syn::Error::new(span, format!("{context}: {e}"))
}

/// The span of bytes `range` of the literal's value, when the value is written without escapes
/// and the compiler supports spans inside literals.
fn inner_span(lit: &LitStr, range: std::ops::Range<usize>) -> Option<Span> {
    let token = lit.token();
    let written = token.to_string();
    let value = lit.value();
    if written.len() != value.len() + 2 || !written.starts_with('"') {
        return None;
    }
    token.subspan(range.start + 1..range.end.max(range.start + 1) + 1)
}

/// `#[pass(name = "...", opt_level = N)]`.
fn pass_args(attr: &syn::Attribute) -> syn::Result<PassArgs> {
    let mut name = None;
    let mut opt_level = None;
    attr.parse_nested_meta(|meta| {
        if meta.path.is_ident("name") {
            name = Some(meta.value()?.parse::<LitStr>()?);
            Ok(())
        } else if meta.path.is_ident("opt_level") {
            let lit = meta.value()?.parse::<LitInt>()?;
            match lit.base10_parse::<u32>() {
                Ok(0..=4) => {
                    opt_level = Some(lit);
                    Ok(())
                }
                _ => Err(syn::Error::new(lit.span(), "`opt_level` is 0 to 4")),
            }
        } else {
            Err(meta.error("`#[pass(...)]` takes `name = \"...\"` and `opt_level = N`"))
        }
    })?;
    match (name, opt_level) {
        (Some(name), Some(opt_level)) => Ok(PassArgs { name, opt_level }),
        (None, _) => Err(syn::Error::new_spanned(
            attr,
            "`#[pass(...)]` needs `name = \"...\"`",
        )),
        (_, None) => Err(syn::Error::new_spanned(
            attr,
            "`#[pass(...)]` needs `opt_level = N`",
        )),
    }
}
