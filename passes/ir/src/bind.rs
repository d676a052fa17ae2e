//! Binding parameters to values (TVM's `bind_params_by_name`): the named parameters of a
//! function become constants, so that constant folding and the foldings of batch norms and
//! scales can use their values (a model's weights, loaded after the model's text).

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::body::{ExprId, Node, VarId};
use crate::rewrite::{OldId, Rewrite, RewriteCx};
use crate::{ErrorKind, Function, IrError, Tensor, Type};

/// Replaces uses of the bound parameters with their constants.
struct Bind<'a> {
    values: &'a [(VarId, Arc<Tensor>)],
}

impl Rewrite for Bind<'_> {
    fn rewrite(&mut self, cx: &mut RewriteCx<'_>, _old: OldId, new: ExprId) -> Option<ExprId> {
        let Node::Var(v) = cx.new.body().node(new) else {
            return None;
        };
        let (_, t) = self.values.iter().find(|(p, _)| p == v)?;
        Some(cx.new.constant(t.clone()))
    }
}

impl Function {
    /// This function with the parameters named in `values` replaced by those constants and
    /// removed from its signature (the others keep their order). A name that is not a
    /// parameter, a name given twice, or a value whose dtype or shape disagrees with the
    /// parameter's annotation is an error, and nothing is bound.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use irpass_ir::{Module, Tensor};
    /// let m = Module::parse("def @main(%x: Tensor[(2), float32], %w: Tensor[(2), float32]) { multiply(%x, %w) }").unwrap();
    /// let w = Arc::new(Tensor::from_f32(&[2], vec![3.0, 4.0]).unwrap());
    /// let f = m.get("main").unwrap().bind_params([("w", w)]).unwrap();
    /// let text = Module::from_functions([("main", f)]).to_string();
    /// assert!(text.contains("def @main(%x: Tensor[(2), float32])"), "{text}");
    /// ```
    pub fn bind_params<'a>(
        &self,
        values: impl IntoIterator<Item = (&'a str, Arc<Tensor>)>,
    ) -> Result<Function, IrError> {
        let body = &self.code.body;
        let mut bound: Vec<(VarId, Arc<Tensor>)> = Vec::new();
        let mut seen = BTreeSet::new();
        for (name, value) in values {
            let Some(&p) = self
                .code
                .params
                .iter()
                .find(|&&p| &*body.var(p).name == name)
            else {
                let names: Vec<String> = self.params().map(|p| format!("%{}", p.name)).collect();
                return Err(IrError::new(
                    ErrorKind::WellFormed,
                    format!("no parameter `%{name}` to bind"),
                    self.span,
                )
                .with_note(format!("the parameters are {}", names.join(", "))));
            };
            if !seen.insert(name) {
                return Err(IrError::new(
                    ErrorKind::WellFormed,
                    format!("parameter `%{name}` bound twice"),
                    self.span,
                ));
            }
            let var = body.var(p);
            if let Some(Type::Tensor(want)) = &var.annotation {
                let got = value.tensor_type();
                let fits = want.dtype == got.dtype
                    && want.shape.len() == got.shape.len()
                    && want
                        .shape
                        .iter()
                        .zip(&got.shape)
                        .all(|(w, g)| w.value().is_none() || w == g);
                if !fits {
                    return Err(IrError::new(
                        ErrorKind::Type,
                        format!(
                            "parameter `%{name}` is a `{}`, not the `{}` given to bind",
                            Type::Tensor(want.clone()),
                            Type::from(got)
                        ),
                        var.span,
                    ));
                }
            }
            bound.push((p, value));
        }
        if bound.is_empty() {
            return Ok(self.clone());
        }
        let mut code = self
            .code
            .rewrite(&mut Bind { values: &bound })
            .unwrap_or_else(|| self.code.clone());
        // A parameter the body never uses is bound too: it leaves the signature.
        code.params.retain(|p| bound.iter().all(|(b, _)| b != p));
        Ok(self.with_code(Some(code)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Module;

    const TEXT: &str =
        "def @main(%x: Tensor[(2), float32], %w: Tensor[(?), float32]) { multiply(%x, %w) }";

    fn main() -> Function {
        Module::parse(TEXT).unwrap().get("main").unwrap().clone()
    }

    fn tensor(n: usize) -> Arc<Tensor> {
        Arc::new(Tensor::from_f32(&[n], vec![1.5; n]).unwrap())
    }

    #[test]
    fn bound_parameters_become_constants_and_leave_the_signature() {
        let f = main().bind_params([("w", tensor(2))]).unwrap();
        assert_eq!(
            f.params().map(|p| p.name.to_string()).collect::<Vec<_>>(),
            ["x"]
        );
        let m = Module::from_functions([("main", f)]);
        let x = crate::Value::tensor(Tensor::from_f32(&[2], vec![2.0, 4.0]).unwrap());
        let out = crate::eval::eval_function(&m, "main", vec![x]).unwrap();
        let want = Tensor::from_f32(&[2], vec![3.0, 6.0]).unwrap();
        assert_eq!(out.as_tensor().unwrap(), &want);
    }

    #[test]
    fn unknown_names_duplicates_and_wrong_types_are_errors() {
        let e = main().bind_params([("v", tensor(2))]).unwrap_err();
        assert!(e.message().contains("no parameter `%v`"), "{}", e.render());
        assert!(e.render().contains("%x, %w"), "{}", e.render());
        let e = main()
            .bind_params([("w", tensor(2)), ("w", tensor(2))])
            .unwrap_err();
        assert!(e.message().contains("bound twice"), "{}", e.render());
        let e = main().bind_params([("x", tensor(3))]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Type);
        assert!(
            e.message().contains("Tensor[(2), float32]"),
            "{}",
            e.render()
        );
    }

    #[test]
    fn binding_nothing_keeps_the_function() {
        let f = main();
        assert!(Function::ptr_eq(&f.bind_params([]).unwrap(), &f));
    }
}
