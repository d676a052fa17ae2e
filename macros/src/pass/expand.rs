//! Code generation for a validated [`PassModel`].

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};

use super::Kind;
use super::args::{Preserved, Required};
use super::model::PassModel;
use super::signature::Role;

/// The struct (for a pass on a function), the trait impl, `From<_> for Pass`, `DefaultPass`
/// and the registration, all helpers inside `const _: () = { .. };`.
pub fn pass(m: &PassModel) -> TokenStream {
    let p = crate::args::private_path(&m.args.krate);
    let p = &p;
    let self_ty = &m.self_ty;
    let name = &m.name;
    let description = &m.description;
    let level = m.args.opt_level;
    let (trait_name, kind_variant, ctor) = match m.kind {
        Kind::Function => (quote!(FunctionPass), quote!(Function), quote!(function)),
        Kind::Module => (quote!(ModulePass), quote!(Module), quote!(module)),
    };
    let ir = ir_type(m);
    let required = required(m, p);
    let (aliases, info_names) = (&required.aliases, &required.info_names);
    let requirements_fn = &required.requirements_fn;
    let preserved_names = preserved_names(m, p);
    let parallel_fn = (m.args.parallel == Some(false)).then(|| {
        quote!(
            fn parallel(&self) -> bool {
                false
            }
        )
    });
    let transform = transform_fn(m, p);
    let (default_impl, registration) = registration(m, p, &ctor);
    let struct_item = m.struct_def.as_ref().map(|def| {
        let (vis, ident, docs) = (&def.vis, &def.ident, &def.docs);
        quote! {
            #docs
            #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
            #vis struct #ident;
        }
    });

    quote! {
        #struct_item

        const _: () = {
            type __IrpassIr = #ir;
            #(#aliases)*

            static __IRPASS_INFO: #p::PassInfo = #p::PassInfo::new_static_preserving(
                #name,
                #level,
                #p::PassKind::#kind_variant,
                &[#(#info_names),*],
                &[#(#preserved_names),*],
                #description,
            );

            #[automatically_derived]
            impl #p::#trait_name<__IrpassIr> for #self_ty {
                fn info(&self) -> &#p::PassInfo {
                    &__IRPASS_INFO
                }
                #requirements_fn
                #parallel_fn
                #transform
            }

            #[automatically_derived]
            impl ::core::convert::From<#self_ty> for #p::Pass<__IrpassIr> {
                fn from(pass: #self_ty) -> Self {
                    #p::Pass::#ctor(pass)
                }
            }

            #default_impl
            #registration
        };
    }
}

