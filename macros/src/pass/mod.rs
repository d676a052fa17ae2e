//! `#[function_pass]` and `#[module_pass]`: parse the item into a [`model::PassModel`],
//! validate it with spans, expand it.

mod args;
mod expand;
mod model;
mod signature;

use proc_macro2::TokenStream;
use quote::ToTokens;

use crate::errors::Errors;

/// Which of the two pass attributes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Function,
    Module,
}

impl Kind {
    /// The attribute's name.
    pub fn attribute(self) -> &'static str {
        match self {
            Kind::Function => "function_pass",
            Kind::Module => "module_pass",
        }
    }

    /// "function pass" / "module pass".
    pub fn noun(self) -> &'static str {
        match self {
            Kind::Function => "function pass",
            Kind::Module => "module pass",
        }
    }

    /// What the pass transforms.
    pub fn target_word(self) -> &'static str {
        match self {
            Kind::Function => "function",
            Kind::Module => "module",
        }
    }

    /// The trait method an impl block defines.
    pub fn method(self) -> &'static str {
        match self {
            Kind::Function => "transform_function",
            Kind::Module => "transform_module",
        }
    }

    /// The shape of a valid signature, for messages.
    pub fn signature_example(self, method: bool) -> String {
        let (name, recv) = if method {
            (self.method(), "&self, ")
        } else {
            ("name", "")
        };
        match self {
            Kind::Function => format!(
                "fn {name}({recv}func: Function, module: &Module, ctx: &PassContext) -> Result<Function>"
            ),
            Kind::Module => {
                format!("fn {name}({recv}module: Module, ctx: &PassContext) -> Result<Module>")
            }
        }
    }
}

/// Expands `#[function_pass(attr)]` / `#[module_pass(attr)]` on `item`.
pub fn expand(kind: Kind, attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let item: syn::Item = match syn::parse2(item.clone()) {
        Ok(item) => item,
        // Not an item rustc can parse: rustc reports the syntax error itself.
        Err(_) => return item,
    };
    let expanded = match &item {
        syn::Item::Fn(f) => model::from_fn(kind, attr, f, &mut errors).map(|m| expand::pass(&m)),
        syn::Item::Impl(i) => {
            model::from_impl(kind, attr, i, &mut errors).map(|m| expand::pass(&m))
        }
        other => {
            errors.spanned(
                crate::errors::item_head(other),
                format!(
                    "`#[{}]` goes on a function (`{}`) or on an impl block that defines `fn {}`",
                    kind.attribute(),
                    kind.signature_example(false),
                    kind.method()
                ),
            );
            None
        }
    };
    let mut out = item.to_token_stream();
    match expanded {
        Some(tokens) => out.extend(tokens),
        None => {
            if let syn::Item::Fn(f) = &item {
                // Keep the struct the user will name elsewhere, so one mistake gives one error.
                out.extend(model::placeholder_struct(kind, f));
            }
        }
    }
    out.extend(errors.to_compile_errors());
    out
}
