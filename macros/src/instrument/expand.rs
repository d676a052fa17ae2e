//! Code generation for a validated [`InstrumentModel`].

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};

use super::InstrumentModel;

/// The `PassInstrument` impl (or `PassInstrumentMut`, when a hook takes `&mut self`) forwarding
/// to the hooks written, and the registration of a `default` instrument.
pub fn instrument(m: &InstrumentModel) -> TokenStream {
    let p = &m.krate;
    let p = crate::args::private_path(&p);
    let self_ty = &m.self_ty;
    let name = &m.name;
    let description = &m.description;
    let receiver = if m.mutable {
        quote!(&mut self)
    } else {
        quote!(&self)
    };

    let hooks = m.hooks.iter().map(|w| {
        let hook_ident = format_ident!("{}", w.hook.name);
        let params = w.hook.params.iter().map(|(param, _)| {
            let ident = format_ident!("__irpass_{}", param);
            let ty = match *param {
                "module" => quote!(&dyn #p::ModuleView),
                "info" => quote!(&#p::PassInfo),
                "reason" => quote!(&#p::SkipReason),
                "event" => quote!(&#p::AnalysisEvent<'_>),
                _ => quote!(&(dyn #p::Error + 'static)),
            };
            quote!(#ident: #ty)
        });
        let args = w
            .hook
            .params
            .iter()
            .zip(&w.param_spans)
            .map(|((param, _), span)| {
                let ident = format_ident!("__irpass_{}", param, span = *span);
                quote_spanned!(*span=> #ident)
            });
        let returns = if w.hook.returns == "bool" {
            quote!(bool)
        } else {
            quote!(())
        };
        let wrap = quote_spanned!(w.ret_span=> #p::IntoResult::<#returns>::into_result);
        quote! {
            fn #hook_ident(#receiver, #(#params),*) -> #p::Result<#returns> {
                #wrap(<#self_ty>::#hook_ident(self, #(#args),*))
            }
        }
    });

    let trait_impl = if m.mutable {
        quote! {
            #[automatically_derived]
            impl #p::PassInstrumentMut for #self_ty {
                const NAME: &'static str = #name;
                #(#hooks)*
            }
        }
    } else {
        quote! {
            #[automatically_derived]
            impl #p::PassInstrument for #self_ty {
                fn name(&self) -> &str {
                    #name
                }
                #(#hooks)*
            }
        }
    };

    let registration = m.default.map(|span| {
        let build = quote_spanned!(span=> #p::build_default::<#self_ty>());
        let build = if m.mutable {
            quote!(#p::Locked::new(#build))
        } else {
            build
        };
        quote! {
            fn __irpass_create() -> #p::Arc<dyn #p::PassInstrument> {
                #p::Arc::new(#build)
            }
            #p::inventory::submit! {
                #p::InstrumentRegistration {
                    name: #name,
                    description: #description,
                    create: __irpass_create,
                    location: #p::location!(),
                }
            }
        }
    });

    quote! {
        const _: () = {
            #trait_impl
            #registration
        };
    }
}
