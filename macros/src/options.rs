//! `#[derive(PassOptions)]`: a pass's options declared once, on its fields.
//!
//! Each field is an option (`Name{field=value}` in pipeline text). Its doc comment is what
//! `--list-passes` says of it, its type what the listing shows; `#[option(config = KEY,
//! default = EXPR)]` on a field of type `Option<T>` makes it fall back to the config key, then
//! to the default, through a generated accessor of the field's name:
//! `self.max_elements(ctx)` is the value in force. Parse (`syn`) → validate (each error on its
//! token, all reported) → expand.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{
    Data, DeriveInput, Expr, Fields, GenericArgument, Ident, LitStr, Path, PathArguments, Type,
};

use crate::docs::doc_text;
use crate::errors::Errors;
use crate::names::type_text;

/// One field's `#[option(...)]` settings.
#[derive(Default)]
struct OptionAttr {
    /// The config key it falls back to (a `pass_config_option!` constant).
    config: Option<Path>,
    /// The value when neither the option nor the key is set (may read `ctx`).
    default: Option<Expr>,
    /// How the listing shows the default, where its value is not the clearest text.
    default_text: Option<LitStr>,
    /// How the listing shows the type, where the Rust type is not the clearest text.
    type_name: Option<LitStr>,
}

/// One option: a named field and its settings.
struct Field {
    ident: Ident,
    ty: Type,
    doc: String,
    attr: OptionAttr,
    /// `T` when the field is `Option<T>`.
    inner: Option<Type>,
}

/// Expands `#[derive(PassOptions)]`.
pub fn derive(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(e) => return e.to_compile_error(),
    };
    let mut errors = Errors::default();
    let mut krate: Path = crate::args::default_crate_path();
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("option")) {
        let parsed = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                let s: LitStr = meta.value()?.parse()?;
                krate = s.parse()?;
                Ok(())
            } else {
                Err(meta.error("on the struct, `#[option(...)]` takes only `crate = \"path\"`"))
            }
        });
        if let Err(e) = parsed {
            errors.push(e);
        }
    }
    let fields = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) => named.named.iter().collect::<Vec<_>>(),
            Fields::Unit => Vec::new(),
            Fields::Unnamed(_) => {
                errors.spanned(
                    &input.ident,
                    "`PassOptions` needs named fields: each field is an option `name=value`",
                );
                Vec::new()
            }
        },
        _ => {
            errors.spanned(
                &input.ident,
                "`PassOptions` derives for a struct whose fields are the options",
            );
            Vec::new()
        }
    };
    let fields: Vec<Field> = fields
        .into_iter()
        .filter_map(|f| field(f, &mut errors))
        .collect();
    let p = crate::args::private_path(&krate);
    let options_fn = options_fn(&fields, &p);
    let accessors = accessors(&fields, &p);
    let (ident, generics) = (&input.ident, &input.generics);
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let errors = errors.to_compile_errors();
    quote! {
        #errors
        #[automatically_derived]
        impl #impl_generics #p::PassOptions for #ident #ty_generics #where_clause {
            #options_fn
        }
        impl #impl_generics #ident #ty_generics #where_clause {
            #(#accessors)*
        }
    }
}

/// Reads one field and its `#[option(...)]`; `None` (after recording why) for one that cannot
/// be an option.
fn field(f: &syn::Field, errors: &mut Errors) -> Option<Field> {
    let ident = f.ident.clone()?;
    let mut attr = OptionAttr::default();
    for a in f.attrs.iter().filter(|a| a.path().is_ident("option")) {
        let parsed = a.parse_nested_meta(|meta| {
            let key = meta.path.get_ident().map(Ident::to_string);
            match key.as_deref() {
                Some("config") => attr.config = Some(meta.value()?.parse()?),
                Some("default") => attr.default = Some(meta.value()?.parse()?),
                Some("default_text") => attr.default_text = Some(meta.value()?.parse()?),
                Some("type_name") => attr.type_name = Some(meta.value()?.parse()?),
                _ => {
                    return Err(meta.error(
                        "unknown key: an option takes `config = KEY`, `default = value`, \
                         `default_text = \"...\"` and `type_name = \"...\"`",
                    ));
                }
            }
            Ok(())
        });
        if let Err(e) = parsed {
            errors.push(e);
        }
    }
    let inner = option_inner(&f.ty);
    if let Some(config) = &attr.config {
        if inner.is_none() {
            errors.spanned(
                &f.ty,
                format!(
                    "an option with a config key is `Option<T>` (unset: the key's value is \
                     used): write `{ident}: Option<{}>`",
                    type_text(&f.ty)
                ),
            );
            return None;
        }
        if attr.default.is_none() {
            errors.spanned(
                config,
                "an option with a config key needs `default = value`, used when neither is set",
            );
            return None;
        }
        if let (Some(ctx), None) = (reads_ctx(attr.default.as_ref()), &attr.default_text) {
            errors.at(
                ctx,
                "a default that reads the context needs `default_text = \"...\"`: the \
                 listing shows it without a context",
            );
        }
    } else if let Some(default) = &attr.default {
        errors.spanned(
            default,
            "`default` is the fallback after a config key: without `config = KEY`, the field's \
             default is the struct's `Default`",
        );
        return None;
    }
    let doc = first_paragraph(&doc_text(&f.attrs));
    if doc.is_empty() {
        errors.spanned(
            &ident,
            "an option needs a doc comment: it is what `--list-passes` says of it",
        );
    }
    Some(Field {
        ident,
        ty: f.ty.clone(),
        doc,
        attr,
        inner,
    })
}

