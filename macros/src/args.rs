//! The `key = value, flag` lists inside the attributes, parsed with spans kept.

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Expr, ExprLit, Ident, Lit, LitStr, Token};

use crate::errors::Errors;
use crate::names::closest;

/// One entry: `key = value` or a bare `flag`.
pub struct Arg {
    /// The key (keywords such as `crate` allowed).
    pub key: Ident,
    /// The value after `=`, if any.
    pub value: Option<Expr>,
}

impl Parse for Arg {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let key = Ident::parse_any(input)?;
        let value = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            Some(input.parse()?)
        } else {
            None
        };
        Ok(Arg { key, value })
    }
}

/// Parses the list. On a syntax error, records it and returns `None` (the caller then skips the
/// checks that would only repeat it, such as "missing key").
pub fn parse_list(tokens: TokenStream, errors: &mut Errors) -> Option<Vec<Arg>> {
    match Punctuated::<Arg, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(list) => Some(list.into_iter().collect()),
        Err(e) => {
            errors.push(e);
            None
        }
    }
}

/// Checks keys against the known ones and rejects repeats; returns the args to interpret.
pub fn known_args(args: Vec<Arg>, known: &[&str], what: &str, errors: &mut Errors) -> Vec<Arg> {
    let mut seen: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for arg in args {
        let key = arg.key.unraw().to_string();
        if !known.contains(&key.as_str()) {
            errors.at(
                arg.key.span(),
                match closest(&key, known) {
                    Some(near) => format!(
                        "unknown key `{key}` for {what}: did you mean `{near}`? The keys are: {}",
                        known.join(", ")
                    ),
                    None => format!(
                        "unknown key `{key}` for {what}; the keys are: {}",
                        known.join(", ")
                    ),
                },
            );
        } else if seen.contains(&key) {
            errors.at(arg.key.span(), format!("`{key}` is given twice; keep one"));
        } else {
            seen.push(key);
            out.push(arg);
        }
    }
    out
}

/// The key's name.
pub fn key_name(arg: &Arg) -> String {
    arg.key.unraw().to_string()
}

/// A string literal value, or an error saying `example`.
pub fn string_value(arg: &Arg, example: &str, errors: &mut Errors) -> Option<LitStr> {
    match &arg.value {
        Some(Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        })) => Some(s.clone()),
        Some(other) => {
            errors.spanned(
                other,
                format!("`{}` takes a string literal: `{example}`", key_name(arg)),
            );
            None
        }
        None => {
            errors.at(
                arg.key.span(),
                format!("`{}` needs a value: `{example}`", key_name(arg)),
            );
            None
        }
    }
}

/// A flag (`default`), or an error if a value was given.
pub fn flag(arg: &Arg, errors: &mut Errors) -> Option<Span> {
    match &arg.value {
        None => Some(arg.key.span()),
        Some(Expr::Lit(ExprLit {
            lit: Lit::Bool(b), ..
        })) if b.value => Some(arg.key.span()),
        Some(Expr::Lit(ExprLit {
            lit: Lit::Bool(_), ..
        })) => None,
        Some(other) => {
            errors.spanned(
                other,
                format!("`{0}` is a flag: write `{0}` alone", key_name(arg)),
            );
            None
        }
    }
}

/// A boolean value (`parallel = false`).
pub fn bool_value(arg: &Arg, errors: &mut Errors) -> Option<bool> {
    match &arg.value {
        Some(Expr::Lit(ExprLit {
            lit: Lit::Bool(b), ..
        })) => Some(b.value),
        Some(other) => {
            errors.spanned(
                other,
                format!("`{}` takes `true` or `false`", key_name(arg)),
            );
            None
        }
        None => Some(true),
    }
}

/// The `crate = "path"` override: the path generated code uses for irpass.
pub fn crate_path(arg: &Arg, errors: &mut Errors) -> Option<syn::Path> {
    let lit = string_value(arg, "crate = \"my_crate::irpass\"", errors)?;
    match lit.parse_with(syn::Path::parse_mod_style) {
        Ok(mut path) => {
            // `my_crate::irpass` names an extern crate; `crate::..`, `self::..`, `super::..`
            // are relative and keep their form.
            let relative = path
                .segments
                .first()
                .is_some_and(|s| s.ident == "crate" || s.ident == "self" || s.ident == "super");
            if !relative {
                path.leading_colon.get_or_insert_with(Default::default);
            }
            Some(path)
        }
        Err(_) => {
            errors.spanned(
                &lit,
                "`crate` takes the path of the irpass crate as re-exported: `crate = \"my_crate::irpass\"`",
            );
            None
        }
    }
}

/// The default path of irpass in generated code.
/// `krate::__private_vMAJOR_MINOR`: the module of `irpass` the generated code names, named for
/// this crate's version, so that a pair of `irpass` and `irpass-macros` of different versions
/// does not compile (irpass also pins this crate with `=`).
pub fn private_path(krate: &impl quote::ToTokens) -> proc_macro2::TokenStream {
    let module = syn::Ident::new(
        concat!(
            "__private_v",
            env!("CARGO_PKG_VERSION_MAJOR"),
            "_",
            env!("CARGO_PKG_VERSION_MINOR")
        ),
        proc_macro2::Span::call_site(),
    );
    quote::quote!(#krate::#module)
}

pub fn default_crate_path() -> syn::Path {
    syn::parse_quote!(::irpass)
}
