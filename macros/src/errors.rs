//! Collecting every error of one macro call, so that all of them are reported at once.

use proc_macro2::{Span, TokenStream};
use std::fmt::Display;

/// The errors found so far, each on its own token.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    /// Records `error`.
    pub fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(first) => first.combine(error),
            None => self.0 = Some(error),
        }
    }

    /// Records an error with `message` at `span`.
    pub fn at(&mut self, span: Span, message: impl Display) {
        self.push(syn::Error::new(span, message));
    }

    /// Records an error with `message` spanning `tokens`.
    pub fn spanned(&mut self, tokens: impl quote::ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// How many errors were recorded.
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |e| e.clone().into_iter().count())
    }

    /// The `compile_error!`s of all recorded errors (nothing when there are none).
    pub fn to_compile_errors(&self) -> TokenStream {
        self.0
            .as_ref()
            .map(syn::Error::to_compile_error)
            .unwrap_or_default()
    }
}

/// The tokens to point at when an attribute is on the wrong kind of item: its keyword and
/// name (`struct Foo`), a function's signature, or the whole item.
pub fn item_head(item: &syn::Item) -> TokenStream {
    use quote::ToTokens;
    match item {
        syn::Item::Struct(s) => {
            let (kw, name) = (&s.struct_token, &s.ident);
            quote::quote!(#kw #name)
        }
        syn::Item::Enum(e) => e.enum_token.into_token_stream(),
        syn::Item::Trait(t) => t.trait_token.into_token_stream(),
        syn::Item::Fn(f) => f.sig.to_token_stream(),
        other => other.to_token_stream(),
    }
}
