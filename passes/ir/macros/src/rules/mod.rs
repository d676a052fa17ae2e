//! `rules!`: parse into a typed model, validate with spans, expand.

mod expand;
mod model;
mod validate;

use proc_macro2::TokenStream;

/// The expansion of `rules! { ... }`.
pub fn expand(input: TokenStream) -> TokenStream {
    let sets = match syn::parse2::<model::Input>(input) {
        Ok(input) => input.sets,
        Err(e) => return e.to_compile_error(),
    };
    let mut out = TokenStream::new();
    for set in &sets {
        let checked = validate::check(set);
        out.extend(expand::set(set, &checked));
    }
    out
}
