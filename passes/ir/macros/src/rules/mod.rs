//! `rules!`: parse into a typed model, validate with spans, expand.

mod expand;
mod model;
mod validate;

use proc_macro2::TokenStream;

/// The expansion of `rules! { ... }`. The input may start with `[path]`, the path of
/// irpass-ir as the caller reaches it (what a crate re-exporting the macro passes, so that its
/// users need no direct dependency on irpass-ir); the default is `::irpass_ir`.
pub fn expand(input: TokenStream) -> TokenStream {
    let (ir, input) = split_ir_path(input);
    let sets = match syn::parse2::<model::Input>(input) {
        Ok(input) => input.sets,
        Err(e) => return e.to_compile_error(),
    };
    let mut out = TokenStream::new();
    for set in &sets {
        let checked = validate::check(set);
        out.extend(expand::set(set, &checked, &ir));
    }
    out
}

/// The leading `[path]` and the rest, or `::irpass_ir` and the whole input.
fn split_ir_path(tokens: TokenStream) -> (TokenStream, TokenStream) {
    let mut iter = tokens.clone().into_iter();
    if let Some(proc_macro2::TokenTree::Group(g)) = iter.next()
        && g.delimiter() == proc_macro2::Delimiter::Bracket
    {
        return (g.stream(), iter.collect());
    }
    (quote::quote!(::irpass_ir), tokens)
}