/// Where `default` names `ctx` (the accessor's context), if it does.
fn reads_ctx(default: Option<&Expr>) -> Option<Span> {
    fn find(tokens: TokenStream) -> Option<Span> {
        tokens.into_iter().find_map(|t| match t {
            proc_macro2::TokenTree::Ident(i) if i == "ctx" => Some(i.span()),
            proc_macro2::TokenTree::Group(g) => find(g.stream()),
            _ => None,
        })
    }
    find(quote::ToTokens::to_token_stream(default?))
}

/// `T` of `Option<T>` (written `Option`, `std::option::Option` or `core::option::Option`).
fn option_inner(ty: &Type) -> Option<Type> {
    let Type::Path(tp) = ty else { return None };
    let last = tp.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        GenericArgument::Type(t) if args.args.len() == 1 => Some(t.clone()),
        _ => None,
    }
}

/// The first paragraph of a doc comment as the listing shows it, after a dash: without a final
/// period, its first letter in lower case (unless the first word is an acronym or a name in
/// capitals).
fn first_paragraph(doc: &str) -> String {
    let first = doc.split("\n\n").next().unwrap_or_default().trim();
    let first = first.strip_suffix('.').unwrap_or(first);
    let mut chars = first.chars();
    match (chars.next(), chars.next()) {
        (Some(a), Some(b)) if a.is_uppercase() && !b.is_uppercase() => a
            .to_lowercase()
            .chain(first[a.len_utf8()..].chars())
            .collect(),
        _ => first.to_string(),
    }
}

/// `PassOptions::options`: each field's name, type, default and doc.
fn options_fn(fields: &[Field], p: &TokenStream) -> TokenStream {
    let docs = fields.iter().map(|f| {
        let name = f.ident.to_string();
        let name = name.strip_prefix("r#").unwrap_or(&name).to_string();
        let type_name = match &f.attr.type_name {
            Some(t) => t.value(),
            None => type_text(
                f.inner
                    .as_ref()
                    .filter(|_| f.attr.config.is_some())
                    .unwrap_or(&f.ty),
            ),
        };
        let doc = &f.doc;
        let ident = &f.ident;
        let default = match (&f.attr.config, &f.attr.default_text, &f.attr.default) {
            (Some(key), Some(text), _) => {
                quote!(#p::format!("{}, else {}", #key.name(), #text))
            }
            (Some(key), None, Some(value)) => {
                let inner = f.inner.as_ref();
                quote!({
                    let value: #inner = #value;
                    #p::format!("{}, else {:?}", #key.name(), value)
                })
            }
            (None, Some(text), _) => quote!(#p::String::from(#text)),
            _ => quote!(#p::format!("{:?}", <Self as #p::Default>::default().#ident)),
        };
        quote! {
            #p::OptionDoc {
                name: #name,
                type_name: #type_name,
                default: #default,
                doc: #doc,
            }
        }
    });
    quote! {
        fn options() -> #p::Vec<#p::OptionDoc> {
            #p::vec![#(#docs),*]
        }
    }
}

/// For each option with a config key, `fn name(&self, ctx) -> T`: the option, else the key,
/// else the default.
fn accessors(fields: &[Field], p: &TokenStream) -> Vec<TokenStream> {
    let ctx = Ident::new("ctx", Span::call_site());
    fields
        .iter()
        .filter_map(|f| {
            let key = f.attr.config.as_ref()?;
            let default = f.attr.default.as_ref()?;
            let inner = f.inner.as_ref()?;
            let ident = &f.ident;
            let doc = format!(
                "The `{ident}` in force: the pass's option, else the context's config key, \
                 else the default."
            );
            let span = f.ty.span();
            Some(quote_spanned! {span=>
                #[doc = #doc]
                #[allow(dead_code)]
                pub fn #ident(&self, #ctx: &#p::PassContext) -> #inner {
                    match &self.#ident {
                        #p::Some(value) => #p::Clone::clone(value),
                        #p::None => match #ctx.get(&#key) {
                            #p::Some(value) => #p::Clone::clone(value),
                            #p::None => #default,
                        },
                    }
                }
            })
        })
        .collect()
}
