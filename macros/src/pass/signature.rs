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
}

/// A pass signature: the parameters in the user's order, with the span of each type (so a
/// wrong type is reported on it), and the return type.
pub struct PassSignature {
    /// The function type (function pass) or module type (module pass).
    pub target: Type,
    /// The module type, when a function pass takes `module: &Module`.
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
    let fail = |errors: &mut Errors, span: Span, msg: String| errors.at(span, msg);
    let fail_on =
        |errors: &mut Errors, tokens: &dyn ToTokens, msg: String| errors.spanned(tokens, msg);
    let shape = kind.signature_example(method);
    if let Some(a) = &sig.asyncness {
        fail(
            errors,
            a.span,
            format!(
                "a pass cannot be `async`: passes run synchronously (remove `async`): `{shape}`"
            ),
        );
    }
    if let Some(u) = &sig.unsafety {
        fail(errors, u.span, "a pass cannot be an `unsafe fn`: the framework calls it as safe code; put the `unsafe` block inside".into());
    }
    if let Some(abi) = &sig.abi {
        fail_on(
            errors,
            abi,
            "a pass cannot have an `extern` ABI: remove it".into(),
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        let generics: &dyn ToTokens = if sig.generics.params.is_empty() {
            &sig.generics.where_clause
        } else {
            &sig.generics
        };
        fail_on(errors, generics, "a pass function cannot be generic: the registry needs one concrete IR type; write the concrete types, or implement `FunctionPass<M>` / `ModulePass<M>` by hand for a generic pass".into());
    }
    if let Some(v) = &sig.variadic {
        fail_on(
            errors,
            v,
            format!("a pass takes no variadic arguments: `{shape}`"),
        );
    }

    let mut inputs = sig.inputs.iter();
    if method {
        match inputs.next() {
            Some(FnArg::Receiver(r)) if r.reference.is_some() && r.mutability.is_none() => {}
            Some(FnArg::Receiver(r)) if r.mutability.is_some() && r.reference.is_some() => fail_on(
                errors,
                r,
                "a pass takes `&self`, not `&mut self`: passes are shared between threads and runs; keep mutable state behind a `Mutex` or atomics".into(),
            ),
            Some(other) => fail_on(errors, other, format!("a pass method takes `&self` first: `{shape}`")),
            None => fail(errors, sig.paren_token.span.join(), format!("a pass method takes `&self` first: `{shape}`")),
        }
    } else if let Some(FnArg::Receiver(r)) = sig.inputs.first() {
        fail_on(errors, r, "a pass function is a free function, not a method; for a pass with state, put the attribute on the `impl` block".into());
        inputs.next();
    }

    let mut target = None;
    let mut module = None;
    let mut params = Vec::new();
    let mut has_ctx = false;
    for input in inputs {
        let FnArg::Typed(pt) = input else {
            fail_on(errors, input, format!("unexpected `self` here: `{shape}`"));
            continue;
        };
        let ty = &*pt.ty;
        if target.is_none() {
            if let Type::Reference(r) = ty {
                fail_on(
                    errors,
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
                    fail_on(
                        errors,
                        ty,
                        format!(
                            "the module comes before the context: move this parameter before `ctx: &PassContext`; the signature is `{shape}`"
                        ),
                    );
                }
                module = Some((*r.elem).clone());
                params.push((Role::Module, ty.span()));
            }
            _ => fail_on(
                errors,
                ty,
                format!(
                    "not a parameter of a {}: after the {} come {}; the signature is `{shape}`",
                    kind.noun(),
                    kind.target_word(),
                    if kind == Kind::Function {
                        "optionally `module: &Module` and `ctx: &PassContext`, once each"
                    } else {
                        "optionally `ctx: &PassContext`"
                    }
                ),
            ),
        }
    }
    let Some(target) = target else {
        fail(
            errors,
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
            fail(
                errors,
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

/// Whether `ty` names `PassContext` (any path ending in it).
fn is_context(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.ident == "PassContext"))
}
