//! `#[pass_instrument]`: read the hooks an impl block writes, validate them, expand.

mod expand;
mod hooks;

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{FnArg, ImplItem, ItemImpl, LitStr, ReturnType, Type};

use crate::args;
use crate::docs::doc_text;
use crate::errors::Errors;
use crate::names::{closest, is_identifier};
use hooks::{HOOKS, Hook};

/// One hook the user wrote.
pub struct WrittenHook {
    pub hook: &'static Hook,
    /// The span of each parameter's type, in order (the receiver excluded).
    pub param_spans: Vec<Span>,
    /// The span of the return type (or the name, when there is none).
    pub ret_span: Span,
}

/// A validated instrument.
pub struct InstrumentModel {
    pub krate: syn::Path,
    pub self_ty: Type,
    pub name: String,
    pub description: String,
    /// `default`: registered by name, built with `Default`.
    pub default: Option<Span>,
    /// Whether a hook takes `&mut self` (then the instrument is used through `Locked`).
    pub mutable: bool,
    pub hooks: Vec<WrittenHook>,
}

/// Expands `#[pass_instrument(attr)]` on `item`.
pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let parsed: syn::Item = match syn::parse2(item.clone()) {
        Ok(item) => item,
        Err(_) => return item,
    };
    let mut out = parsed.to_token_stream();
    match &parsed {
        syn::Item::Impl(imp) => {
            if let Some(model) = model(attr, imp, &mut errors) {
                out.extend(expand::instrument(&model));
            }
        }
        other => errors.spanned(
            crate::errors::item_head(other),
            "`#[pass_instrument]` goes on an impl block that writes hooks: `impl MyInstrument { fn run_before_pass(&self, module: &dyn ModuleView, info: &PassInfo) { .. } }`",
        ),
    }
    out.extend(errors.to_compile_errors());
    out
}

fn model(attr: TokenStream, imp: &ItemImpl, errors: &mut Errors) -> Option<InstrumentModel> {
    let mut krate = args::default_crate_path();
    let mut name = None::<LitStr>;
    let mut default = None;
    if let Some(list) = args::parse_list(attr, errors) {
        for arg in args::known_args(
            list,
            &["name", "default", "crate"],
            "`#[pass_instrument]`",
            errors,
        ) {
            match args::key_name(&arg).as_str() {
                "name" => {
                    if let Some(lit) = args::string_value(&arg, "name = \"CountPasses\"", errors) {
                        if is_identifier(&lit.value()) {
                            name = Some(lit);
                        } else {
                            errors.spanned(&lit, "an instrument name is an identifier (letters, digits, `_`), so that it can be switched on by name: `name = \"CountPasses\"`");
                        }
                    }
                }
                "default" => default = args::flag(&arg, errors),
                "crate" => {
                    if let Some(path) = args::crate_path(&arg, errors) {
                        krate = path;
                    }
                }
                _ => unreachable!("known_args only lets known keys through"),
            }
        }
    }
    if let Some((_, path, _)) = &imp.trait_ {
        errors.spanned(path, "`#[pass_instrument]` goes on an inherent impl block (`impl MyInstrument { .. }`); it writes the `PassInstrument` impl itself");
        return None;
    }
    if !imp.generics.params.is_empty() {
        errors.spanned(&imp.generics, "an instrument type cannot be generic here: implement `PassInstrument` by hand for a generic instrument");
        return None;
    }
    let self_ty = (*imp.self_ty).clone();
    let type_name = match &self_ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    };
    let name = match (name, type_name) {
        (Some(lit), _) => lit.value(),
        (None, Some(n)) => n,
        (None, None) => {
            errors.spanned(
                &self_ty,
                "an instrument type is a named struct or enum; or give it a `name = \"...\"`",
            );
            return None;
        }
    };

    let hook_names: Vec<&str> = HOOKS.iter().map(|h| h.name).collect();
    let mut hooks = Vec::new();
    let mut mutable = false;
    for item in &imp.items {
        let ImplItem::Fn(f) = item else { continue };
        let fname = f.sig.ident.to_string();
        let Some(hook) = HOOKS.iter().find(|h| h.name == fname) else {
            if let Some(near) = closest(&fname, &hook_names) {
                errors.spanned(
                    &f.sig.ident,
                    format!(
                        "no instrument hook is named `{fname}`; did you mean `{near}`? The hooks are: {}",
                        hook_names.join(", ")
                    ),
                );
            }
            continue;
        };
        if let Some(written) = read_hook(hook, &f.sig, &mut mutable, errors) {
            hooks.push(written);
        }
    }
    let description = doc_text(&imp.attrs);
    Some(InstrumentModel {
        krate,
        self_ty,
        name,
        description,
        default,
        mutable,
        hooks,
    })
}

