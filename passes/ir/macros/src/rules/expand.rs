//! The code of a checked rule set: a lazily compiled `static`, and a registered function pass
//! when `#[pass(...)]` asks for one. `ir` is the path of irpass-ir (`::irpass_ir` unless the
//! caller gave another).

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::model::{Replacement, RuleDef, RuleSetDef};
use super::validate::{Checked, Hole};

pub fn set(set: &RuleSetDef, checked: &Checked, ir: &TokenStream) -> TokenStream {
    let RuleSetDef {
        attrs, vis, name, ..
    } = set;
    let set_name = match &checked.pass {
        Some(p) => p.name.value(),
        None => name.to_string(),
    };
    let errors = &checked.errors;
    // With errors, an empty set beside them: the code naming the static still compiles, so
    // one mistake gives one error.
    let rules: Vec<TokenStream> = if errors.is_empty() {
        set.rules
            .iter()
            .zip(&checked.holes)
            .map(|(r, holes)| rule(r, holes, ir))
            .collect()
    } else {
        Vec::new()
    };
    let pass = checked.pass.as_ref().map(|p| {
        let docs = attrs.iter().filter(|a| a.path().is_ident("doc"));
        let (pname, level) = (&p.name, &p.opt_level);
        let f = format_ident!("__irpass_rules_pass_{}", name.to_string().to_lowercase());
        // The pass macro takes irpass's path as a string.
        let irpass = format!("{}::__private::irpass", ir.to_string().replace(' ', ""));
        quote! {
            #(#docs)*
            #[#ir::__private::irpass::function_pass(
                opt_level = #level,
                name = #pname,
                crate = #irpass
            )]
            #vis fn #f(
                func: #ir::Function,
                module: &#ir::Module,
            ) -> ::std::result::Result<#ir::Function, #ir::IrError> {
                #ir::pattern::run_pass(&#name, func, module)
            }
        }
    });
    quote! {
        #errors
        #(#attrs)*
        #vis static #name: #ir::pattern::RuleSet = #ir::pattern::RuleSet::lazy(#set_name, {
            fn __irpass_rules() -> ::std::vec::Vec<#ir::pattern::Rule> {
                ::std::vec![#(#rules),*]
            }
            __irpass_rules
        });
        #pass
    }
}

/// The bindings a guard or block sees: each hole (an `Option` when only one side of an
/// alternative captures it), the match's root, the match.
fn bindings(holes: &[Hole], ir: &TokenStream, names: &Names) -> TokenStream {
    let Names { m, root, .. } = names;
    let binds = holes.iter().map(|h| {
        let (ident, name) = (&h.ident, h.ident.to_string());
        if h.always {
            quote!(let #ident: #ir::ExprId = #m[#name];)
        } else {
            quote!(let #ident: ::std::option::Option<#ir::ExprId> = #m.get(#name);)
        }
    });
    quote! {
        #(
            #[allow(unused_variables)]
            #binds
        )*
        #[allow(unused_variables)]
        let #root: #ir::ExprId = #m.root;
    }
}

/// The names a guard or block sees besides the holes, with the hygiene of the user's rule (its
/// name's span): through a `macro_rules!` re-export, names made at the call site would not be
/// the ones the user's code refers to.
struct Names {
    cx: Ident,
    m: Ident,
    root: Ident,
}

fn rule(r: &RuleDef, holes: &[Hole], ir: &TokenStream) -> TokenStream {
    let span = r.name.span();
    let names = Names {
        cx: Ident::new("cx", span),
        m: Ident::new("m", span),
        root: Ident::new("root", span),
    };
    let Names { cx, m, .. } = &names;
    let name = r.name.to_string();
    let pattern = &r.pattern;
    let bind = bindings(holes, ir, &names);
    let base = match &r.replacement {
        Replacement::Template(t) => quote! {
            #ir::pattern::Rule::template(#name, #pattern, #t)
        },
        Replacement::Rust(block) => quote! {
            #ir::pattern::Rule::compute(
                #name,
                #pattern,
                |#[allow(unused_variables)] #cx: &mut #ir::pattern::RuleCx<'_>,
                 #[allow(unused_variables)] #m: &#ir::pattern::Match|
                 -> ::std::option::Option<#ir::ExprId> {
                    #bind
                    #block
                },
            )
        },
    };
    let guard = r.guard.as_ref().map(|g| {
        quote! {
            .when(
                |#[allow(unused_variables)] #cx: &mut #ir::pattern::RuleCx<'_>,
                 #[allow(unused_variables)] #m: &#ir::pattern::Match|
                 -> bool {
                    #bind
                    #g
                },
            )
        }
    });
    let once = r.once.then(|| quote!(.once()));
    let exclusive = r.exclusive.then(|| quote!(.exclusive()));
    let doc = doc_text(&r.docs).map(|d| quote!(.describe(#d)));
    quote!(#base #guard #once #exclusive #doc)
}

/// The text of doc comments, lines joined, leading spaces trimmed.
fn doc_text(attrs: &[syn::Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value().trim().to_string()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join(" "))
}
