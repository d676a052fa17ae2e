//! The typed model of one pass definition, built from a function or an impl block.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Ident, ImplItem, ItemFn, ItemImpl, Type, Visibility};

use super::Kind;
use super::args::{self, PassArgs};
use super::signature::{self, PassSignature};
use crate::docs::{doc_attrs, doc_text};
use crate::errors::Errors;
use crate::names::{closest, type_text, upper_camel};

/// A pass defined on a function: the unit struct to generate.
pub struct StructDef {
    pub vis: Visibility,
    pub ident: Ident,
    pub docs: TokenStream,
}

/// Everything the expansion needs, validated.
pub struct PassModel {
    pub kind: Kind,
    pub args: PassArgs,
    /// The registered name.
    pub name: String,
    /// The doc comment.
    pub description: String,
    /// The pass type (the generated struct or the impl block's type).
    pub self_ty: Type,
    /// `Some` for a pass defined on a function.
    pub struct_def: Option<StructDef>,
    /// The user's function or method to call.
    pub callee: TokenStream,
    /// Whether `callee` takes `&self` first.
    pub method: bool,
    pub sig: PassSignature,
}

/// A pass defined on a function: `#[function_pass(..)] fn fold_constant(..) -> ..`.
pub fn from_fn(
    kind: Kind,
    attr: TokenStream,
    f: &ItemFn,
    errors: &mut Errors,
) -> Option<PassModel> {
    let args = args::parse(attr, kind, false, errors);
    let sig = signature::read(&f.sig, kind, false, errors)?;
    require_ir(kind, &args, &sig, errors)?;
    let ident = struct_ident(&args, f);
    let fn_ident = &f.sig.ident;
    Some(PassModel {
        kind,
        name: ident.to_string(),
        description: doc_text(&f.attrs),
        self_ty: syn::parse_quote!(#ident),
        struct_def: Some(StructDef {
            vis: f.vis.clone(),
            docs: struct_docs(kind, f, &ident),
            ident,
        }),
        callee: quote!(#fn_ident),
        method: false,
        sig,
        args,
    })
}

/// A parameterised pass: `#[function_pass(..)] impl ReplaceFunc { fn transform_function(&self, ..) }`.
pub fn from_impl(
    kind: Kind,
    attr: TokenStream,
    item: &ItemImpl,
    errors: &mut Errors,
) -> Option<PassModel> {
    let args = args::parse(attr, kind, true, errors);
    if let Some((_, path, _)) = &item.trait_ {
        errors.spanned(
            path,
            format!(
                "`#[{}]` goes on an inherent impl block (`impl MyPass {{ fn {}(&self, ..) }}`), not on a trait impl",
                kind.attribute(),
                kind.method()
            ),
        );
        return None;
    }
    if !item.generics.params.is_empty() {
        errors.spanned(
            &item.generics,
            "a pass type cannot be generic: the registry needs one concrete type; implement `FunctionPass<M>` / `ModulePass<M>` by hand for a generic pass",
        );
        return None;
    }
    let wanted = kind.method();
    let other = match kind {
        Kind::Function => Kind::Module,
        Kind::Module => Kind::Function,
    };
    let mut method = None;
    for impl_item in &item.items {
        let ImplItem::Fn(m) = impl_item else { continue };
        let name = m.sig.ident.to_string();
        if name == wanted {
            method = Some(m);
        } else if name == other.method() {
            errors.spanned(
                &m.sig.ident,
                format!(
                    "`{}` belongs to a {}: use `#[{}]` on this impl block, or name the method `{wanted}`",
                    other.method(),
                    other.noun(),
                    other.attribute()
                ),
            );
            return None;
        } else if closest(&name, &[wanted]).is_some() {
            errors.spanned(
                &m.sig.ident,
                format!("no pass method named `{name}`; did you mean `{wanted}`?"),
            );
            return None;
        }
    }
    let Some(method) = method else {
        errors.spanned(
            &item.self_ty,
            format!(
                "a {} impl block defines the transformation: `{}`",
                kind.noun(),
                kind.signature_example(true)
            ),
        );
        return None;
    };
    let sig = signature::read(&method.sig, kind, true, errors)?;
    require_ir(kind, &args, &sig, errors)?;
    let self_ty = (*item.self_ty).clone();
    let type_name = match &self_ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    };
    let name = match (&args.name, type_name) {
        (Some(name), _) => name.value(),
        (None, Some(name)) => name,
        (None, None) => {
            errors.spanned(
                &self_ty,
                "a pass type is a named struct or enum; or give the pass a `name = \"...\"`",
            );
            return None;
        }
    };
    let mut description = doc_text(&item.attrs);
    if description.is_empty() {
        description = doc_text(&method.attrs);
    }
    let method_ident = &method.sig.ident;
    Some(PassModel {
        kind,
        name,
        description,
        callee: quote!(<#self_ty>::#method_ident),
        self_ty,
        struct_def: None,
        method: true,
        sig,
        args,
    })
}

/// The struct of a pass defined on a function whose expansion failed, so that code naming the
/// pass does not add errors of its own.
pub fn placeholder_struct(kind: Kind, f: &ItemFn) -> TokenStream {
    let mut ignored = Errors::default();
    let args = args::parse(TokenStream::new(), kind, false, &mut ignored);
    let ident = struct_ident(&args, f);
    let vis = &f.vis;
    let docs = struct_docs(kind, f, &ident);
    quote! {
        #docs
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #ident;
    }
}

fn struct_ident(args: &PassArgs, f: &ItemFn) -> Ident {
    match &args.name {
        Some(name) => Ident::new(&name.value(), name.span()),
        None => format_ident!(
            "{}",
            upper_camel(&f.sig.ident.to_string()),
            span = f.sig.ident.span()
        ),
    }
}

fn struct_docs(kind: Kind, f: &ItemFn, ident: &Ident) -> TokenStream {
    let docs = doc_attrs(&f.attrs);
    if docs.is_empty() {
        let text = format!(
            "The `{ident}` {} (made by `#[{}]` from [`{}`]).",
            kind.noun(),
            kind.attribute(),
            f.sig.ident
        );
        quote!(#[doc = #text])
    } else {
        quote!(#(#docs)*)
    }
}

/// A function pass must say which IR it is for: by its module parameter or `ir = Module`
/// (the function type alone does not tell, e.g. `Arc<Vec<i64>>`).
fn require_ir(kind: Kind, args: &PassArgs, sig: &PassSignature, errors: &mut Errors) -> Option<()> {
    if kind == Kind::Module || args.ir.is_some() || sig.module.is_some() {
        return Some(());
    }
    let target = type_text(&sig.target);
    errors.spanned(
        &sig.target,
        format!(
            "cannot tell the IR from `{target}` alone: add the module parameter (`module: &Module`) or write `ir = Module` in the attribute"
        ),
    );
    None
}
