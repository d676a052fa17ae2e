//! Reading a pass function's signature: which parameter is the function/module, the module,
//! the context; and rejecting signatures that are not a pass.

use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{FnArg, ReturnType, Signature, Type};

use super::Kind;
use crate::errors::Errors;
use crate::names::type_text;

/// What a parameter of a pass function receives.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The function (function pass) or the module (module pass), by value.
    Target,
    /// `&Module` (function passes).
    Module,
    /// `&PassContext`.
    Context,
    /// `&mut ModuleEdits<Module>` (function passes): edits of the module asked for while the
    /// function is transformed.
    Edits,
}

/// A pass signature: the parameters in the user's order, with the span of each type (so a
/// wrong type is reported on it), and the return type.
pub struct PassSignature {
    /// The function type (function pass) or module type (module pass).
    pub target: Type,
    /// The module type, when a function pass takes `module: &Module` (or names it in
    /// `edits: &mut ModuleEdits<Module>`).
    pub module: Option<Type>,
    /// The roles of the parameters, in order, each with its type's span.
    pub params: Vec<(Role, Span)>,
    /// The span of the return type.
    pub ret_span: Span,
}

/// Reads `sig` as the signature of a pass of `kind`. `method` is true for
/// `fn transform_function(&self, ..)` in an impl block.
pub fn read(
    sig: &Signature,
    kind: Kind,
    method: bool,
    errors: &mut Errors,
) -> Option<PassSignature> {
    let before = errors.len();
    let shape = kind.signature_example(method);
    check_qualifiers(sig, &shape, errors);
    let mut inputs = sig.inputs.iter();
    check_receiver(sig, method, &shape, &mut inputs, errors);
    let (target, module, params) = parameters(inputs, kind, &shape, errors);
    let Some(target) = target else {
        errors.at(
            sig.paren_token.span.join(),
            format!(
                "a {} takes the {} to transform: `{shape}`",
                kind.noun(),
                kind.target_word()
            ),
        );
        return None;
    };
    let ret_span = match &sig.output {
        ReturnType::Type(_, ty) => ty.span(),
        ReturnType::Default => {
            let t = type_text(&target);
            errors.at(
                sig.paren_token.span.close(),
                format!(
                    "a {} returns the {} it made: add `-> {t}` or `-> Result<{t}>`",
                    kind.noun(),
                    kind.target_word()
                ),
            );
            Span::call_site()
        }
    };
    (errors.len() == before).then_some(PassSignature {
        target,
        module,
        params,
        ret_span,
    })
}

/// What a pass function cannot be: `async`, `unsafe`, `extern`, generic, variadic.
fn check_qualifiers(sig: &Signature, shape: &str, errors: &mut Errors) {
    if let Some(a) = &sig.asyncness {
        errors.at(
            a.span,
            format!(
                "a pass cannot be `async`: passes run synchronously (remove `async`): `{shape}`"
            ),
        );
    }
    if let Some(u) = &sig.unsafety {
        errors.at(u.span, "a pass cannot be an `unsafe fn`: the framework calls it as safe code; put the `unsafe` block inside");
    }
    if let Some(abi) = &sig.abi {
        errors.spanned(abi, "a pass cannot have an `extern` ABI: remove it");
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        let generics: &dyn ToTokens = if sig.generics.params.is_empty() {
            &sig.generics.where_clause
        } else {
            &sig.generics
        };
        errors.spanned(generics, "a pass function cannot be generic: the registry needs one concrete IR type; write the concrete types, or implement `FunctionPass<M>` / `ModulePass<M>` by hand for a generic pass");
    }
    if let Some(v) = &sig.variadic {
        errors.spanned(v, format!("a pass takes no variadic arguments: `{shape}`"));
    }
}

