//! `#[function_analysis]` and `#[module_analysis]`: an analysis from a plain function.
//!
//! Parse the attribute and the function into a model, validate it with spans (every error
//! collected), then expand: the user's function as written, a unit struct named after it
//! (`op_count` → `OpCount`; `name = "..."` changes the analysis's name, not the struct's)
//! carrying its doc comment, the `Analysis` and
//! `FunctionAnalysis`/`ModuleAnalysis` impls, and the registration.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{FnArg, ItemFn, LitStr, ReturnType, Type};

use crate::args::{self, Arg};
use crate::docs::{doc_attrs, doc_text};
use crate::errors::{Errors, item_head};
use crate::names::{is_identifier, upper_camel};

/// Which macro.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Function,
    Module,
}

impl Kind {
    fn attribute(self) -> &'static str {
        match self {
            Kind::Function => "function_analysis",
            Kind::Module => "module_analysis",
        }
    }
}

/// The validated model.
struct Model {
    item: ItemFn,
    name: String,
    ir: TokenStream,
    input: Type,
    output: Type,
}

/// Expands one use of the attribute.
pub fn expand(kind: Kind, attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let item = match syn::parse2::<syn::Item>(item) {
        Ok(syn::Item::Fn(f)) => f,
        Ok(other) => {
            errors.spanned(
                item_head(&other),
                format!(
                    "`#[{}]` goes on a function: `fn name(input: &T) -> Output`",
                    kind.attribute()
                ),
            );
            let compile_errors = errors.to_compile_errors();
            return quote!(#other #compile_errors);
        }
        Err(e) => return e.to_compile_error(),
    };
    // The irpass path (`crate = "..."`) is read even when other arguments are wrong, so the
    // placeholder below names the right crate.
    let mut krate = args::default_crate_path();
    match model(kind, attr, item.clone(), &mut krate, &mut errors) {
        Some(m) if errors.len() == 0 => generate(kind, &m, &krate),
        _ => {
            // The user's function and the struct with its `Analysis` impl still exist, so the
            // one mistake is the one error (uses of the struct resolve).
            let compile_errors = errors.to_compile_errors();
            let vis = &item.vis;
            let ty_ident = struct_ident(&item);
            let name = ty_ident.to_string();
            let p = crate::args::private_path(&krate);
            quote! {
                #item
                #vis struct #ty_ident;
                impl #p::Analysis for #ty_ident {
                    const NAME: &'static str = #name;
                }
                #compile_errors
            }
        }
    }
}

/// The struct named after the function: `op_count` → `OpCount`.
fn struct_ident(item: &ItemFn) -> syn::Ident {
    let ident = &item.sig.ident;
    format_ident!("{}", upper_camel(&ident.to_string()), span = ident.span())
}