/// The IR type, named once so that a mistake in it is reported once.
fn ir_type(m: &PassModel) -> TokenStream {
    let target = &m.sig.target;
    match (m.kind, &m.args.ir, &m.sig.module) {
        (Kind::Module, _, _) => quote!(#target),
        (Kind::Function, Some(ir), _) => quote!(#ir),
        (Kind::Function, None, Some(module)) => quote!(#module),
        (Kind::Function, None, None) => unreachable!("model requires the module parameter or `ir`"),
    }
}

/// What `required = [...]` becomes: type aliases, the names in the `PassInfo`, and the
/// `requirements` method.
struct RequiredParts {
    aliases: Vec<TokenStream>,
    info_names: Vec<TokenStream>,
    requirements_fn: Option<TokenStream>,
}

/// Required passes: each type named once (in an alias), so a typo is one error.
fn required(m: &PassModel, p: &TokenStream) -> RequiredParts {
    let mut aliases = Vec::new();
    let mut info_names = Vec::new();
    let mut requirements = Vec::new();
    for (i, req) in m.args.required.iter().enumerate() {
        match req {
            Required::Name(lit) => {
                info_names.push(quote!(#p::Cow::Borrowed(#lit)));
                requirements.push(quote!(#p::Requirement::Named(#p::Cow::Borrowed(#lit))));
            }
            Required::Type(ty) => {
                let span = syn::spanned::Spanned::span(&**ty);
                let alias = format_ident!("__IrpassRequired{}", i, span = span);
                aliases.push(quote!(type #alias = #ty;));
                info_names.push(quote_spanned!(span=>
                    #p::Cow::Borrowed(<#alias as #p::DefaultPass<__IrpassIr>>::NAME)));
                requirements.push(quote_spanned!(span=>
                    #p::Requirement::Pass(<#alias as #p::DefaultPass<__IrpassIr>>::default_pass())));
            }
        }
    }
    let requirements_fn = (!requirements.is_empty()).then(|| {
        quote! {
            fn requirements(&self) -> #p::Vec<#p::Requirement<__IrpassIr>> {
                #p::Vec::from([#(#requirements),*])
            }
        }
    });
    RequiredParts {
        aliases,
        info_names,
        requirements_fn,
    }
}

/// Preserved analyses: a type's name comes from its `Analysis::NAME`, in the static.
fn preserved_names(m: &PassModel, p: &TokenStream) -> Vec<TokenStream> {
    m.args
        .preserves
        .iter()
        .map(|p_| match p_ {
            Preserved::Name(lit) => quote!(#p::Cow::Borrowed(#lit)),
            Preserved::Type(ty) => {
                let span = syn::spanned::Spanned::span(&**ty);
                quote_spanned!(span=> #p::Cow::Borrowed(<#ty as #p::Analysis>::NAME))
            }
        })
        .collect()
}

/// `transform_function` or `transform_module`: the call of the user's code, each argument
/// spanned at the parameter's type, its result checked at the return type.
fn transform_fn(m: &PassModel, p: &TokenStream) -> TokenStream {
    let target = &m.sig.target;
    let args = m
        .sig
        .params
        .iter()
        .map(|(role, span)| match (role, m.kind) {
            (Role::Target, Kind::Function) => quote_spanned!(*span=> __irpass_func),
            (Role::Target, Kind::Module) | (Role::Module, _) => {
                quote_spanned!(*span=> __irpass_module)
            }
            (Role::Context, _) => quote_spanned!(*span=> __irpass_ctx),
            (Role::Edits, _) => quote_spanned!(*span=> __irpass_edits),
        });
    let receiver = m.method.then(|| quote!(self,));
    let callee = &m.callee;
    let call = quote!(#callee(#receiver #(#args),*));
    // The user's result, in a variable spanned at the return type: a return type that is not
    // the function/module (or a Result of it) is reported there.
    let out_var = proc_macro2::Ident::new("__irpass_out", m.sig.ret_span);
    match m.kind {
        Kind::Function => {
            let out = quote!(<__IrpassIr as #p::IrModule>::Function);
            let target_span = syn::spanned::Spanned::span(target);
            let body = quote_spanned!(target_span=> #p::function_body::<__IrpassIr, #target>);
            let run = quote! {
                #body(__irpass_func, |__irpass_func| {
                    let #out_var = #call;
                    #p::IntoResult::<#target>::into_result(#out_var)
                })
            };
            let signature = quote! {
                fn transform_function(
                    &self,
                    __irpass_func: #out,
                    __irpass_module: &__IrpassIr,
                    __irpass_ctx: &#p::PassContext,
                ) -> #p::Result<#out>
            };
            if !m.sig.params.iter().any(|(role, _)| *role == Role::Edits) {
                return quote!(#signature { #run });
            }
            // A pass that asks for module edits: the map calls the method with edits; called
            // alone, it refuses to drop the edits it asked for.
            quote! {
                #signature {
                    let mut __irpass_asked = #p::ModuleEdits::<__IrpassIr>::default();
                    let __irpass_edits = &mut __irpass_asked;
                    let __irpass_result = #run;
                    #p::edits_refused(__irpass_result, &__irpass_asked)
                }
                fn transform_function_with_edits(
                    &self,
                    _: &<__IrpassIr as #p::IrModule>::Key,
                    __irpass_func: #out,
                    __irpass_module: &__IrpassIr,
                    __irpass_ctx: &#p::PassContext,
                    __irpass_edits: &mut #p::ModuleEdits<__IrpassIr>,
                ) -> #p::Result<#out> {
                    #run
                }
            }
        }
        Kind::Module => {
            quote! {
                fn transform_module(
                    &self,
                    __irpass_module: __IrpassIr,
                    __irpass_ctx: &#p::PassContext,
                ) -> #p::Result<__IrpassIr> {
                    let #out_var = #call;
                    #p::IntoResult::<__IrpassIr>::into_result(#out_var)
                }
            }
        }
    }
}

/// How the registry builds the pass (`DefaultPass`, so `required = [ThisType]` can name it),
/// and its registration with the options it takes.
fn registration(
    m: &PassModel,
    p: &TokenStream,
    ctor: &TokenStream,
) -> (Option<TokenStream>, Option<TokenStream>) {
    let self_ty = &m.self_ty;
    let name = &m.name;
    let default_pass = match (&m.struct_def, m.args.default) {
        (Some(def), _) => {
            let ident = &def.ident;
            Some(quote!(#p::Pass::#ctor(#ident)))
        }
        (None, Some(span)) => {
            Some(quote_spanned!(span=> #p::Pass::#ctor(#p::build_default::<#self_ty>())))
        }
        (None, None) => None,
    };
    let default_impl = default_pass.as_ref().map(|build| {
        quote! {
            #[automatically_derived]
            impl #p::DefaultPass<__IrpassIr> for #self_ty {
                const NAME: &'static str = #name;
                fn default_pass() -> #p::Pass<__IrpassIr> {
                    #build
                }
            }
        }
    });
    let create = default_pass.as_ref().map(|_| {
        quote! {
            fn __irpass_create() -> #p::ErasedPass {
                #p::erase(<#self_ty as #p::DefaultPass<__IrpassIr>>::default_pass())
            }
        }
    });
    let create_arg = match create {
        Some(_) => quote!(#p::Some(__irpass_create)),
        None => quote!(#p::None),
    };
    let options_arg = match m.args.options {
        Some(span) => {
            quote_spanned!(span=> #p::Some(#p::pass_from_options::<__IrpassIr, #self_ty>))
        }
        None => quote!(#p::None),
    };
    let (describe_fn, describing) = match m.args.options {
        Some(span) => (
            Some(quote_spanned! {span=>
                fn __irpass_options() -> #p::Vec<#p::OptionDoc> {
                    #[allow(unused_imports)]
                    use #p::{DescribedOptions as _, NamedOptions as _, UndescribedOptions as _};
                    (&&&#p::OptionsProbe::<#self_ty>::new()).describe()
                }
            }),
            quote!(.describing(__irpass_options)),
        ),
        None => (None, quote!()),
    };
    let registration = (default_pass.is_some() || m.args.options.is_some()).then(|| {
        quote! {
            #create
            #describe_fn
            #p::inventory::submit! {
                #p::PassRegistration::new::<__IrpassIr>(
                    &__IRPASS_INFO,
                    #create_arg,
                    #options_arg,
                    #p::location!(),
                )#describing
            }
        }
    });
    (default_impl, registration)
}
