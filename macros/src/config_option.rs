//! `pass_config_option!`: typed config keys, declared and registered.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Ident, Lit, LitStr, Token, Type, Visibility};

use crate::docs::doc_text;
use crate::errors::Errors;
use crate::names::type_text;

/// One declared key.
struct Declaration {
    attrs: Vec<Attribute>,
    /// `None` for the short form, which declares no constant.
    constant: Option<(Visibility, Ident)>,
    ty: Type,
    key: Expr,
}

/// The whole input: one short-form key, or any number of long-form declarations.
struct Input(Vec<Declaration>);

impl Parse for Input {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let long = input.peek(Token![#])
            || input.peek(Token![pub])
            || (input.peek(Ident::peek_any) && input.peek2(Token![:]) && !input.peek2(Token![::]));
        if !long {
            // The short TVM form: pass_config_option!("ns.Key", Type)
            let key: Expr = input.parse()?;
            input.parse::<Token![,]>()?;
            let ty: Type = input.parse()?;
            if input.peek(Token![,]) {
                input.parse::<Token![,]>()?;
            }
            return Ok(Input(vec![Declaration {
                attrs: Vec::new(),
                constant: None,
                ty,
                key,
            }]));
        }
        let mut out = Vec::new();
        while !input.is_empty() {
            let attrs = input.call(Attribute::parse_outer)?;
            let vis: Visibility = input.parse()?;
            let ident: Ident = input.parse()?;
            input.parse::<Token![:]>()?;
            let ty: Type = input.parse()?;
            input.parse::<Token![=]>()?;
            let key: Expr = input.parse()?;
            if !input.is_empty() {
                input.parse::<Token![;]>()?;
            }
            out.push(Declaration {
                attrs,
                constant: Some((vis, ident)),
                ty,
                key,
            });
        }
        Ok(Input(out))
    }
}

/// Expands `pass_config_option! { .. }`. The input may start with `[path]`, the path of irpass
/// (what `irpass::pass_config_option!` passes as `$crate`); the default is `::irpass`.
pub fn expand(tokens: TokenStream) -> TokenStream {
    let (krate, tokens) = split_crate_path(tokens);
    let input: Input = match syn::parse2(tokens) {
        Ok(input) => input,
        Err(e) => {
            let mut msg = e.to_string();
            msg.push_str(": write `pass_config_option! { /// doc\n pub NAME: Type = \"ns.Key\"; }` or `pass_config_option!(\"ns.Key\", Type)`");
            return syn::Error::new(e.span(), msg).to_compile_error();
        }
    };
    let p = crate::args::private_path(&krate);
    let mut errors = Errors::default();
    let mut out = TokenStream::new();
    for decl in &input.0 {
        let key = match &decl.key {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => {
                if valid_key(&s.value()) {
                    s.clone()
                } else {
                    errors.spanned(s, "a config key is `namespace.Name` (identifiers joined by dots), e.g. \"relay.FuseOps.max_depth\"");
                    LitStr::new("invalid.Key", s.span())
                }
            }
            other => {
                let shown = other.to_token_stream().to_string().replace(' ', "");
                errors.spanned(other, format!("the key is a string literal: `\"{shown}\"`"));
                LitStr::new("invalid.Key", other.span())
            }
        };
        let ty = &decl.ty;
        let type_name = type_text(ty);
        let doc = doc_text(&decl.attrs);
        let option = quote_spanned!(ty.span()=> #p::config_option::<#ty>);
        if let Some((vis, ident)) = &decl.constant {
            let attrs = &decl.attrs;
            out.extend(quote! {
                #(#attrs)*
                #vis const #ident: #p::ConfigKey<#ty> = #p::ConfigKey::new(#key);
            });
        }
        out.extend(quote! {
            const _: () = {
                #p::inventory::submit! {
                    #option(#key, #type_name, #doc, #p::location!())
                }
            };
        });
    }
    out.extend(errors.to_compile_errors());
    out
}

/// Splits off a leading `[path]` group.
fn split_crate_path(tokens: TokenStream) -> (TokenStream, TokenStream) {
    let mut iter = tokens.clone().into_iter();
    if let Some(proc_macro2::TokenTree::Group(g)) = iter.next()
        && g.delimiter() == proc_macro2::Delimiter::Bracket
    {
        return (g.stream(), iter.collect());
    }
    (quote!(::irpass), tokens)
}

/// `namespace.Name`: two or more identifiers joined by dots.
fn valid_key(key: &str) -> bool {
    let parts: Vec<&str> = key.split('.').collect();
    parts.len() >= 2
        && parts.iter().all(|p| {
            let mut chars = p.chars();
            matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_shapes() {
        assert!(valid_key("relay.FuseOps.max_depth"));
        assert!(valid_key("tir.UnrollLoop"));
        assert!(!valid_key("NoNamespace"));
        assert!(!valid_key("a..b"));
        assert!(!valid_key("a.b c"));
        assert!(!valid_key(""));
    }
}
