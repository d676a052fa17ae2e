//! A function of the arena IR: its arena with signature and attributes, shared behind an `Arc`
//! (the copy-on-write unit a module holds), and the types inference found for it.

use std::ops::Deref;
use std::sync::{Arc, RwLock};

use super::{ArenaFunction, BodyTypes, Rewritten};
use crate::{Attrs, Span, Type};

/// A global function: cloning is O(1), and two functions are the same exactly when they are
/// one `Arc` ([`Function::ptr_eq`]). A pass that changes a function makes a new one.
#[derive(Clone, Debug)]
pub struct Function(Arc<FunctionData>);

/// What a [`Function`] holds.
#[derive(Debug)]
pub struct FunctionData {
    /// The arena, parameters and result.
    pub code: ArenaFunction,
    /// The declared result type.
    pub ret_type: Option<Type>,
    /// Attributes (`Primitive`, `Inline`, ...).
    pub attrs: Attrs,
    /// Where it was written.
    pub span: Option<Span>,
    /// The types found by the last inference that typed this function, in the module it was
    /// typed in (its callees' types are recorded with them, so a module can tell whether they
    /// still hold).
    types: RwLock<Option<Arc<BodyTypes>>>,
}

impl Deref for Function {
    type Target = FunctionData;

    fn deref(&self) -> &FunctionData {
        &self.0
    }
}

impl Function {
    /// A function of `code`.
    pub fn new(
        code: ArenaFunction,
        ret_type: Option<Type>,
        attrs: Attrs,
        span: Option<Span>,
    ) -> Function {
        Function(Arc::new(FunctionData {
            code,
            ret_type,
            attrs,
            span,
            types: RwLock::new(None),
        }))
    }

    /// This function with its code replaced by a rewrite's result (same signature,
    /// attributes and span), or itself when there is none (the rewrite changed nothing).
    pub fn with_code(&self, rewritten: Option<Rewritten>) -> Function {
        match rewritten {
            None => self.clone(),
            Some(r) => Function::new(
                ArenaFunction::from(r),
                self.ret_type.clone(),
                self.attrs.clone(),
                self.span,
            ),
        }
    }

    /// Whether `a` and `b` are the same function (one `Arc`).
    pub fn ptr_eq(a: &Function, b: &Function) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }

    /// The address of the shared data: equal for the same function, a cache key.
    pub fn address(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }

    /// Whether attribute `name` is set to a true value (`Primitive=1`).
    pub fn has_attr(&self, name: &str) -> bool {
        self.attrs
            .get(name)
            .is_some_and(|v| v.as_bool().unwrap_or(true))
    }

    /// The types the last inference found, if one typed this function.
    pub fn types(&self) -> Option<Arc<BodyTypes>> {
        self.types.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The function's type (`fn (params) -> result`), if an inference typed this function.
    pub fn function_type(&self) -> Option<Type> {
        self.types().map(|t| t.function_type().clone())
    }

    /// The type of the body's result, if an inference typed this function.
    pub fn result_type(&self) -> Option<Type> {
        self.types().map(|t| t.of(self.code.root).clone())
    }

    /// The parameters' names and annotations, in order.
    pub fn params(&self) -> impl Iterator<Item = &super::VarData> {
        self.code.params.iter().map(|&p| self.code.body.var(p))
    }

    pub(super) fn set_types(&self, types: Arc<BodyTypes>) {
        *self.types.write().unwrap_or_else(|e| e.into_inner()) = Some(types);
    }
}