fn read_hook(
    hook: &'static Hook,
    sig: &syn::Signature,
    mutable: &mut bool,
    errors: &mut Errors,
) -> Option<WrittenHook> {
    let expected = hook.signature();
    let wrong = |errors: &mut Errors, span: Span, what: &str| {
        errors.at(
            span,
            format!("{what}: the hook `{}` is `{expected}`", hook.name),
        );
        None
    };
    if let Some(a) = &sig.asyncness {
        return wrong(errors, a.span, "a hook cannot be `async`");
    }
    if !sig.generics.params.is_empty() {
        return wrong(errors, sig.generics.span(), "a hook cannot be generic");
    }
    match sig.inputs.first() {
        Some(FnArg::Receiver(r)) if r.reference.is_some() => {
            if r.mutability.is_some() {
                *mutable = true;
            }
        }
        Some(other) => {
            return wrong(
                errors,
                other.span(),
                "a hook takes `&self` or `&mut self` first",
            );
        }
        None => {
            return wrong(
                errors,
                sig.paren_token.span.join(),
                "a hook takes `&self` or `&mut self` first",
            );
        }
    }
    let params: Vec<&syn::PatType> = sig
        .inputs
        .iter()
        .skip(1)
        .filter_map(|a| match a {
            FnArg::Typed(t) => Some(t),
            FnArg::Receiver(_) => None,
        })
        .collect();
    if params.len() != hook.params.len() {
        let span = params
            .get(hook.params.len())
            .map(|p| p.span())
            .unwrap_or_else(|| sig.paren_token.span.join());
        return wrong(
            errors,
            span,
            &format!(
                "`{}` takes {} parameter{} after `self`, not {}",
                hook.name,
                hook.params.len(),
                if hook.params.len() == 1 { "" } else { "s" },
                params.len()
            ),
        );
    }
    // A module parameter written as a concrete IR (`&MyModule`) would get rustc's type mismatch
    // with a suggestion that does not apply: an instrument sees the modules of every IR.
    for (p, (name, _)) in params.iter().zip(hook.params) {
        if *name == "module"
            && let syn::Type::Reference(r) = &*p.ty
            && !matches!(&*r.elem, syn::Type::TraitObject(_))
        {
            let ty = &r.elem;
            return wrong(
                errors,
                ty.span(),
                &format!(
                    "an instrument sees the module of every IR (`&dyn ModuleView`), not a `{}`; to read one, downcast with `module.as_any().downcast_ref::<{}>()`",
                    quote::quote!(#ty),
                    quote::quote!(#ty),
                ),
            );
        }
    }
    let ret_span = match &sig.output {
        ReturnType::Type(_, ty) => ty.span(),
        ReturnType::Default if hook.returns == "()" => sig.ident.span(),
        ReturnType::Default => {
            return wrong(
                errors,
                sig.paren_token.span.close(),
                &format!(
                    "`{}` returns `{}` or `Result<{}>`",
                    hook.name, hook.returns, hook.returns
                ),
            );
        }
    };
    Some(WrittenHook {
        hook,
        param_spans: params.iter().map(|p| p.ty.span()).collect(),
        ret_span,
    })
}