fn model(
    kind: Kind,
    attr: TokenStream,
    item: ItemFn,
    krate: &mut syn::Path,
    errors: &mut Errors,
) -> Option<Model> {
    let what = format!("`#[{}]`", kind.attribute());
    let known: &[&str] = match kind {
        Kind::Function => &["ir", "name", "crate"],
        Kind::Module => &["name", "crate"],
    };
    let mut ir: Option<Type> = None;
    let mut name: Option<LitStr> = None;
    if let Some(list) = args::parse_list(attr.clone(), errors) {
        for arg in args::known_args(list, known, &what, errors) {
            match args::key_name(&arg).as_str() {
                "ir" => ir = ir_type(&arg, errors),
                "name" => {
                    name = args::string_value(&arg, "name = \"OpCount\"", errors)
                        .filter(|n| check_name(n, errors));
                }
                "crate" => {
                    if let Some(p) = args::crate_path(&arg, errors) {
                        *krate = p;
                    }
                }
                _ => {}
            }
        }
    }
    let sig = &item.sig;
    if let Some(a) = &sig.asyncness {
        errors.spanned(a, format!("{what} computes synchronously: remove `async`"));
    }
    if !sig.generics.params.is_empty() {
        errors.spanned(
            &sig.generics,
            format!("{what} cannot be generic: the analysis is for one IR"),
        );
    }
    let params: Vec<&FnArg> = sig.inputs.iter().collect();
    let input = match params.as_slice() {
        [FnArg::Typed(t)] => match &*t.ty {
            Type::Reference(r) if r.mutability.is_none() => Some((*r.elem).clone()),
            other => {
                errors.spanned(
                    other,
                    format!(
                        "an analysis reads its input: take it by shared reference, `&{}`",
                        quote!(#other)
                    ),
                );
                None
            }
        },
        _ => {
            let example = match kind {
                Kind::Function => "`fn op_count(func: &Function) -> usize`",
                Kind::Module => "`fn call_graph(module: &Module) -> CallGraph`",
            };
            errors.at(
                sig.paren_token.span.join(),
                format!(
                    "{what} takes exactly one parameter, the {}: {example}",
                    match kind {
                        Kind::Function => "function",
                        Kind::Module => "module",
                    }
                ),
            );
            None
        }
    };
    let output = match &sig.output {
        ReturnType::Type(_, ty) => Some((**ty).clone()),
        ReturnType::Default => {
            errors.at(
                sig.paren_token.span.close(),
                format!("{what} returns its result: add `-> Output`"),
            );
            None
        }
    };
    let ir = match kind {
        Kind::Module => input.as_ref().map(|t| quote!(#t)),
        Kind::Function => match ir {
            Some(t) => Some(quote!(#t)),
            None => {
                if errors.len() == 0 {
                    errors.at(
                        Span::call_site(),
                        "`#[function_analysis]` needs the IR's module type, to know whose functions it reads: `#[function_analysis(ir = Module)]`",
                    );
                }
                None
            }
        },
    };
    let default_name = upper_camel(&sig.ident.to_string());
    Some(Model {
        name: name.map_or(default_name, |n| n.value()),
        ir: ir?,
        input: input?,
        output: output?,
        item,
    })
}

fn ir_type(arg: &Arg, errors: &mut Errors) -> Option<Type> {
    match &arg.value {
        Some(syn::Expr::Path(p)) => Some(Type::Path(syn::TypePath {
            qself: p.qself.clone(),
            path: p.path.clone(),
        })),
        Some(other) => {
            errors.spanned(other, "`ir` takes the IR's module type: `ir = Module`");
            None
        }
        None => {
            errors.at(
                arg.key.span(),
                "`ir` needs the IR's module type: `ir = Module`",
            );
            None
        }
    }
}

fn check_name(name: &LitStr, errors: &mut Errors) -> bool {
    let ok = is_identifier(&name.value());
    if !ok {
        errors.spanned(
            name,
            "an analysis name is an identifier (letters, digits, `_`), so that `preserves` can name it: `name = \"OpCount\"`",
        );
    }
    ok
}

fn generate(kind: Kind, m: &Model, krate: &syn::Path) -> TokenStream {
    let p = crate::args::private_path(&krate);
    let item = &m.item;
    let vis = &item.vis;
    let fn_ident = &item.sig.ident;
    let ty_ident = struct_ident(item);
    let name = &m.name;
    let docs = doc_attrs(&item.attrs);
    let description = doc_text(&item.attrs);
    let (ir, input, output) = (&m.ir, &m.input, &m.output);
    let input_span = input.span();
    let call = quote_spanned!(input_span=> #fn_ident(__irpass_input));
    let (trait_impl, kind_variant) = match kind {
        Kind::Function => (
            quote! {
                #[automatically_derived]
                impl #p::FunctionAnalysis<#ir> for #ty_ident {
                    type Output = #output;
                    fn compute(
                        &self,
                        __irpass_input: &<#ir as #p::IrModule>::Function,
                        _: &#ir,
                        _: &#p::PassContext,
                    ) -> #output {
                        #call
                    }
                }
            },
            quote!(Function),
        ),
        Kind::Module => (
            quote! {
                #[automatically_derived]
                impl #p::ModuleAnalysis<#ir> for #ty_ident {
                    type Output = #output;
                    fn compute(&self, __irpass_input: &#ir, _: &#p::PassContext) -> #output {
                        #call
                    }
                }
            },
            quote!(Module),
        ),
    };
    quote! {
        #item

        #(#docs)*
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #ty_ident;

        const _: () = {
            #[automatically_derived]
            impl #p::Analysis for #ty_ident {
                const NAME: &'static str = #name;
            }

            #trait_impl

            #p::inventory::submit! {
                #p::AnalysisRegistration::new::<#ir>(
                    #name,
                    #description,
                    #p::AnalysisKind::#kind_variant,
                    #p::location!(),
                )
            }
        };
    }
}