/// A method takes `&self` first; a free function takes no `self` (skipped, when it does).
fn check_receiver<'a>(
    sig: &'a Signature,
    method: bool,
    shape: &str,
    inputs: &mut impl Iterator<Item = &'a FnArg>,
    errors: &mut Errors,
) {
    if method {
        match inputs.next() {
            Some(FnArg::Receiver(r)) if r.reference.is_some() && r.mutability.is_none() => {}
            Some(FnArg::Receiver(r)) if r.mutability.is_some() && r.reference.is_some() => errors.spanned(
                r,
                "a pass takes `&self`, not `&mut self`: passes are shared between threads and runs; keep mutable state behind a `Mutex` or atomics",
            ),
            Some(other) => errors.spanned(other, format!("a pass method takes `&self` first: `{shape}`")),
            None => errors.at(sig.paren_token.span.join(), format!("a pass method takes `&self` first: `{shape}`")),
        }
    } else if let Some(FnArg::Receiver(r)) = sig.inputs.first() {
        errors.spanned(r, "a pass function is a free function, not a method; for a pass with state, put the attribute on the `impl` block");
        inputs.next();
    }
}

/// The parameters after the receiver: the target first (by value), then for a function pass
/// `&Module`, then `&PassContext`, each at most once.
fn parameters<'a>(
    inputs: impl Iterator<Item = &'a FnArg>,
    kind: Kind,
    shape: &str,
    errors: &mut Errors,
) -> (Option<Type>, Option<Type>, Vec<(Role, Span)>) {
    let mut target = None;
    let mut module = None;
    let mut params = Vec::new();
    let mut has_ctx = false;
    let mut has_edits = false;
    // The IR named by `ModuleEdits<IR>`: what tells the IR when there is no module parameter.
    let mut edits_ir = None;
    for input in inputs {
        let FnArg::Typed(pt) = input else {
            errors.spanned(input, format!("unexpected `self` here: `{shape}`"));
            continue;
        };
        let ty = &*pt.ty;
        if target.is_none() {
            if let Type::Reference(r) = ty {
                errors.spanned(
                    ty,
                    format!(
                        "the {} is taken by value (the pass returns the new one): write `{}` instead of `{}`",
                        kind.target_word(),
                        type_text(&r.elem),
                        type_text(ty)
                    ),
                );
            }
            target = Some(ty.clone());
            params.push((Role::Target, ty.span()));
            continue;
        }
        match ty {
            Type::Reference(r)
                if r.mutability.is_some()
                    && kind == Kind::Function
                    && is_edits(&r.elem)
                    && !has_edits =>
            {
                has_edits = true;
                edits_ir = ir_argument(&r.elem);
                params.push((Role::Edits, ty.span()));
            }
            Type::Reference(r) if r.mutability.is_none() && is_context(&r.elem) && !has_ctx => {
                has_ctx = true;
                params.push((Role::Context, ty.span()));
            }
            Type::Reference(r)
                if r.mutability.is_none()
                    && kind == Kind::Function
                    && module.is_none()
                    && !is_context(&r.elem) =>
            {
                if has_ctx {
                    errors.spanned(
                        ty,
                        format!(
                            "the module comes before the context: move this parameter before `ctx: &PassContext`; the signature is `{shape}`"
                        ),
                    );
                }
                module = Some((*r.elem).clone());
                params.push((Role::Module, ty.span()));
            }
            _ => errors.spanned(
                ty,
                format!(
                    "not a parameter of a {}: after the {} come {}; the signature is `{shape}`",
                    kind.noun(),
                    kind.target_word(),
                    if kind == Kind::Function {
                        "optionally `module: &Module`, `ctx: &PassContext` and `edits: &mut ModuleEdits<Module>`, once each"
                    } else {
                        "optionally `ctx: &PassContext`"
                    }
                ),
            ),
        }
    }
    (target, module.or(edits_ir), params)
}

/// The one type argument of the path `ty` (`Wasm` in `ModuleEdits<Wasm>`).
fn ir_argument(ty: &Type) -> Option<Type> {
    let Type::Path(p) = ty else { return None };
    let syn::PathArguments::AngleBracketed(args) = &p.path.segments.last()?.arguments else {
        return None;
    };
    match args.args.first()? {
        syn::GenericArgument::Type(t) if args.args.len() == 1 => Some(t.clone()),
        _ => None,
    }
}

/// Whether `ty` names `ModuleEdits` (any path ending in it, with its IR argument).
fn is_edits(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.ident == "ModuleEdits"))
}

/// Whether `ty` names `PassContext` (any path ending in it).
fn is_context(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.ident == "PassContext"))
}
