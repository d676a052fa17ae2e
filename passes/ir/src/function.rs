//! A global function: its arena with signature and attributes, shared behind an `Arc`
//! (the copy-on-write unit a module holds), and the types inference found for it.

use std::ops::Deref;
use std::sync::{Arc, RwLock};

use crate::body::{ArenaFunction, BodyBuilder, ExprId, VarData};
use crate::infer::BodyTypes;
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
    pub fn with_code(&self, rewritten: Option<ArenaFunction>) -> Function {
        match rewritten {
            None => self.clone(),
            Some(code) => Function::new(code, self.ret_type.clone(), self.attrs.clone(), self.span),
        }
    }

    /// This function rewritten by `r` ([`ArenaFunction::rewrite`] on its code, then
    /// [`Function::with_code`]): itself when `r` changed nothing.
    ///
    /// ```
    /// use irpass_ir::{ExprId, Module, OldId, Rewrite, RewriteCx};
    /// /// `negative(negative(x))` is `x`.
    /// struct DoubleNegation;
    /// impl Rewrite for DoubleNegation {
    ///     fn rewrite(&mut self, cx: &mut RewriteCx<'_>, _old: OldId, new: ExprId) -> Option<ExprId> {
    ///         let b = cx.new.body();
    ///         let ([inner], _) = b.call_of(new, "negative")? else { return None };
    ///         let ([x], _) = b.call_of(*inner, "negative")? else { return None };
    ///         Some(*x)
    ///     }
    /// }
    /// let m = Module::parse("def @main(%a: float32) { exp(negative(negative(%a))) }").unwrap();
    /// let f = m.get("main").unwrap().rewritten(&mut DoubleNegation);
    /// assert!(Module::from_functions([("main", f)]).to_string().contains("exp(%a)"));
    /// ```
    pub fn rewritten<R: crate::Rewrite + ?Sized>(&self, r: &mut R) -> Function {
        self.with_code(self.code.rewrite(r))
    }

    /// This function with its result replaced by what `wrap` builds from it (in a copy of the
    /// body, which `wrap` extends; same signature, attributes and span).
    ///
    /// ```
    /// use irpass_ir::{Attrs, Module};
    /// let m = Module::parse("def @main(%x: float32) { exp(%x) }").unwrap();
    /// let f = m.get("main").unwrap();
    /// let g = f.wrap_result(|b, result| b.op("negative", &[result], Attrs::new())).unwrap();
    /// let m = Module::from_functions([("main", g)]);
    /// assert!(m.to_string().contains("negative(%0)"), "{m}");
    /// ```
    ///
    /// # Errors
    /// What `wrap` returns.
    pub fn wrap_result<E>(
        &self,
        wrap: impl FnOnce(&mut BodyBuilder, ExprId) -> Result<ExprId, E>,
    ) -> Result<Function, E> {
        let mut b = BodyBuilder::extending(self.code.body.clone());
        let root = wrap(&mut b, self.code.root)?;
        let code = ArenaFunction {
            body: b.finish(),
            params: self.code.params.clone(),
            root,
        };
        Ok(Function::new(
            code,
            self.ret_type.clone(),
            self.attrs.clone(),
            self.span,
        ))
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
        self.attrs.is_true(name)
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
    pub fn params(&self) -> impl Iterator<Item = &VarData> {
        self.code.params.iter().map(|&p| self.code.body.var(p))
    }

    /// Each parameter's type: its annotation, or what the last inference found for it.
    pub fn param_types(&self) -> Vec<Option<Type>> {
        let types = self.types();
        self.code
            .params
            .iter()
            .map(|&p| {
                let annotated = self.code.body.var(p).annotation.clone();
                annotated.or_else(|| types.as_ref().map(|t| t.var(p).clone()))
            })
            .collect()
    }

    pub(crate) fn set_types(&self, types: Arc<BodyTypes>) {
        *self.types.write().unwrap_or_else(|e| e.into_inner()) = Some(types);
    }

    /// Records `types` unless an inference on another thread recorded some first (both are
    /// the same types; keeping the first keeps results cached against it valid).
    pub(crate) fn set_types_if_untyped(&self, types: Arc<BodyTypes>) {
        let mut slot = self.types.write().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(types);
        }
    }
}
